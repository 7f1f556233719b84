package server_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/lancens/lancens/auth"
	"github.com/lancens/lancens/gen"
	"github.com/lancens/lancens/internal/testkit/authtest"
	"github.com/lancens/lancens/server"
	"github.com/lancens/lancens/store"
)

// contentHash hashes every row of every table of the database file, and
// the warehouse's files: equal hashes, equal state.
func (e *accessEnv) contentHash(t *testing.T) string {
	t.Helper()
	e.state(t) // waits for background jobs
	ctx := t.Context()
	rows, err := e.conn.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, name)
	}
	rows.Close()
	h := sha256.New()
	for _, name := range tables {
		rows, err := e.conn.QueryContext(ctx, `SELECT * FROM "`+strings.ReplaceAll(name, `"`, `""`)+`"`)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		var lines []string
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			lines = append(lines, fmt.Sprintf("%q", vals))
		}
		rows.Close()
		sort.Strings(lines)
		fmt.Fprintf(h, "%s %d\n%s\n", name, len(lines), strings.Join(lines, "\n"))
	}
	fmt.Fprintln(h, e.state(t).files)
	return hex.EncodeToString(h.Sum(nil))
}

// beyondSpecRequests build a valid request (in namespace alpha) for each
// route the server serves beyond the spec, so that
// TestReadOnlyKeyChangesNothing covers every route.
var beyondSpecRequests = map[string]func(t *testing.T, e *accessEnv) *http.Request{
	"POST /v1/table/:id/index/:index_name/prewarm": func(t *testing.T, e *accessEnv) *http.Request {
		if status, code, body := remoteDo(t, e, http.MethodPost, "/v1/table/alpha$ro$docs/create/", "", setupKey, arrowBody(t)); status != 200 {
			t.Fatalf("create: %d code %d %s", status, code, body)
		}
		status, code, body := remoteDo(t, e, http.MethodPost, "/v1/table/alpha$ro$docs/create_index/", "", setupKey, []byte(`{"column":"id","index_type":"BTREE"}`))
		if status != 200 {
			t.Fatalf("create_index: %d code %d %s", status, code, body)
		}
		e.state(t) // the index is built
		req, err := http.NewRequest(http.MethodPost, e.s.URL+"/v1/table/alpha$ro$docs/index/id_idx/prewarm", nil)
		if err != nil {
			t.Fatal(err)
		}
		return req
	},
	"POST /v1/table/:id/optimize": func(t *testing.T, e *accessEnv) *http.Request {
		if status, code, body := remoteDo(t, e, http.MethodPost, "/v1/table/alpha$ro$opt/create/", "", setupKey, arrowBody(t)); status != 200 {
			t.Fatalf("create: %d code %d %s", status, code, body)
		}
		req, err := http.NewRequest(http.MethodPost, e.s.URL+"/v1/table/alpha$ro$opt/optimize", strings.NewReader(`{"older_than_seconds": 0}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.GetBody = func() (io.ReadCloser, error) {
			return io.NopCloser(strings.NewReader(`{"older_than_seconds": 0}`)), nil
		}
		return req
	},
	// The MCP endpoint answers a read key's insert with a tool error
	// (the API refused the insert it performs): it must change nothing.
	"POST " + server.MCPPath: func(t *testing.T, e *accessEnv) *http.Request {
		if status, code, body := remoteDo(t, e, http.MethodPost, "/v1/table/alpha$ro$mcp/create/", "", setupKey, arrowBody(t)); status != 200 {
			t.Fatalf("create: %d code %d %s", status, code, body)
		}
		call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"insert_rows",` +
			`"arguments":{"table":["alpha","ro","mcp"],"rows":[{"id":1,"text":"x","vector":[0,0]}]}}}`
		req, err := http.NewRequest(http.MethodPost, e.s.URL+server.MCPPath, strings.NewReader(call))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(call)), nil }
		return req
	},
	"GET /metrics": func(t *testing.T, e *accessEnv) *http.Request {
		req, err := http.NewRequest(http.MethodGet, e.s.URL+"/metrics", nil)
		if err != nil {
			t.Fatal(err)
		}
		return req
	},
	"GET /auth/principal": func(t *testing.T, e *accessEnv) *http.Request {
		req, err := http.NewRequest(http.MethodGet, e.s.URL+"/auth/principal", nil)
		if err != nil {
			t.Fatal(err)
		}
		return req
	},
}

// TestReadOnlyKeyChangesNothing sends a valid request to every route the
// server serves (each operation of the spec, batch commits and transaction
// changes included, and the routes beyond it) with a read-only key, and
// compares every row of the database and the warehouse's files before and
// after: nothing changed. Writes are refused with 403 code 15, reads
// answer.
func TestReadOnlyKeyChangesNothing(t *testing.T) {
	e := startAccessEnv(t, nil)
	doc, err := gen.GetSpec()
	if err != nil {
		t.Fatal(err)
	}
	opOfRoute := map[string]string{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			opOfRoute[method+" "+strings.NewReplacer("{", ":", "}", "").Replace(path)] = op.OperationID
		}
	}
	type routeRequest struct {
		route, op string // op: the spec's operation, empty beyond the spec
		req       *http.Request
	}
	var reqs []routeRequest
	for _, route := range e.s.API.Routes() {
		if op, ok := opOfRoute[route]; ok {
			reqs = append(reqs, routeRequest{route, op, e.request(t, op, "alpha", "ro")})
		} else if build, ok := beyondSpecRequests[route]; ok {
			reqs = append(reqs, routeRequest{route, "", build(t, e)})
		} else {
			t.Errorf("route %s has no request in this test", route)
		}
	}
	if n := len(specOperations(t)); len(reqs) < n {
		t.Fatalf("%d routes for %d operations", len(reqs), n)
	}
	before := e.contentHash(t)
	for _, key := range []string{"key-read", "key-read-alpha"} {
		for _, r := range reqs {
			status, code := e.send(t, r.req, key)
			switch {
			case r.op == "":
				// Beyond the spec: reads answer, unless they cover every
				// namespace (refused to a scoped key); writes are refused.
				if status >= 300 && (status != http.StatusForbidden || code != int(store.CodePermissionDenied)) {
					t.Errorf("%s with %s: got %d code %d", r.route, key, status, code)
				}
			case readOperations[r.op] && status >= 300:
				t.Errorf("%s with %s: a read failed: %d code %d", r.op, key, status, code)
			case !readOperations[r.op] && (status != http.StatusForbidden || code != int(store.CodePermissionDenied)):
				t.Errorf("%s with %s: want 403 code 15, got %d code %d", r.op, key, status, code)
			}
		}
	}
	if after := e.contentHash(t); after != before {
		t.Fatal("read-only keys changed the database or the warehouse")
	}
}

// post sends a JSON request with key and returns the status, the code of
// an error answer (-1 for none) and the body.
func post(t *testing.T, e *accessEnv, path, key string, body any) (int, int, []byte) {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	status, out, _ := e.s.Do(t, http.MethodPost, path, http.Header{"X-Api-Key": {key}, "Content-Type": {"application/json"}}, b)
	code := -1
	if status >= 300 {
		code = apitestCode(out)
	}
	return status, code, out
}

func apitestCode(body []byte) int {
	var er struct{ Code *int }
	if json.Unmarshal(body, &er) != nil || er.Code == nil {
		return -1
	}
	return *er.Code
}

// declare declares table id at a location of its own (as the store) and
// returns the transaction id of the declaration.
func declare(t *testing.T, e *accessEnv, id ...string) string {
	t.Helper()
	_, txID, err := e.s.DB.DeclareTable(t.Context(), id, store.TableDeclaration{Location: "s3://lancens-access/" + strings.Join(id, "/")})
	if err != nil {
		t.Fatal(err)
	}
	return txID
}

// TestBatchesAllOrNothing: a batch whose tables are all inside the key's
// scope is applied; one that names a single table outside it is refused
// whole (403 code 15) and changes nothing.
func TestBatchesAllOrNothing(t *testing.T) {
	e := startAccessEnv(t, nil)
	declare(t, e, "alpha", "a")
	declare(t, e, "beta", "b")
	commit := func(id []string, v int) map[string]any {
		return map[string]any{"id": id, "version": v, "manifest_path": "s3://lancens-access/" + strings.Join(id, "/") + fmt.Sprintf("/_versions/%d.manifest", v)}
	}
	for _, tc := range []struct {
		name, path, key string
		body            any
		status, code    int
	}{
		{"CreateVersionsOutside", "/v1/table/version/batch-create", "key-write-alpha",
			map[string]any{"entries": []any{commit([]string{"alpha", "a"}, 1), commit([]string{"beta", "b"}, 1)}}, 403, 15},
		{"CommitOutside", "/v1/table/batch-commit", "key-write-alpha",
			map[string]any{"operations": []any{
				map[string]any{"create_table_version": commit([]string{"alpha", "a"}, 1)},
				map[string]any{"deregister_table": map[string]any{"id": []string{"beta", "b"}}},
			}}, 403, 15},
		{"DeclareOutside", "/v1/table/batch-commit", "key-write-alpha",
			map[string]any{"operations": []any{
				map[string]any{"declare_table": map[string]any{"id": []string{"beta", "new"}, "location": "s3://lancens-access/beta/new"}},
			}}, 403, 15},
		{"ReadOnlyKey", "/v1/table/version/batch-create", "key-read",
			map[string]any{"entries": []any{commit([]string{"alpha", "a"}, 1)}}, 403, 15},
		{"CreateVersionsInside", "/v1/table/version/batch-create", "key-write-alpha",
			map[string]any{"entries": []any{commit([]string{"alpha", "a"}, 1)}}, 200, -1},
		{"CommitInside", "/v1/table/batch-commit", "key-write-alpha",
			map[string]any{"operations": []any{
				map[string]any{"create_table_version": commit([]string{"alpha", "a"}, 2)},
				map[string]any{"declare_table": map[string]any{"id": []string{"alpha", "new"}, "location": "s3://lancens-access/alpha/new"}},
			}}, 200, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := e.contentHash(t)
			status, code, body := post(t, e, tc.path, tc.key, tc.body)
			if status != tc.status || code != tc.code {
				t.Fatalf("want %d code %d, got %d code %d: %s", tc.status, tc.code, status, code, body)
			}
			if changed := e.contentHash(t) != before; changed != (status == 200) {
				t.Fatalf("changed=%v after %d", changed, status)
			}
		})
	}
}

// TestTransactionsInScope: a scoped key reaches a transaction only through
// a table inside its scope, whatever identifier names the transaction; any
// other answers 404 code 10, as a missing one does.
func TestTransactionsInScope(t *testing.T) {
	e := startAccessEnv(t, nil)
	alphaTx := declare(t, e, "alpha", "t")
	betaTx := declare(t, e, "beta", "t")
	batch := func() string {
		status, _, body := post(t, e, "/v1/table/batch-commit", setupKey, map[string]any{"operations": []any{
			map[string]any{"declare_table": map[string]any{"id": []string{"alpha", "b"}, "location": "s3://lancens-access/alpha/b"}}}})
		var resp struct {
			TransactionID string `json:"transaction_id"`
		}
		if status != 200 || json.Unmarshal(body, &resp) != nil || resp.TransactionID == "" {
			t.Fatalf("batch: %d %s", status, body)
		}
		return resp.TransactionID
	}()
	for _, id := range []string{"alpha$t", "beta$t"} {
		if status, code, body := post(t, e, "/v1/table/"+id+"/version/create", setupKey,
			map[string]any{"version": 1, "manifest_path": "s3://lancens-access/" + id + "/_versions/1.manifest"}); status != 200 {
			t.Fatalf("commit %s: %d code %d %s", id, status, code, body)
		}
	}
	alter := map[string]any{"actions": []any{map[string]any{"setPropertyAction": map[string]any{"key": "k", "value": "v"}}}}
	for _, tc := range []struct {
		name, id, key string
		status, code  int
	}{
		{"Inside", alphaTx, "key-read-alpha", 200, -1},
		{"Outside", betaTx, "key-read-alpha", 404, 10},
		{"OutsideBehindAnInsidePrefix", "alpha$t$" + betaTx, "key-read-alpha", 404, 10},
		{"VersionOfInsideTable", "alpha$t$1", "key-read-alpha", 200, -1},
		{"VersionOfOutsideTable", "beta$t$1", "key-read-alpha", 404, 10},
		{"Missing", "alpha$t$no-such-transaction", "key-read-alpha", 404, 10},
		{"BatchWithoutTable", batch, "key-read-alpha", 404, 10},
		{"BatchUnscoped", batch, "key-read", 200, -1},
		{"OutsideUnscoped", betaTx, "key-read", 200, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, code, body := post(t, e, "/v1/transaction/"+tc.id+"/describe", tc.key, map[string]any{})
			if status != tc.status || code != tc.code {
				t.Fatalf("describe: want %d code %d, got %d code %d: %s", tc.status, tc.code, status, code, body)
			}
			writer := strings.Replace(tc.key, "read", "write", 1)
			before := e.contentHash(t)
			status, code, body = post(t, e, "/v1/transaction/"+tc.id+"/alter", writer, alter)
			if status != tc.status || code != tc.code {
				t.Fatalf("alter: want %d code %d, got %d code %d: %s", tc.status, tc.code, status, code, body)
			}
			if changed := e.contentHash(t) != before; changed != (status == 200) {
				t.Fatalf("alter changed=%v after %d", changed, status)
			}
		})
	}
	// Transactions follow their table through renames; those of a table
	// that is gone stay where it was.
	goneTx := declare(t, e, "alpha", "gone")
	for _, step := range []struct {
		path string
		body map[string]any
	}{
		{"/v1/table/alpha$t/rename", map[string]any{"new_table_name": "moved", "new_namespace_id": []string{"beta"}}},
		{"/v1/table/beta$t/rename", map[string]any{"new_table_name": "arrived", "new_namespace_id": []string{"alpha"}}},
		{"/v1/table/alpha$gone/deregister", map[string]any{}},
	} {
		if status, code, body := post(t, e, step.path, setupKey, step.body); status != 200 {
			t.Fatalf("%s: %d code %d %s", step.path, status, code, body)
		}
	}
	for _, tc := range []struct {
		name, id     string
		status, code int
	}{
		{"RenamedOutOfTheScope", alphaTx, 404, 10},
		{"RenamedIntoTheScope", betaTx, 200, -1},
		{"TableGone", goneTx, 200, -1},
	} {
		if status, code, _ := post(t, e, "/v1/transaction/"+tc.id+"/describe", "key-read-alpha", map[string]any{}); status != tc.status || code != tc.code {
			t.Errorf("%s: want %d code %d, got %d code %d", tc.name, tc.status, tc.code, status, code)
		}
	}
}

// TestRenameStaysInScope: a rename is checked at both ends.
func TestRenameStaysInScope(t *testing.T) {
	e := startAccessEnv(t, nil)
	e.namespace(t, "alpha", "sub")
	declare(t, e, "alpha", "t")
	declare(t, e, "beta", "u")
	for _, tc := range []struct {
		name, path, key string
		body            map[string]any
		status, code    int
	}{
		{"IntoAnotherNamespace", "/v1/table/alpha$t/rename", "key-write-alpha", map[string]any{"new_table_name": "t", "new_namespace_id": []string{"beta"}}, 403, 15},
		{"FromAnotherNamespace", "/v1/table/beta$u/rename", "key-write-alpha", map[string]any{"new_table_name": "u", "new_namespace_id": []string{"alpha"}}, 403, 15},
		{"IntoTheRoot", "/v1/table/alpha$t/rename", "key-write-alpha", map[string]any{"new_table_name": "t", "new_namespace_id": []string{}}, 403, 15},
		// A field of another operation, of a type that operation would
		// refuse, must not hide the fields a rename acts on.
		{"StrayField", "/v1/table/alpha$t/rename", "key-write-alpha", map[string]any{"new_table_name": "t", "new_namespace_id": []string{"beta"}, "source_query": 5}, 403, 15},
		{"FieldsInOtherCase", "/v1/table/alpha$t/rename", "key-write-alpha", map[string]any{"new_table_name": "t", "NEW_NAMESPACE_ID": []string{"beta"}}, 403, 15},
		{"WithinTheScope", "/v1/table/alpha$t/rename", "key-write-alpha", map[string]any{"new_table_name": "t2", "new_namespace_id": []string{"alpha", "sub"}}, 200, -1},
		{"InPlace", "/v1/table/alpha$sub$t2/rename", "key-write-alpha", map[string]any{"new_table_name": "t3"}, 200, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := e.contentHash(t)
			status, code, body := post(t, e, tc.path, tc.key, tc.body)
			if status != tc.status || code != tc.code {
				t.Fatalf("want %d code %d, got %d code %d: %s", tc.status, tc.code, status, code, body)
			}
			if changed := e.contentHash(t) != before; changed != (status == 200) {
				t.Fatalf("changed=%v after %d", changed, status)
			}
		})
	}
	// The table went where the allowed renames took it.
	_, tables, _ := listNames(t, e, "/v1/table", "key-read")
	if !slices.Equal(tables, []string{"alpha$sub$t3", "beta$u"}) {
		t.Fatalf("tables: %q", tables)
	}
}

// TestViewSourcesInScope: a materialized view reads its source table, so
// a scoped key may create one only over a source inside its scope; over
// another the request is refused whole (403 code 15) and nothing changes.
func TestViewSourcesInScope(t *testing.T) {
	e := startAccessEnv(t, nil)
	valid := e.request(t, "CreateMaterializedView", "alpha", "views")
	// The kit's source table is items, next to the view; one in beta too.
	e.request(t, "CreateMaterializedView", "beta", "views")
	withSource := func(t *testing.T, source []string, extra map[string]any) *http.Request {
		rd, err := valid.GetBody()
		if err != nil {
			t.Fatal(err)
		}
		var body map[string]any
		if err := json.NewDecoder(rd).Decode(&body); err != nil {
			t.Fatal(err)
		}
		var query map[string]any
		if err := json.Unmarshal([]byte(body["source_query"].(string)), &query); err != nil {
			t.Fatal(err)
		}
		query["id"] = source
		q, _ := json.Marshal(query)
		body["source_query"] = string(q)
		maps.Copy(body, extra)
		b, _ := json.Marshal(body)
		req := valid.Clone(t.Context())
		req.Body = io.NopCloser(bytes.NewReader(b))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
		req.ContentLength = int64(len(b))
		return req
	}
	for _, tc := range []struct {
		name   string
		source []string
		extra  map[string]any
		key    string
		status int
		code   int
	}{
		{"SourceOutside", []string{"beta", "views", "CreateMaterializedView", "items"}, nil, "key-write-alpha", 403, 15},
		// A field of another operation, of a type that operation would
		// refuse, must not hide the source.
		{"SourceOutsideStrayField", []string{"beta", "views", "CreateMaterializedView", "items"}, map[string]any{"new_table_name": 5}, "key-write-alpha", 403, 15},
		{"SourceInside", []string{"alpha", "views", "CreateMaterializedView", "items"}, nil, "key-write-alpha", 201, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := e.contentHash(t)
			if status, code := e.send(t, withSource(t, tc.source, tc.extra), tc.key); status != tc.status || code != tc.code {
				t.Fatalf("want %d code %d, got %d code %d", tc.status, tc.code, status, code)
			}
			if changed := e.contentHash(t) != before; changed != (tc.status < 300) {
				t.Fatalf("changed=%v after %d", changed, tc.status)
			}
		})
	}
}

// TestCredentialsAreNotLogged: the request log names the principal and
// never a key, whether the key is accepted or not.
func TestCredentialsAreNotLogged(t *testing.T) {
	logs := &logBuffer{}
	e := startAccessEnv(t, func(c *server.Config) {
		c.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	for _, key := range []string{"key-read-alpha", "key-not-configured"} {
		e.s.Do(t, http.MethodGet, "/v1/namespace/alpha/list", http.Header{"X-Api-Key": {key}}, nil)
		e.s.Do(t, http.MethodGet, "/v1/namespace/alpha/list", http.Header{"Authorization": {"Bearer " + key}}, nil)
	}
	out := logs.String()
	if !strings.Contains(out, "principal=read-alpha") {
		t.Fatalf("the log does not name the principal:\n%s", out)
	}
	for _, key := range []string{"key-read-alpha", "key-not-configured", setupKey} {
		if strings.Contains(out, key) {
			t.Fatalf("the log holds key %q:\n%s", key, out)
		}
	}
}

// TestRefusalsAreLogged: every refused request leaves an "access refused"
// line naming the principal (none when unauthenticated), the operation,
// and the answer's code, and never the credentials; allowed requests leave
// none.
func TestRefusalsAreLogged(t *testing.T) {
	logs := &logBuffer{}
	e := startAccessEnv(t, func(c *server.Config) {
		c.Logger = slog.New(slog.NewJSONHandler(logs, nil))
	})
	alphaTx := declare(t, e, "alpha", "t")
	betaTx := declare(t, e, "beta", "t")
	type line struct {
		Msg       string
		Principal string
		Operation string
		Code      int
	}
	for _, tc := range []struct {
		name, key, path string
		want            *line // nil: no refusal line
	}{
		{"Allowed", "key-read-alpha", "/v1/namespace/alpha/list", nil},
		{"OutsideTheScope", "key-read-alpha", "/v1/namespace/beta/list", &line{"access refused", "read-alpha", "ListNamespaces", 15}},
		{"RoleTooWeak", "key-read", "/v1/table/alpha$t/drop", &line{"access refused", "read", "DropTable", 15}},
		{"TransactionOutsideTheScope", "key-read-alpha", "/v1/transaction/" + betaTx + "/describe", &line{"access refused", "read-alpha", "DescribeTransaction", 10}},
		{"TransactionInsideTheScope", "key-read-alpha", "/v1/transaction/" + alphaTx + "/describe", nil},
		{"WrongKey", "key-not-configured", "/v1/table/alpha$t/describe", &line{"access refused", "", "DescribeTable", 16}},
		{"NoCredentials", "", "/v1/namespace/alpha/list", &line{"access refused", "", "ListNamespaces", 16}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{"Content-Type": {"application/json"}}
			if tc.key != "" {
				h.Set("X-Api-Key", tc.key)
			}
			logs.Reset()
			status, body, _ := e.s.Do(t, http.MethodPost, tc.path, h, []byte(`{}`))
			var refusals []line
			for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
				var got line
				if err := json.Unmarshal([]byte(l), &got); err != nil {
					t.Fatalf("log line %q: %v", l, err)
				}
				if got.Msg == "access refused" {
					refusals = append(refusals, got)
				}
			}
			switch {
			case tc.want == nil && (status >= 300 || len(refusals) > 0):
				t.Fatalf("an allowed request: %d %s, refusals %+v", status, body, refusals)
			case tc.want != nil && (len(refusals) != 1 || refusals[0] != *tc.want || apitestCode(body) != tc.want.Code):
				t.Fatalf("want one refusal %+v answered with its code, got %+v, answer %d %s", *tc.want, refusals, status, body)
			}
			if tc.key != "" && strings.Contains(logs.String(), tc.key) {
				t.Fatalf("the log holds the key:\n%s", logs.String())
			}
		})
	}
}

// logBuffer is a bytes.Buffer the server's goroutines may write to.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) Reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Reset()
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestJWTAccess: bearer tokens from the configured issuer carry their role
// and scopes through the same decisions as keys; bad tokens are 401 code
// 16.
func TestJWTAccess(t *testing.T) {
	signer := authtest.NewRSAKey(t, "k1")
	jwks := authtest.ServeJWKS(t, signer, authtest.NewECKey(t, "k2"))
	e := startAccessEnv(t, func(c *server.Config) {
		c.Auth.JWT = &auth.JWTConfig{JWKSURL: jwks.URL, Issuer: authtest.Issuer, Audience: authtest.Audience,
			RoleClaim: "lancens_role", NamespacesClaim: "lancens_namespaces"}
	})
	declare(t, e, "alpha", "t")
	declare(t, e, "beta", "t")
	claims := authtest.Claims("carol")
	readAlpha := authtest.Mint(t, signer, claims, map[string]any{"lancens_role": "read", "lancens_namespaces": []string{"alpha"}})
	writer := authtest.Mint(t, signer, claims, map[string]any{"lancens_role": "write"})
	noRole := authtest.Mint(t, signer, claims, nil)
	expired := claims
	expired.Expiry = jwt.NewNumericDate(time.Now().Add(-time.Hour))
	wrongAudience := claims
	wrongAudience.Audience = jwt.Audience{"another-service"}
	for _, tc := range []struct {
		name, token, path string
		status, code      int
	}{
		{"ScopedReadInside", readAlpha, "/v1/table/alpha$t/describe", 200, -1},
		{"ScopedReadOutside", readAlpha, "/v1/table/beta$t/describe", 403, 15},
		{"ScopedReadWrites", readAlpha, "/v1/table/alpha$t/deregister", 403, 15},
		{"WriterWrites", writer, "/v1/table/beta$t/deregister", 200, -1},
		{"WriterCreatesTopLevel", writer, "/v1/namespace/gamma/create", 403, 15},
		{"NoRole", noRole, "/v1/table/alpha$t/describe", 403, 15},
		{"Expired", authtest.Mint(t, signer, expired, map[string]any{"lancens_role": "admin"}), "/v1/table/alpha$t/describe", 401, 16},
		{"WrongAudience", authtest.Mint(t, signer, wrongAudience, map[string]any{"lancens_role": "admin"}), "/v1/table/alpha$t/describe", 401, 16},
		{"AlgNone", authtest.MintUnsigned(t, "k1", claims, map[string]any{"lancens_role": "admin"}), "/v1/table/alpha$t/describe", 401, 16},
		{"Forged", authtest.Mint(t, authtest.NewRSAKey(t, "k1"), claims, map[string]any{"lancens_role": "admin"}), "/v1/table/alpha$t/describe", 401, 16},
		{"KeyAsBearer", "key-read-alpha", "/v1/table/alpha$t/describe", 200, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body, _ := e.s.Do(t, http.MethodPost, tc.path, http.Header{"Authorization": {"Bearer " + tc.token}, "Content-Type": {"application/json"}}, []byte(`{}`))
			code := -1
			if status >= 300 {
				code = apitestCode(body)
			}
			if status != tc.status || code != tc.code {
				t.Fatalf("want %d code %d, got %d code %d: %s", tc.status, tc.code, status, code, body)
			}
		})
	}
}

// TestRoutesBeyondTheSpecInScope: the routes beyond the spec (the
// remote dialect's index prewarm, a read; lancens's optimize, a write) go
// through the same decision: a scoped key reaches only its tables, and
// learns nothing of others.
func TestRoutesBeyondTheSpecInScope(t *testing.T) {
	e := startAccessEnv(t, nil)
	for _, id := range []string{"alpha$docs", "beta$docs"} {
		if status, code, body := remoteDo(t, e, http.MethodPost, "/v1/table/"+id+"/create/", "", setupKey, arrowBody(t)); status != 200 {
			t.Fatalf("create %s: %d code %d %s", id, status, code, body)
		}
	}
	for _, tc := range []struct {
		name, path, key string
		status, code    int
	}{
		{"Inside", "/v1/table/alpha$docs/index/missing/prewarm", "key-read-alpha", 404, int(store.CodeTableIndexNotFound)},
		{"OutsideExisting", "/v1/table/beta$docs/index/missing/prewarm", "key-read-alpha", 403, 15},
		{"OutsideMissing", "/v1/table/beta$nothing/index/missing/prewarm", "key-read-alpha", 403, 15},
		{"Unscoped", "/v1/table/alpha$docs/index/missing/prewarm", "key-read", 404, int(store.CodeTableIndexNotFound)},
		{"NoCredentials", "/v1/table/alpha$docs/index/missing/prewarm", "", 401, 16},
		{"OptimizeInside", "/v1/table/alpha$docs/optimize", "key-write-alpha", 200, -1},
		{"OptimizeOutsideExisting", "/v1/table/beta$docs/optimize", "key-write-alpha", 403, 15},
		{"OptimizeOutsideMissing", "/v1/table/beta$nothing/optimize", "key-write-alpha", 403, 15},
		{"OptimizeReadOnly", "/v1/table/alpha$docs/optimize", "key-read", 403, 15},
		{"OptimizeScopedAdmin", "/v1/table/beta$docs/optimize", "key-admin-alpha", 403, 15},
		{"OptimizeUnscoped", "/v1/table/beta$docs/optimize", "key-write", 200, -1},
		{"OptimizeNoCredentials", "/v1/table/alpha$docs/optimize", "", 401, 16},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, code, body := remoteDo(t, e, http.MethodPost, tc.path, "", tc.key, nil)
			if status != tc.status || code != tc.code {
				t.Fatalf("want %d code %d, got %d code %d: %s", tc.status, tc.code, status, code, body)
			}
		})
	}
}

// TestFreshnessChecksAfterTheDecision: the remote dialect's freshness
// headers make lancens read a table's latest version; for a table outside
// the key's scope the answer is the refusal, not what that read found.
func TestFreshnessChecksAfterTheDecision(t *testing.T) {
	e := startAccessEnv(t, nil)
	if status, code, body := remoteDo(t, e, http.MethodPost, "/v1/table/beta$docs/create/", "", setupKey, arrowBody(t)); status != 200 {
		t.Fatalf("create: %d code %d %s", status, code, body)
	}
	for _, tc := range []struct {
		name, key    string
		status, code int
	}{
		{"OutsideTheScope", "key-read-alpha", 403, 15},
		{"Unscoped", "key-read", 404, int(store.CodeTableVersionNotFound)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{"User-Agent": {"LanceDB-Node-Client/0.39.0"}, "X-Api-Key": {tc.key},
				"X-Lancedb-Min-Version": {"99"}, "Content-Type": {"application/json"}}
			status, body, _ := e.s.Do(t, http.MethodPost, "/v1/table/beta$docs/count_rows/", h, []byte(`{}`))
			if code := apitestCode(body); status != tc.status || code != tc.code {
				t.Fatalf("want %d code %d, got %d code %d: %s", tc.status, tc.code, status, code, body)
			}
		})
	}
}
