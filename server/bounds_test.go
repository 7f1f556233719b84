package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancens/lancens/gen"
	"github.com/lancens/lancens/internal/testkit/apitest"
	"github.com/lancens/lancens/internal/testkit/arrowtest"
	"github.com/lancens/lancens/server"
	"github.com/lancens/lancens/store"
)

// docsTable creates table name with n rows, all of whose text matches
// "hello", and a full-text index on text.
func docsTable(t *testing.T, s *apitest.Server, name string, n int) {
	t.Helper()
	schema := arrowtest.Schema("id", arrow.PrimitiveTypes.Int64, "text", arrow.BinaryTypes.String,
		"vector", arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Float32))
	rows := make([]string, n)
	for i := range rows {
		rows[i] = fmt.Sprintf(`{"id":%d,"text":"hello number %d","vector":[%d,%d]}`, i, i, i%17, i%5)
	}
	rec := arrowtest.Record(t, schema, "["+strings.Join(rows, ",")+"]")
	if _, err := s.Client.CreateTable(t.Context(), []string{name}, schema, []arrow.RecordBatch{rec}, nil); err != nil {
		t.Fatal(err)
	}
	createIndex(t, s, name, `{"column":"text","index_type":"FTS"}`)
}

// vectorsJSON returns n query vectors of dimension 2 as a JSON array.
func vectorsJSON(n int) string {
	v := make([]string, n)
	for i := range v {
		v[i] = fmt.Sprintf("[%d,%d]", i%7, i%3)
	}
	return "[" + strings.Join(v, ",") + "]"
}

const unlimitedK = "9223372036854775807" // what the LanceDB SDK sends for "no limit"

// TestSearchRowBound checks that a search whose answer would exceed
// Config.MaxSearchRows (k, at most the rows searched, times the query
// vectors) is refused with 400 code 13, and that searches within it and
// plain scans are not.
func TestSearchRowBound(t *testing.T) {
	s := apitest.Start(t, apitest.Options{Tune: func(c *server.Config) { c.MaxSearchRows = 20 }})
	docsTable(t, s, "big", 30)
	docsTable(t, s, "small", 6)
	for _, tc := range []struct {
		name, table, path, body string
		wantCode                int // -1: 200
	}{
		{"VectorWithin", "big", "query", `{"vector":{"single_vector":[1,1]},"k":20}`, -1},
		{"VectorPast", "big", "query", `{"vector":{"single_vector":[1,1]},"k":21}`, 13},
		{"VectorUnlimitedK", "big", "query", `{"vector":{"single_vector":[1,1]},"k":` + unlimitedK + `}`, 13},
		{"VectorUnlimitedKSmallTable", "small", "query", `{"vector":{"single_vector":[1,1]},"k":` + unlimitedK + `}`, -1},
		{"MultiVectorWithin", "big", "query", `{"vector":{"multi_vector":` + vectorsJSON(4) + `},"k":5}`, -1},
		{"MultiVectorPast", "big", "query", `{"vector":{"multi_vector":` + vectorsJSON(5) + `},"k":5}`, 13},
		{"MultiVectorSmallTable", "small", "query", `{"vector":{"multi_vector":` + vectorsJSON(3) + `},"k":1000000000}`, -1},
		{"MultiVectorSmallTablePast", "small", "query", `{"vector":{"multi_vector":` + vectorsJSON(4) + `},"k":1000000000}`, 13},
		{"TextWithin", "big", "query", `{"vector":null,"full_text_query":{"string_query":{"query":"hello"}},"k":20}`, -1},
		{"TextUnlimitedK", "big", "query", `{"vector":null,"full_text_query":{"string_query":{"query":"hello"}},"k":` + unlimitedK + `}`, 13},
		{"TextFewMatches", "big", "query", `{"vector":null,"full_text_query":{"string_query":{"query":"7"}},"k":` + unlimitedK + `}`, -1},
		{"ScanNotBounded", "big", "query", `{"vector":null,"k":` + unlimitedK + `}`, -1},
		{"AnalyzePast", "big", "analyze_plan", `{"vector":{"multi_vector":` + vectorsJSON(5) + `},"k":5}`, 13},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, out, _ := s.Do(t, "POST", "/v1/table/"+tc.table+"/"+tc.path, jsonHeader, []byte(tc.body))
			if tc.wantCode < 0 {
				if status != http.StatusOK {
					t.Fatalf("got %d %s, want 200", status, out)
				}
				return
			}
			if status != http.StatusBadRequest || apitest.ErrorCode(out) != tc.wantCode {
				t.Fatalf("got %d %s, want 400 code %d", status, out, tc.wantCode)
			}
		})
	}
}

// TestAuditAmplification replays the audit's request against the default
// bounds: 500 query vectors with k = 1e9 on a table of 300 rows would have
// answered 150,000 rows from a few KB of request.
func TestAuditAmplification(t *testing.T) {
	s := apitest.Start(t, apitest.Options{})
	docsTable(t, s, "t", 300)
	body := `{"vector":{"multi_vector":` + vectorsJSON(500) + `},"k":1000000000}`
	status, out, _ := s.Do(t, "POST", "/v1/table/t/query", jsonHeader, []byte(body))
	if status != http.StatusBadRequest || apitest.ErrorCode(out) != int(store.CodeInvalidInput) {
		t.Fatalf("got %d %.300s, want 400 code 13", status, out)
	}
}

// TestPageSizeBound checks every listing: a limit above Config.MaxPageSize
// is 400 code 13, one at it is served, and a listing without a limit gets
// pages no larger than the bound, with a token to go on.
func TestPageSizeBound(t *testing.T) {
	const maxPage = 5
	s := apitest.Start(t, apitest.Options{Tune: func(c *server.Config) { c.MaxPageSize = maxPage }})
	ctx := t.Context()
	for i := range maxPage + 2 {
		if _, err := s.Client.CreateNamespace(ctx, []string{fmt.Sprintf("ns%d", i)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	docsTable(t, s, "t", 3)
	routes := []struct {
		name, method, path, body string // path takes the query string; body the limit as %d
	}{
		{"ListNamespaces", "GET", "/v1/namespace/%%24/list?limit=%d", ""},
		{"ListTables", "GET", "/v1/namespace/%%24/table/list?limit=%d", ""},
		{"ListAllTables", "GET", "/v1/table?limit=%d", ""},
		{"ListTableVersions", "POST", "/v1/table/t/version/list?limit=%d", ""},
		{"ListTableTags", "POST", "/v1/table/t/tags/list?limit=%d", ""},
		{"ListTableBranches", "POST", "/v1/table/t/branches/list?limit=%d", ""},
		{"ListTableIndices", "POST", "/v1/table/t/index/list", `{"limit":%d}`},
	}
	for _, r := range routes {
		for _, limit := range []int{maxPage, maxPage + 1, 1 << 40} {
			t.Run(fmt.Sprintf("%s/%d", r.name, limit), func(t *testing.T) {
				path, body := r.path, []byte(nil)
				if r.body == "" {
					path = fmt.Sprintf(r.path, limit)
				} else {
					body = fmt.Appendf(nil, r.body, limit)
				}
				status, out, _ := s.Do(t, r.method, path, jsonHeader, body)
				if limit <= maxPage {
					if status != http.StatusOK {
						t.Fatalf("got %d %s, want 200", status, out)
					}
					return
				}
				if status != http.StatusBadRequest || apitest.ErrorCode(out) != int(store.CodeInvalidInput) {
					t.Fatalf("got %d %s, want 400 code 13", status, out)
				}
			})
		}
	}
	t.Run("NoLimit", func(t *testing.T) {
		status, out, _ := s.Do(t, "GET", "/v1/namespace/%24/list", nil, nil)
		var resp gen.ListNamespacesResponse
		if status != http.StatusOK || json.Unmarshal(out, &resp) != nil {
			t.Fatalf("got %d %s", status, out)
		}
		if len(resp.Namespaces) != maxPage || resp.PageToken == nil {
			t.Fatalf("a listing without a limit answered %d names (token %v), want a page of %d and a token", len(resp.Namespaces), resp.PageToken, maxPage)
		}
	})
}
