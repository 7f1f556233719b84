package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/lancens/lancens/internal/testkit/apitest"
	"github.com/lancens/lancens/store"
)

// TestListRoutesHonourBodyFields posts the request model of each list
// route whose spec has no body (version/list, namespace and table lists,
// tags, branches) and checks that its fields take effect like the same
// query parameters, that a field given both ways must agree, and that the
// body is checked against the model.
func TestListRoutesHonourBodyFields(t *testing.T) {
	s := apitest.Start(t, apitest.Options{})
	ctx := t.Context()
	info, err := s.Client.DeclareTable(ctx, []string{"v"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for v := int64(1); v <= 5; v++ {
		path := fmt.Sprintf("%s/_versions/%d.manifest", info.Location, v)
		if _, _, err := s.DB.CommitVersion(ctx, []string{"v"}, store.VersionCommit{Version: v, StagedPath: path, ManifestPath: path}); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"a", "b", "c"} {
		if _, err := s.DB.CreateNamespace(ctx, []string{name}, store.ModeCreate, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := s.DB.CreateTag(ctx, []string{"v"}, name, "", 1); err != nil {
			t.Fatal(err)
		}
		if _, err := s.DB.CreateBranch(ctx, []string{"v"}, name, "", nil); err != nil {
			t.Fatal(err)
		}
	}
	createPeople(t, s.Client, "m")
	if _, err := s.Client.DeclareTable(ctx, []string{"d"}, nil); err != nil { // declared, no versions yet
		t.Fatal(err)
	}
	jsonCT := http.Header{"Content-Type": {"application/json"}}

	type listing struct {
		Versions   []struct{ Version int64 }
		Namespaces []string
		Tables     []string
		Tags       map[string]any
		Branches   map[string]any
		PageToken  *string `json:"page_token"`
	}
	for _, tc := range []struct {
		name, method, path, body string
		check                    func(l listing) bool
	}{
		{"VersionsNewestFirst", "POST", "/v1/table/v/version/list", `{"descending":true,"limit":1}`,
			func(l listing) bool { return len(l.Versions) == 1 && l.Versions[0].Version == 5 && l.PageToken != nil }},
		{"VersionsAsGet", "GET", "/v1/table/v/version/list", `{"descending":true,"limit":2}`,
			func(l listing) bool { return len(l.Versions) == 2 && l.Versions[0].Version == 5 }},
		{"VersionsQueryAgrees", "POST", "/v1/table/v/version/list?limit=2&descending=TRUE", `{"id":["v"],"limit":2,"descending":true}`,
			func(l listing) bool { return len(l.Versions) == 2 && l.Versions[0].Version == 5 }},
		{"VersionsNullFieldsAndCredentials", "POST", "/v1/table/v/version/list", `{"limit":null,"identity":{"api_key":"k"},"context":{"a":"b"}}`,
			func(l listing) bool { return len(l.Versions) == 5 }},
		{"VersionsNullBody", "POST", "/v1/table/v/version/list?limit=1&descending=true", `null`,
			func(l listing) bool { return len(l.Versions) == 1 && l.Versions[0].Version == 5 }},
		{"Namespaces", "POST", "/v1/namespace/%24/list", `{"limit":2}`,
			func(l listing) bool { return len(l.Namespaces) == 2 && l.PageToken != nil }},
		{"TablesWithDataOnly", "POST", "/v1/namespace/%24/table/list", `{"include_declared":false}`,
			func(l listing) bool { return len(l.Tables) == 2 && !slices.Contains(l.Tables, "d") }},
		{"AllTables", "POST", "/v1/table", `{"limit":1,"id":[]}`,
			func(l listing) bool { return len(l.Tables) == 1 && l.PageToken != nil }},
		{"Tags", "POST", "/v1/table/v/tags/list", `{"limit":1}`,
			func(l listing) bool { return len(l.Tags) == 1 && l.PageToken != nil }},
		{"Branches", "POST", "/v1/table/v/branches/list", `{"limit":2}`,
			func(l listing) bool { return len(l.Branches) == 2 && l.PageToken != nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, out, _ := s.Do(t, tc.method, tc.path, jsonCT, []byte(tc.body))
			var l listing
			if status != http.StatusOK || json.Unmarshal(out, &l) != nil || !tc.check(l) {
				t.Fatalf("got %d %s", status, out)
			}
		})
	}
	// The page token of a body-limited page continues in the next body.
	_, first, _ := s.Do(t, "POST", "/v1/table/v/version/list", jsonCT, []byte(`{"limit":3}`))
	var page struct {
		PageToken string `json:"page_token"`
	}
	if err := json.Unmarshal(first, &page); err != nil || page.PageToken == "" {
		t.Fatalf("first page %s", first)
	}
	next, _ := json.Marshal(map[string]any{"page_token": page.PageToken, "limit": 3})
	if status, out, _ := s.Do(t, "POST", "/v1/table/v/version/list", jsonCT, next); status != http.StatusOK || !strings.Contains(string(out), `"version":4`) || strings.Contains(string(out), `"version":3,`) {
		t.Fatalf("second page: %d %s", status, out)
	}

	for _, tc := range []struct{ name, path, body string }{
		{"QueryDisagrees", "/v1/table/v/version/list?limit=3", `{"limit":2}`},
		{"QueryDisagreesBool", "/v1/table/v/version/list?descending=false", `{"descending":true}`},
		{"OtherID", "/v1/table/v/version/list", `{"id":["w"]}`},
		{"WrongType", "/v1/table/v/version/list", `{"limit":"ten"}`},
		{"NotAnObject", "/v1/table/v/tags/list", `[1]`},
		{"TrailingGarbage", "/v1/namespace/%24/list", `{"limit":1} x`},
		{"AllTablesWithID", "/v1/table", `{"id":["a"]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, out, _ := s.Do(t, "POST", tc.path, jsonCT, []byte(tc.body))
			if status != http.StatusBadRequest || apitest.ErrorCode(out) != 13 {
				t.Fatalf("got %d %s, want 400 code 13", status, out)
			}
		})
	}
}
