package server_test

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancens/lancens/internal/apitest"
	"github.com/lancens/lancens/internal/arrowtest"
	"github.com/lancens/lancens/server"
)

// crossSiteRequest sends one request with the given Host (empty: the
// server's own address) and headers, and returns the status and body.
func crossSiteRequest(t *testing.T, s *apitest.Server, host, method, path string, header http.Header, body []byte) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, s.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	for k, v := range header {
		req.Header[k] = v
	}
	res, err := s.HTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, out
}

// TestContentTypes sends bodies of every kind a browser can send without a
// preflight, and the kinds the clients send, to a JSON route that writes,
// a JSON route that reads and an Arrow route. A route takes only its own
// media type (JSON parameters such as charset allowed); a body-less request
// needs none, and an Arrow body may come without one (Lance's generated
// Rust client sends it so). Every other body is 415 code 13 and changes
// nothing.
func TestContentTypes(t *testing.T) {
	s := apitest.Start(t, apitest.Options{})
	ctx := t.Context()
	if _, err := s.Client.CreateNamespace(ctx, []string{"ns"}, nil); err != nil {
		t.Fatal(err)
	}
	schema := arrowtest.Schema("id", arrow.PrimitiveTypes.Int64)
	if _, err := s.Client.CreateTable(ctx, []string{"ns", "t"}, schema, nil, nil); err != nil {
		t.Fatal(err)
	}
	arrowBody := arrowtest.Stream(t, schema, []arrow.RecordBatch{arrowtest.Record(t, schema, `[{"id":1}]`)})
	rows := func() int64 {
		n, err := s.Client.CountRows(ctx, []string{"ns", "t"}, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	created := 0
	type route struct {
		name, path string
		body       []byte
		// changed reports whether the request changed anything.
		changed func() bool
	}
	routes := []route{
		{"WriteJSON", "/v1/namespace/new%d/create", []byte(`{"properties":{"k":"v"}}`), func() bool {
			ok, err := s.Client.NamespaceExists(ctx, []string{"new" + strconv.Itoa(created)})
			if err != nil {
				t.Fatal(err)
			}
			return ok
		}},
		{"ReadJSON", "/v1/namespace/ns/describe", []byte(`{}`), func() bool { return false }},
		{"Arrow", "/v1/table/ns$t/insert", arrowBody, nil}, // changed: see below
	}
	const (
		jsonOnly  = "json"
		arrowOnly = "arrow"
		both      = "both"
		neither   = "neither"
	)
	for _, tc := range []struct {
		name, contentType string
		emptyBody         bool
		accepted          string
	}{
		{"JSON", "application/json", false, jsonOnly},
		{"JSONCharset", "application/json; charset=utf-8", false, jsonOnly},
		{"JSONUpperCase", "Application/JSON", false, jsonOnly},
		{"ArrowStream", "application/vnd.apache.arrow.stream", false, arrowOnly},
		{"ArrowFileType", "application/vnd.apache.arrow.file", false, arrowOnly},
		{"NoneWithBody", "", false, arrowOnly},
		{"NoneNoBody", "", true, jsonOnly}, // an empty Arrow body is a decoding error (400), not a media-type one
		{"TextPlain", "text/plain;charset=UTF-8", false, neither},
		{"TextPlainEmpty", "text/plain;charset=UTF-8", true, neither},
		{"Form", "application/x-www-form-urlencoded", false, neither},
		{"Multipart", "multipart/form-data; boundary=xyz", false, neither},
		{"OctetStream", "application/octet-stream", false, neither},
		{"JSONLookAlike", "application/jsonx", false, neither},
		{"Unreadable", "application/json; charset", false, neither},
	} {
		for _, rt := range routes {
			t.Run(tc.name+"/"+rt.name, func(t *testing.T) {
				isArrow := rt.name == "Arrow"
				want := tc.accepted == both || (tc.accepted == jsonOnly && !isArrow) || (tc.accepted == arrowOnly && isArrow)
				if tc.emptyBody && isArrow {
					return
				}
				created++
				path := rt.path
				if rt.name == "WriteJSON" {
					path = "/v1/namespace/new" + strconv.Itoa(created) + "/create"
				}
				body := rt.body
				if tc.emptyBody {
					body = nil
				}
				header := http.Header{}
				if tc.contentType != "" {
					header.Set("Content-Type", tc.contentType)
				}
				before := rows()
				status, out := crossSiteRequest(t, s, "", "POST", path, header, body)
				changed := rows() != before
				if rt.changed != nil {
					changed = rt.changed()
				}
				switch {
				case want && status != http.StatusOK:
					t.Fatalf("got %d %s, want 200", status, out)
				case want && rt.name != "ReadJSON" && !changed:
					t.Fatal("accepted, yet nothing changed")
				case !want && (status != http.StatusUnsupportedMediaType || apitest.ErrorCode(out) != 13):
					t.Fatalf("got %d %s, want 415 code 13", status, out)
				case !want && changed:
					t.Fatal("refused, yet the request changed something")
				}
			})
		}
	}
}

// TestForeignOrigins checks that a request a web page on another origin
// made (its Origin header says which) may read but not change anything,
// with or without keys; the server's own pages (the console) and the
// --cors-origin origins may.
func TestForeignOrigins(t *testing.T) {
	const corsOrigin = "https://app.example"
	for _, keyed := range []bool{false, true} {
		opts := apitest.Options{Tune: func(c *server.Config) { c.CORSOrigins = []string{corsOrigin} }}
		if keyed {
			opts.APIKeys = []string{"k"}
		}
		s := apitest.Start(t, opts)
		u, err := url.Parse(s.URL)
		if err != nil {
			t.Fatal(err)
		}
		for i, tc := range []struct {
			name, origin string
			allowed      bool
		}{
			{"NoOrigin", "", true},
			{"OwnOrigin", s.URL, true},
			{"OwnOriginLocalhost", "http://localhost:" + u.Port(), false}, // another name is another origin
			{"CORSOrigin", corsOrigin, true},
			{"OtherPort", "http://127.0.0.1:1", false},
			{"OtherHost", "https://evil.example", false},
			{"OtherScheme", "https://127.0.0.1:" + u.Port(), true}, // a proxy that ends TLS: same host and port
			{"Null", "null", false},
			{"Garbage", "%%%", false},
		} {
			name := map[bool]string{false: "Keyless/", true: "Keyed/"}[keyed] + tc.name
			t.Run(name, func(t *testing.T) {
				header := http.Header{"Content-Type": {"application/json"}}
				if keyed {
					header.Set("X-Api-Key", "k")
				}
				if tc.origin != "" {
					header.Set("Origin", tc.origin)
				}
				ns := "o" + strconv.Itoa(i)
				status, out := crossSiteRequest(t, s, "", "POST", "/v1/namespace/"+ns+"/create", header, []byte(`{}`))
				exists, err := s.Client.NamespaceExists(t.Context(), []string{ns})
				if err != nil {
					t.Fatal(err)
				}
				if tc.allowed {
					if status != http.StatusOK || !exists {
						t.Fatalf("create: %d %s, exists %v; want 200", status, out, exists)
					}
				} else if status != http.StatusForbidden || apitest.ErrorCode(out) != 15 || exists {
					t.Fatalf("create: %d %s, exists %v; want 403 code 15 and nothing created", status, out, exists)
				}
				// Reads are answered whatever the origin: the browser keeps
				// the answer from a page the CORS headers do not name.
				status, out = crossSiteRequest(t, s, "", "POST", "/v1/namespace/%24/list", header, []byte(`{}`))
				if status != http.StatusOK {
					t.Fatalf("list: %d %s, want 200", status, out)
				}
				// A body-less drop, as the SDK sends it, is a change too.
				delete(header, "Content-Type")
				if exists {
					status, out = crossSiteRequest(t, s, "", "POST", "/v1/namespace/"+ns+"/drop", header, nil)
					if tc.allowed != (status == http.StatusOK) {
						t.Fatalf("drop: %d %s", status, out)
					}
				}
			})
		}
	}

	s := apitest.Start(t, apitest.Options{Tune: func(c *server.Config) { c.CORSOrigins = []string{"*"} }})
	status, out := crossSiteRequest(t, s, "", "POST", "/v1/namespace/any/create",
		http.Header{"Origin": {"https://evil.example"}, "Content-Type": {"application/json"}}, []byte(`{}`))
	if status != http.StatusOK {
		t.Fatalf("--cors-origin '*': %d %s, want 200", status, out)
	}
}

// TestHostNames checks the defence against DNS rebinding: a server without
// credentials answers only requests for IP addresses, loopback names and
// the names it is given (Config.AllowedHosts); one with keys answers any.
func TestHostNames(t *testing.T) {
	keyless := apitest.Start(t, apitest.Options{Tune: func(c *server.Config) { c.AllowedHosts = []string{"Lancens.Internal"} }})
	keyed := apitest.Start(t, apitest.Options{APIKeys: []string{"k"}})
	for _, tc := range []struct {
		host            string
		keylessAnswered bool
	}{
		{"127.0.0.1:2333", true},
		{"127.0.0.2", true},
		{"[::1]:2333", true},
		{"10.1.2.3:2333", true}, // an address cannot be rebound
		{"localhost:2333", true},
		{"LOCALHOST.", true},
		{"app.localhost:2333", true},
		{"lancens.internal:2333", true},
		{"lancens.internal.", true},
		{"evil.example:2333", false},
		{"evil.example", false},
		{"localhost.evil.example", false},
		{"127.0.0.1.nip.io:2333", false},
		{"internal:2333", false},
	} {
		t.Run(tc.host, func(t *testing.T) {
			status, out := crossSiteRequest(t, keyless, tc.host, "GET", "/v1/namespace/%24/list", nil, nil)
			if tc.keylessAnswered && status != http.StatusOK {
				t.Fatalf("keyless: %d %s, want 200", status, out)
			}
			if !tc.keylessAnswered && (status != http.StatusForbidden || apitest.ErrorCode(out) != 15) {
				t.Fatalf("keyless: %d %s, want 403 code 15", status, out)
			}
			// Nor may it change anything.
			if !tc.keylessAnswered {
				status, out = crossSiteRequest(t, keyless, tc.host, "POST", "/v1/namespace/rebound/create",
					http.Header{"Content-Type": {"application/json"}}, []byte(`{}`))
				if status != http.StatusForbidden {
					t.Fatalf("keyless create: %d %s, want 403", status, out)
				}
				if ok, err := keyless.Client.NamespaceExists(t.Context(), []string{"rebound"}); err != nil || ok {
					t.Fatalf("keyless create through a foreign host: exists %v (%v)", ok, err)
				}
			}
			status, out = crossSiteRequest(t, keyed, tc.host, "GET", "/v1/namespace/%24/list", http.Header{"X-Api-Key": {"k"}}, nil)
			if status != http.StatusOK {
				t.Fatalf("keyed: %d %s, want 200", status, out)
			}
		})
	}
}
