package server_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/lancens/lancens/gen"
	"github.com/lancens/lancens/internal/apitest"
	"github.com/lancens/lancens/store"
)

var jsonHeader = http.Header{"Content-Type": {"application/json"}}

// listRoot returns the names under the root namespace, via raw HTTP.
func listRoot(t *testing.T, s *apitest.Server, header http.Header) []string {
	t.Helper()
	status, body, _ := s.Do(t, "GET", "/v1/namespace/%24/list", header, nil)
	if status != http.StatusOK {
		t.Fatalf("list root: %d %s", status, body)
	}
	var resp gen.ListNamespacesResponse
	if err := json.Unmarshal(body, &resp); err != nil {
		t.Fatal(err)
	}
	return resp.Namespaces
}

// TestBadRequests sends malformed requests and checks each gets a JSON
// ErrorResponse with the right code and leaves the catalog unchanged.
func TestBadRequests(t *testing.T) {
	s := apitest.Start(t, apitest.Options{})
	if _, err := s.Client.CreateNamespace(t.Context(), []string{"existing"}, nil); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, method, path, body string
		header                   http.Header
		wantStatus, wantCode     int
	}{
		{"MalformedJSON", "POST", "/v1/namespace/new/create", `{"properties":`, jsonHeader, 400, 13},
		{"NotAnObject", "POST", "/v1/namespace/new/create", `[1,2]`, jsonHeader, 400, 13},
		{"WrongFieldType", "POST", "/v1/namespace/new/create", `{"properties":{"a":1}}`, jsonHeader, 400, 13},
		{"WrongIDType", "POST", "/v1/namespace/new/create", `{"id":"new"}`, jsonHeader, 400, 13},
		{"UnknownMode", "POST", "/v1/namespace/new/create", `{"mode":"sometimes"}`, jsonHeader, 400, 13},
		{"BodyIDMismatch", "POST", "/v1/namespace/new/create", `{"id":["other"]}`, jsonHeader, 400, 13},
		{"MissingRequiredField", "POST", "/v1/table/t/register", `{"mode":"create"}`, jsonHeader, 400, 13},
		{"BadQueryInteger", "GET", "/v1/namespace/%24/list?limit=ten", "", nil, 400, 13},
		{"BadPageToken", "GET", "/v1/namespace/%24/list?page_token=z%00z", "", nil, 400, 13},
		{"ControlCharacterName", "POST", "/v1/namespace/a%01b/create", `{}`, jsonHeader, 400, 13},
		{"ParentMissing", "POST", "/v1/namespace/nope$new/create", `{}`, jsonHeader, 404, 1},
		{"AlreadyExists", "POST", "/v1/namespace/existing/create", `{}`, jsonHeader, 409, 2},
		{"DropRoot", "POST", "/v1/namespace/%24/drop", `{}`, jsonHeader, 400, 13},
		{"UnknownRoute", "POST", "/v1/nothing/here", `{}`, jsonHeader, 404, 0},
		{"UnknownTableOp", "POST", "/v1/table/t/prewarm_everything", `{}`, jsonHeader, 404, 0},
		{"WrongMethod", "DELETE", "/v1/namespace/new/create", "", nil, 405, 0},
		{"BodyTooLarge", "POST", "/v1/namespace/new/create", `{"properties":{"k":"` + strings.Repeat("x", 33<<20) + `"}}`, jsonHeader, 413, 13},
		{"TrailingGarbage", "POST", "/v1/namespace/new/create", `{} x`, jsonHeader, 400, 13},
		{"TwoValues", "POST", "/v1/namespace/new/create", `{"mode":"create"} {}`, jsonHeader, 400, 13},
		{"TrailingGarbageOnReadRoute", "POST", "/v1/table/t/stats", `{}]`, jsonHeader, 400, 13},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var body []byte
			if tc.body != "" {
				body = []byte(tc.body)
			}
			status, out, header := s.Do(t, tc.method, tc.path, tc.header, body)
			if status != tc.wantStatus || apitest.ErrorCode(out) != tc.wantCode {
				t.Fatalf("got %d code %d (%s), want %d code %d", status, apitest.ErrorCode(out), out, tc.wantStatus, tc.wantCode)
			}
			if !strings.HasPrefix(header.Get("Content-Type"), "application/json") {
				t.Fatalf("Content-Type %q", header.Get("Content-Type"))
			}
			if got := listRoot(t, s, nil); !slices.Equal(got, []string{"existing"}) {
				t.Fatalf("catalog changed: root lists %q", got)
			}
		})
	}
}

func TestAuthentication(t *testing.T) {
	s := apitest.Start(t, apitest.Options{APIKeys: []string{"k1", "k2"}})
	for _, tc := range []struct {
		name     string
		header   http.Header
		wantCode int // -1: success
	}{
		{"Missing", nil, 16},
		{"WrongKey", http.Header{"X-Api-Key": {"nope"}}, 16},
		{"WrongBearer", http.Header{"Authorization": {"Bearer nope"}}, 16},
		{"NotBearer", http.Header{"Authorization": {"Basic azE6"}}, 16},
		{"APIKey", http.Header{"X-Api-Key": {"k1"}}, -1},
		{"SecondAPIKey", http.Header{"X-Api-Key": {"k2"}}, -1},
		{"Bearer", http.Header{"Authorization": {"Bearer k2"}}, -1},
		{"LowercaseBearer", http.Header{"Authorization": {"bearer k1"}}, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			header := tc.header.Clone()
			if header == nil {
				header = http.Header{}
			}
			header.Set("Content-Type", "application/json")
			status, body, _ := s.Do(t, "POST", "/v1/namespace/authtest/create", header, []byte(`{"mode":"ExistOk"}`))
			if tc.wantCode < 0 {
				if status != http.StatusOK {
					t.Fatalf("got %d %s", status, body)
				}
				return
			}
			if status != http.StatusUnauthorized || apitest.ErrorCode(body) != tc.wantCode {
				t.Fatalf("got %d %s, want 401 code %d", status, body, tc.wantCode)
			}
			// Nothing was created by a refused request.
			if got := listRoot(t, s, http.Header{"X-Api-Key": {"k1"}}); slices.Contains(got, "authtest") && tc.name == "Missing" {
				t.Fatalf("refused request created a namespace")
			}
		})
	}
	// The client sends its key.
	if _, err := s.Client.DescribeNamespace(t.Context(), []string{"authtest"}); err != nil {
		t.Fatal(err)
	}
}

// TestRequestShapes covers the leniency the known clients need: trailing
// slashes, empty and null bodies, GET and POST on read routes, request ids.
func TestRequestShapes(t *testing.T) {
	s := apitest.Start(t, apitest.Options{})
	for _, tc := range []struct {
		name, method, path string
		header             http.Header
		body               []byte
		wantStatus         int
	}{
		{"EmptyBody", "POST", "/v1/namespace/a/create", nil, nil, 200},
		{"NullBody", "POST", "/v1/namespace/b/create", jsonHeader, []byte("null"), 200},
		{"WhitespaceBody", "POST", "/v1/namespace/c/create", jsonHeader, []byte(" \n"), 200},
		{"JSONWithCharset", "POST", "/v1/namespace/d/create", http.Header{"Content-Type": {"application/json; charset=utf-8"}}, []byte(`{"properties":{"x":"y"}}`), 200},
		{"TrailingSlash", "POST", "/v1/namespace/a/describe/", nil, nil, 200},
		{"TrailingSlashEscaped", "POST", "/v1/namespace/a%24/describe/", nil, nil, 200},
		{"PostOnGetRoute", "POST", "/v1/namespace/%24/list", jsonHeader, []byte(`{}`), 200},
		{"RawDollarRoot", "GET", "/v1/namespace/$/list", nil, nil, 200},
		{"UnknownFieldsIgnored", "POST", "/v1/namespace/a/describe", jsonHeader, []byte(`{"id":["a"],"future_field":{"x":1}}`), 200},
		{"BodyIDMatches", "POST", "/v1/namespace/a/describe", jsonHeader, []byte(`{"id":["a"]}`), 200},
		{"ExistsEmpty", "POST", "/v1/namespace/a/exists", nil, nil, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body, _ := s.Do(t, tc.method, tc.path, tc.header, tc.body)
			if status != tc.wantStatus {
				t.Fatalf("got %d %s, want %d", status, body, tc.wantStatus)
			}
		})
	}
	t.Run("RequestID", func(t *testing.T) {
		_, _, h := s.Do(t, "POST", "/v1/namespace/a/exists", http.Header{"X-Request-Id": {"abc-123"}}, nil)
		if got := h.Get("X-Request-Id"); got != "abc-123" {
			t.Fatalf("X-Request-Id %q, want the caller's", got)
		}
		_, _, h = s.Do(t, "POST", "/v1/namespace/a/exists", nil, nil)
		if h.Get("X-Request-Id") == "" {
			t.Fatal("no X-Request-Id generated")
		}
	})
}

// TestIdentifiers checks how {id} is split and decoded.
func TestIdentifiers(t *testing.T) {
	s := apitest.Start(t, apitest.Options{})
	for _, tc := range []struct {
		name, path, body string
		want             []string // the namespace that must now exist
	}{
		{"Nested", "/v1/namespace/p/create", ``, []string{"p"}},
		{"NestedChild", "/v1/namespace/p$q/create", ``, []string{"p", "q"}},
		{"EncodedDelimiter", "/v1/namespace/p%24r/create", ``, []string{"p", "r"}},
		{"EmptyPartsDropped", "/v1/namespace/$$p$$s$/create", ``, []string{"p", "s"}},
		{"OtherDelimiter", "/v1/namespace/p::t/create?delimiter=::", ``, []string{"p", "t"}},
		{"SlashDelimiter", "/v1/namespace/p%2Fu/create?delimiter=%2F", ``, []string{"p", "u"}},
		{"FormSpace", "/v1/namespace/with+space/create", ``, []string{"with space"}},
		{"EncodedPlus", "/v1/namespace/plus%2Bsign/create", ``, []string{"plus+sign"}},
		{"LiteralPlusWithBody", "/v1/namespace/a+b/create", `{"id":["a+b"]}`, []string{"a+b"}},
		{"FormSpaceWithBody", "/v1/namespace/c+d/create", `{"id":["c d"]}`, []string{"c d"}},
		{"PercentSpace", "/v1/namespace/e%20f/create", ``, []string{"e f"}},
		{"Unicode", "/v1/namespace/uni-%C3%BC/create", ``, []string{"uni-ü"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var body []byte
			if tc.body != "" {
				body = []byte(tc.body)
			}
			status, out, _ := s.Do(t, "POST", tc.path, jsonHeader, body)
			if status != http.StatusOK {
				t.Fatalf("create: %d %s", status, out)
			}
			ok, err := s.Client.NamespaceExists(t.Context(), tc.want)
			if err != nil || !ok {
				t.Fatalf("namespace %q does not exist (%v)", tc.want, err)
			}
		})
	}
}

// TestEveryOperationRouted checks that each of the spec's operations reaches
// a handler: none answers "no such route" or "method not allowed".
func TestEveryOperationRouted(t *testing.T) {
	s := apitest.Start(t, apitest.Options{})
	doc, err := gen.GetSpec()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			n++
			p := strings.NewReplacer("{id}", "t", "{index_name}", "i").Replace(path)
			status, body, _ := s.Do(t, method, p, nil, nil)
			if (status == 404 || status == 405) && apitest.ErrorCode(body) == int(store.CodeUnsupported) {
				t.Errorf("%s (%s %s) is not routed: %d %s", op.OperationID, method, path, status, body)
			}
		}
	}
	if n != 54 {
		t.Fatalf("the spec has %d operations, want 54", n)
	}
}
