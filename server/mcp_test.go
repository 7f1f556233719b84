package server_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lancens/lancens/auth"
	"github.com/lancens/lancens/client"
	"github.com/lancens/lancens/internal/testkit/apitest"
	"github.com/lancens/lancens/server"
	"github.com/lancens/lancens/server/mcptools"
	"github.com/lancens/lancens/store"
)

// Keys of the MCP tests: one of each role, and one scoped to namespace
// "other".
const (
	mcpAdminKey  = "mcp-admin"
	mcpReadKey   = "mcp-read"
	mcpWriteKey  = "mcp-write"
	mcpScopedKey = "mcp-scoped"
)

func startMCPServer(t *testing.T) *apitest.Server {
	t.Helper()
	s := apitest.Start(t, apitest.Options{APIKeys: []string{mcpAdminKey}, Tune: func(c *server.Config) {
		c.Auth = &auth.Config{Keys: []auth.KeyConfig{
			{Name: "reader", Key: mcpReadKey, Role: "read"},
			{Name: "writer", Key: mcpWriteKey, Role: "write"},
			{Name: "scoped", Key: mcpScopedKey, Role: "write", Namespaces: []string{"other"}},
		}}
	}})
	ctx := t.Context()
	if _, err := s.Client.CreateNamespace(ctx, []string{"docs"}, nil); err != nil {
		t.Fatal(err)
	}
	type doc struct {
		ID   int64     `arrow:"id"`
		Text string    `arrow:"text"`
		Vec  []float32 `arrow:"vec,fixed_size=2"`
	}
	notes := s.Client.Table("docs", "notes")
	if _, err := notes.Create(ctx, client.Structs([]doc{
		{1, "rivers and mountains", []float32{0, 0}},
		{2, "the sea at night", []float32{1, 1}},
		{3, "mountains in winter", []float32{5, 5}},
	}), nil); err != nil {
		t.Fatal(err)
	}
	if err := notes.CreateIndex(ctx, "text", client.FTS{}, nil); err != nil {
		t.Fatal(err)
	}
	if err := notes.WaitForIndex(ctx, "text_idx"); err != nil {
		t.Fatal(err)
	}
	return s
}

// keyTransport sends an API key with each request.
type keyTransport struct{ key string }

func (k keyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Api-Key", k.key)
	return http.DefaultTransport.RoundTrip(r)
}

// connectMCP connects the SDK's client to s's MCP endpoint with key.
func connectMCP(t *testing.T, s *apitest.Server, key string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "lancens-test", Version: "1"}, nil)
	session, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: s.URL + server.MCPPath,
		HTTPClient: &http.Client{Transport: keyTransport{key}}}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { session.Close() })
	return session
}

// call calls a tool and returns its structured content as JSON, with
// whether it is a tool error.
func call(t *testing.T, session *mcp.ClientSession, name string, args map[string]any) (map[string]any, bool) {
	t.Helper()
	res, err := session.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s: structured content %s is not an object", name, b)
	}
	if len(res.Content) == 0 {
		t.Errorf("%s answered no content", name)
	}
	return out, res.IsError
}

// ids returns the id column of rows.
func ids(t *testing.T, out map[string]any) []float64 {
	t.Helper()
	rows, ok := out["rows"].([]any)
	if !ok {
		t.Fatalf("no rows in %v", out)
	}
	var got []float64
	for _, r := range rows {
		got = append(got, r.(map[string]any)["id"].(float64))
	}
	return got
}

// TestMCPTools lists the tools with the SDK's client and calls each of
// them, with a key that may write.
func TestMCPTools(t *testing.T) {
	s := startMCPServer(t)
	session := connectMCP(t, s, mcpWriteKey)
	list, err := session.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
		if tool.Description == "" || tool.InputSchema == nil {
			t.Errorf("tool %s has no description or input schema", tool.Name)
		}
	}
	slices.Sort(names)
	want := slices.Sorted(func(yield func(string) bool) {
		for name := range mcptools.Operations {
			if !yield(name) {
				return
			}
		}
	})
	if !slices.Equal(names, want) {
		t.Fatalf("tools %v, want %v", names, want)
	}

	for _, tc := range []struct {
		tool  string
		args  map[string]any
		check func(t *testing.T, out map[string]any)
	}{
		{"list_namespaces", nil, func(t *testing.T, out map[string]any) {
			if got, _ := json.Marshal(out["namespaces"]); string(got) != `["docs"]` {
				t.Errorf("namespaces %s", got)
			}
		}},
		{"list_tables", map[string]any{"namespace": []string{"docs"}}, func(t *testing.T, out map[string]any) {
			if got, _ := json.Marshal(out["tables"]); string(got) != `["notes"]` {
				t.Errorf("tables %s", got)
			}
		}},
		{"describe_table", map[string]any{"table": []string{"docs", "notes"}}, func(t *testing.T, out map[string]any) {
			got, _ := json.Marshal(out["columns"])
			if !strings.Contains(string(got), `{"name":"vec","nullable":false,"type":"vector[2]"}`) || out["version"] != 1.0 {
				t.Errorf("described as %v", out)
			}
		}},
		{"query_table", map[string]any{"table": []string{"docs", "notes"}, "filter": "id >= 2", "columns": []string{"id", "text"}},
			func(t *testing.T, out map[string]any) {
				if got := ids(t, out); !slices.Equal(got, []float64{2, 3}) || out["count"] != 2.0 {
					t.Errorf("rows %v", out)
				}
			}},
		{"vector_search", map[string]any{"table": []string{"docs", "notes"}, "vector": []float32{4, 4}, "k": 2, "columns": []string{"id"}},
			func(t *testing.T, out map[string]any) {
				if got := ids(t, out); !slices.Equal(got, []float64{3, 2}) {
					t.Errorf("nearest %v", out)
				}
			}},
		{"full_text_search", map[string]any{"table": []string{"docs", "notes"}, "query": "mountains", "filter": "id > 1", "columns": []string{"id"}},
			func(t *testing.T, out map[string]any) {
				if got := ids(t, out); !slices.Equal(got, []float64{3}) {
					t.Errorf("matches %v", out)
				}
			}},
		{"insert_rows", map[string]any{"table": []string{"docs", "notes"},
			"rows": []map[string]any{{"id": 4, "text": "a new note", "vec": []float32{2, 2}}}},
			func(t *testing.T, out map[string]any) {
				if out["inserted"] != 1.0 || out["version"] != 2.0 {
					t.Errorf("inserted %v", out)
				}
				if n, err := s.Client.CountRows(t.Context(), []string{"docs", "notes"}, "", nil); err != nil || n != 4 {
					t.Errorf("the table has %d rows (%v) after the insert", n, err)
				}
			}},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			// The tool performs its operation through the API: the
			// operation's request count goes up.
			op := map[string]string{"route": mcptools.Operations[tc.tool], "code": "200"}
			before := max(sample(scrape(t, s, http.Header{"X-Api-Key": {mcpAdminKey}}), "lancens_http_requests_total", op), 0)
			out, isError := call(t, session, tc.tool, tc.args)
			if isError {
				t.Fatalf("%s failed: %v", tc.tool, out)
			}
			tc.check(t, out)
			if after := sample(scrape(t, s, http.Header{"X-Api-Key": {mcpAdminKey}}), "lancens_http_requests_total", op); after != before+1 {
				t.Errorf("%s answered %v requests, %v before the call: want one more", op["route"], after, before)
			}
		})
	}
}

// TestMCPAccess checks that the tools are allowed exactly as the
// operations they perform: a read key may read and is refused insert with
// PermissionDenied (15); a key scoped to another namespace is refused the
// table's reads and sees no namespace of the root listing; bad arguments
// and missing tables answer their codes; a request without a valid key is
// refused before the MCP server reads it, as the API's are.
func TestMCPAccess(t *testing.T) {
	s := startMCPServer(t)
	table := []string{"docs", "notes"}
	read := connectMCP(t, s, mcpReadKey)
	scoped := connectMCP(t, s, mcpScopedKey)
	for _, tc := range []struct {
		name     string
		session  *mcp.ClientSession
		tool     string
		args     map[string]any
		wantCode store.Code // -1: succeeds
		wantOp   string
	}{
		{"read key queries", read, "query_table", map[string]any{"table": table}, -1, ""},
		{"read key inserts", read, "insert_rows", map[string]any{"table": table, "rows": []map[string]any{{"id": 9, "text": "x", "vec": []float32{0, 0}}}},
			store.CodePermissionDenied, "InsertIntoTable"},
		{"scoped key describes", scoped, "describe_table", map[string]any{"table": table}, store.CodePermissionDenied, "DescribeTable"},
		{"scoped key searches", scoped, "vector_search", map[string]any{"table": table, "vector": []float32{0, 0}}, store.CodePermissionDenied, "QueryTable"},
		{"missing table", read, "query_table", map[string]any{"table": []string{"docs", "nope"}}, store.CodeTableNotFound, "QueryTable"},
		{"bad filter", read, "query_table", map[string]any{"table": table, "filter": "id >"}, store.CodeInvalidInput, "QueryTable"},
		{"unknown column", read, "query_table", map[string]any{"table": table, "columns": []string{"nope"}}, store.CodeTableColumnNotFound, "QueryTable"},
		{"no vector", read, "vector_search", map[string]any{"table": table, "vector": []float32{}}, store.CodeInvalidInput, "QueryTable"},
		{"no table", read, "describe_table", map[string]any{"table": []string{}}, store.CodeInvalidInput, "DescribeTable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, isError := call(t, tc.session, tc.tool, tc.args)
			if tc.wantCode < 0 {
				if isError {
					t.Fatalf("refused: %v", out)
				}
				return
			}
			if !isError || out["code"] != float64(tc.wantCode) || out["operation"] != tc.wantOp {
				t.Errorf("answered %v (error %v), want a tool error of %s with code %d", out, isError, tc.wantOp, tc.wantCode)
			}
		})
	}
	if out, _ := call(t, scoped, "list_namespaces", nil); len(out["namespaces"].([]any)) != 0 {
		t.Errorf("the scoped key lists %v", out["namespaces"])
	}
	if n, err := s.Client.CountRows(t.Context(), table, "", nil); err != nil || n != 3 {
		t.Errorf("the table has %d rows (%v) after refused inserts", n, err)
	}

	// Outside JSON-RPC: the API's authentication and ErrorResponses.
	initialize := []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`)
	jsonHeaders := func(key string) http.Header {
		h := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
		if key != "" {
			h.Set("X-Api-Key", key)
		}
		return h
	}
	for _, tc := range []struct {
		name       string
		method     string
		header     http.Header
		wantStatus int
		wantCode   store.Code
	}{
		{"no key", "POST", jsonHeaders(""), http.StatusUnauthorized, store.CodeUnauthenticated},
		{"wrong key", "POST", jsonHeaders("nope"), http.StatusUnauthorized, store.CodeUnauthenticated},
		{"GET", "GET", jsonHeaders(mcpReadKey), http.StatusMethodNotAllowed, store.CodeUnsupported},
		{"not JSON", "POST", http.Header{"Content-Type": {"text/plain"}, "Accept": {"application/json, text/event-stream"}, "X-Api-Key": {mcpReadKey}},
			http.StatusUnsupportedMediaType, store.CodeInvalidInput},
		{"no event stream in Accept", "POST", http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json"}, "X-Api-Key": {mcpReadKey}},
			http.StatusBadRequest, store.CodeInvalidInput},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var body []byte
			if tc.method == "POST" {
				body = initialize
			}
			status, answer, _ := s.Do(t, tc.method, server.MCPPath, tc.header, body)
			if status != tc.wantStatus || apitest.ErrorCode(answer) != int(tc.wantCode) {
				t.Errorf("%d %s, want %d with code %d", status, answer, tc.wantStatus, tc.wantCode)
			}
		})
	}
}
