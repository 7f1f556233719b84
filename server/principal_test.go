package server_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/lancens/lancens/internal/testkit/apitest"
	"github.com/lancens/lancens/server"
	"github.com/lancens/lancens/store"
)

// TestPrincipalEndpoint checks GET /auth/principal: the principal behind
// the request's credentials, its role and scopes, and whether the server
// needs credentials; the same authentication as the API (401 code 16
// without or with a wrong key); the anonymous admin on a server without
// keys.
func TestPrincipalEndpoint(t *testing.T) {
	open := apitest.Start(t, apitest.Options{})
	secured := apitest.Start(t, apitest.Options{Tune: func(c *server.Config) { c.Auth = accessConfig() }})
	for _, tc := range []struct {
		name   string
		s      *apitest.Server
		key    string
		status int
		want   string // the answer, or the error code
	}{
		{"OpenServer", open, "", 200, `{"principal":"anonymous","role":"admin","scoped":false,"scopes":[],"credentials_required":false}`},
		{"OpenServerAnyKey", open, "whatever", 200, `{"principal":"anonymous","role":"admin","scoped":false,"scopes":[],"credentials_required":false}`},
		{"Reader", secured, "key-read", 200, `{"principal":"read","role":"read","scoped":false,"scopes":[],"credentials_required":true}`},
		{"ScopedWriter", secured, "key-write-alpha", 200, `{"principal":"write-alpha","role":"write","scoped":true,"scopes":["alpha"],"credentials_required":true}`},
		{"NoKey", secured, "", 401, "16"},
		{"WrongKey", secured, "nope", 401, "16"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			if tc.key != "" {
				h.Set("x-api-key", tc.key)
			}
			status, body, hdr := tc.s.Do(t, http.MethodGet, server.PrincipalPath, h, nil)
			if status != tc.status {
				t.Fatalf("%d %s, want %d", status, body, tc.status)
			}
			if status != 200 {
				if got := apitest.ErrorCode(body); got != int(store.CodeUnauthenticated) {
					t.Fatalf("code %d, want 16: %s", got, body)
				}
				return
			}
			var v map[string]any
			if err := json.Unmarshal(body, &v); err != nil || hdr.Get("Content-Type") != "application/json" {
				t.Fatalf("not JSON: %s %v", hdr.Get("Content-Type"), err)
			}
			if string(body[:len(body)-1]) != tc.want {
				t.Fatalf("answer %s, want %s", body, tc.want)
			}
		})
	}
}
