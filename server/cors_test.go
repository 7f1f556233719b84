package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/lancens/lancens/internal/testkit/apitest"
	"github.com/lancens/lancens/server"
)

// TestCORS checks cross-origin requests: a preflight from an allowed origin
// is answered 204 without credentials and allows the headers clients send;
// answers to an allowed origin (errors included) let the script read the
// lancens headers; another origin gets no CORS headers at all.
func TestCORS(t *testing.T) {
	const allowed = "https://app.example"
	s := apitest.Start(t, apitest.Options{APIKeys: []string{"k"}, Tune: func(c *server.Config) { c.CORSOrigins = []string{allowed} }})
	preflight := func(origin string) http.Header {
		return http.Header{"Origin": {origin}, "Access-Control-Request-Method": {"POST"},
			"Access-Control-Request-Headers": {"x-api-key,content-type,x-lancedb-database"}}
	}

	status, _, h := s.Do(t, "OPTIONS", "/v1/namespace/a/create", preflight(allowed), nil)
	if status != http.StatusNoContent || h.Get("Access-Control-Allow-Origin") != allowed {
		t.Fatalf("preflight: %d, allow-origin %q", status, h.Get("Access-Control-Allow-Origin"))
	}
	allowHeaders := strings.ToLower(h.Get("Access-Control-Allow-Headers"))
	for _, want := range []string{"x-api-key", "authorization", "content-type", "x-request-id", "x-lancedb-database"} {
		if !strings.Contains(allowHeaders, want) {
			t.Errorf("preflight allows headers %q, not %s", allowHeaders, want)
		}
	}
	if !strings.Contains(h.Get("Access-Control-Allow-Methods"), "POST") {
		t.Errorf("preflight allows methods %q", h.Get("Access-Control-Allow-Methods"))
	}

	for _, tc := range []struct {
		name       string
		header     http.Header
		wantStatus int
	}{
		{"Allowed", http.Header{"Origin": {allowed}, "X-Api-Key": {"k"}}, http.StatusOK},
		{"AllowedUnauthenticated", http.Header{"Origin": {allowed}}, http.StatusUnauthorized},
	} {
		status, _, h := s.Do(t, "GET", "/v1/namespace/%24/list", tc.header, nil)
		if status != tc.wantStatus || h.Get("Access-Control-Allow-Origin") != allowed {
			t.Errorf("%s: %d, allow-origin %q", tc.name, status, h.Get("Access-Control-Allow-Origin"))
		}
		expose := strings.ToLower(h.Get("Access-Control-Expose-Headers"))
		for _, want := range []string{"x-request-id", "x-lancens-table-version", "x-lancens-deleted-rows"} {
			if !strings.Contains(expose, want) {
				t.Errorf("%s: exposed headers %q lack %s", tc.name, expose, want)
			}
		}
	}

	const other = "https://evil.example"
	status, _, h = s.Do(t, "OPTIONS", "/v1/namespace/a/create", preflight(other), nil)
	if status == http.StatusNoContent || h.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("preflight from another origin: %d, allow-origin %q", status, h.Get("Access-Control-Allow-Origin"))
	}
	if _, _, h := s.Do(t, "GET", "/v1/namespace/%24/list", http.Header{"Origin": {other}, "X-Api-Key": {"k"}}, nil); h.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("answer to another origin allows it: %q", h.Get("Access-Control-Allow-Origin"))
	}

	// Without --cors-origin there are no CORS headers.
	plain := apitest.Start(t, apitest.Options{})
	if _, _, h := plain.Do(t, "GET", "/v1/namespace/%24/list", http.Header{"Origin": {allowed}}, nil); h.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("CORS headers without CORS configured: %q", h.Get("Access-Control-Allow-Origin"))
	}
}
