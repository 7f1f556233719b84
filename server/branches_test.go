package server_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancens/lancens/gen"
	"github.com/lancens/lancens/internal/testkit/apitest"
	"github.com/lancens/lancens/internal/testkit/arrowtest"
	"github.com/lancens/lancens/store"
)

// branchCount counts the rows of p on branch (at version v, 0: the
// latest) over HTTP; it returns the count, or -1 and the error code.
func branchCount(t *testing.T, s *apitest.Server, branch string, v int64) (int64, int) {
	t.Helper()
	req := map[string]any{"branch": branch}
	if v > 0 {
		req["version"] = v
	}
	body, _ := json.Marshal(req)
	status, out, _ := s.Do(t, http.MethodPost, "/v1/table/p/count_rows", jsonHeader, body)
	if status != http.StatusOK {
		return -1, apitest.ErrorCode(out)
	}
	var n int64
	if err := json.Unmarshal(out, &n); err != nil {
		t.Fatalf("count_rows answered %s", out)
	}
	return n, 0
}

// branchWrite sends a JSON write to p and returns its status and body.
func branchWrite(t *testing.T, s *apitest.Server, op, body string) (int, []byte) {
	t.Helper()
	status, out, _ := s.Do(t, http.MethodPost, "/v1/table/p/"+op, jsonHeader, []byte(body))
	return status, out
}

// TestBranchWrites checks writes to a branch of a managed table: inserts,
// deletes, updates, a schema change, restores and merge-inserts on a
// branch make versions of the branch alone, the branch reads (and time travels) its own versions, a
// branch of the branch starts from what it shows, and main never changes.
func TestBranchWrites(t *testing.T) {
	s := apitest.Start(t, apitest.Options{})
	ctx := t.Context()
	c := s.Client
	createPeople(t, c, "p")
	id := []string{"p"}
	if _, err := c.CreateTableBranch(ctx, id, "dev", "", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Insert(ctx, id, peopleSchema, []arrow.RecordBatch{arrowtest.Record(t, peopleSchema, `[{"id":5,"name":"eve","age":22}]`)}, ""); err != nil {
		t.Fatal(err)
	}
	arrowCT := http.Header{"Content-Type": {"application/vnd.apache.arrow.stream"}}
	status, out, _ := s.Do(t, http.MethodPost, "/v1/table/p/insert?branch=dev", arrowCT,
		streamBytes(t, peopleSchema, arrowtest.Record(t, peopleSchema, `[{"id":6,"name":"fay","age":60}]`)))
	var ins gen.InsertIntoTableResponse
	if status != http.StatusOK || json.Unmarshal(out, &ins) != nil || ins.Version == nil || *ins.Version != 2 {
		t.Fatalf("insert on dev: %d %s", status, out)
	}
	for _, w := range []struct{ op, body string }{
		{"delete", `{"predicate": "id = 1", "branch": "dev"}`},
		{"update", `{"updates": [["age", "99"]], "predicate": "id = 2", "branch": "dev"}`},
		{"add_columns", `{"new_columns": [{"name": "older", "expression": "age + 1"}], "branch": "dev"}`},
	} {
		if status, out := branchWrite(t, s, w.op, w.body); status != http.StatusOK {
			t.Fatalf("%s on dev: %d %s", w.op, status, out)
		}
	}
	// dev: v1 {1,2,3,4}, v2 +6, v3 -1, v4 age of 2 is 99, v5 column older.
	for v, want := range map[int64]int64{1: 4, 2: 5, 3: 4, 4: 4, 5: 4, 0: 4} {
		if n, code := branchCount(t, s, "dev", v); n != want {
			t.Errorf("dev at version %d: %d rows (code %d), want %d", v, n, code, want)
		}
	}
	// Main is as its own writes left it: v1 {1,2,3,4}, v2 +5.
	for v, want := range map[int64]int64{1: 4, 2: 5, 0: 5} {
		if n, code := branchCount(t, s, "main", v); n != want {
			t.Errorf("main at version %d: %d rows (code %d), want %d", v, n, code, want)
		}
	}
	if n, code := branchCount(t, s, "main", 3); code != int(store.CodeTableVersionNotFound) {
		t.Errorf("main at version 3: %d code %d, want code 11", n, code)
	}
	status, out, _ = s.Do(t, http.MethodPost, "/v1/table/p/query", jsonHeader,
		[]byte(`{"branch": "dev", "vector": null, "k": 0, "filter": "id = 2", "columns": {"column_names": ["age", "older"]}}`))
	if status != http.StatusOK {
		t.Fatalf("query on dev: %d %s", status, out)
	}
	rec := arrowFile(t, out)
	if got := column(t, rec, "age") + column(t, rec, "older"); got != "[99][100]" {
		t.Fatalf("row 2 on dev: %s, want age 99 and older 100", got)
	}
	d, err := c.DescribeTable(ctx, id, nil)
	if err != nil || d.Schema.HasField("older") || *d.Version != 2 {
		t.Fatalf("main's schema or version changed: %+v %v", d, err)
	}
	// Restoring dev's version 2 makes dev's version 6, with its rows.
	if status, out := branchWrite(t, s, "restore", `{"version": 2, "branch": "dev"}`); status != http.StatusOK {
		t.Fatalf("restore on dev: %d %s", status, out)
	}
	if n, _ := branchCount(t, s, "dev", 6); n != 5 {
		t.Fatalf("dev after restoring version 2: %d rows, want 5", n)
	}
	if status, out := branchWrite(t, s, "restore", `{"version": 5, "branch": "dev"}`); status != http.StatusOK {
		t.Fatalf("restore on dev: %d %s", status, out)
	}
	// A branch of dev starts from what dev shows at the version it forks.
	from := int64(3)
	if _, err := c.CreateTableBranch(ctx, id, "feat", "dev", &from); err != nil {
		t.Fatal(err)
	}
	if n, code := branchCount(t, s, "feat", 0); n != 4 {
		t.Fatalf("feat: %d rows (code %d), want 4", n, code)
	}
	status, out, _ = s.Do(t, http.MethodPost, "/v1/table/p/merge_insert?branch=feat&on=id&when_matched_update_all=true&when_not_matched_insert_all=true", arrowCT,
		streamBytes(t, peopleSchema, arrowtest.Record(t, peopleSchema, `[{"id":2,"name":"bo","age":1},{"id":8,"name":"hal","age":8}]`)))
	if status != http.StatusOK {
		t.Fatalf("merge_insert on feat: %d %s", status, out)
	}
	if n, _ := branchCount(t, s, "feat", 0); n != 5 {
		t.Fatalf("feat after merge_insert: %d rows, want 5", n)
	}
	if n, _ := branchCount(t, s, "dev", 0); n != 4 {
		t.Fatalf("a merge_insert on feat changed dev: %d rows", n)
	}
	if status, out := branchWrite(t, s, "delete", `{"predicate": "true", "branch": "feat"}`); status != http.StatusOK {
		t.Fatalf("delete on feat: %d %s", status, out)
	}
	if n, _ := branchCount(t, s, "dev", 0); n != 4 {
		t.Fatalf("a write to feat changed dev: %d rows", n)
	}

	for _, tc := range []struct {
		name, op, body string
		code           store.Code
	}{
		{"UnknownBranch", "delete", `{"predicate": "true", "branch": "nope"}`, store.CodeTableBranchNotFound},
		{"BadBranchName", "delete", `{"predicate": "true", "branch": "a..b"}`, store.CodeInvalidInput},
		{"IndexOnBranch", "create_index", `{"column": "id", "index_type": "BTREE", "branch": "dev"}`, store.CodeUnsupported},
		{"BadPredicate", "delete", `{"predicate": "id = = 1", "branch": "dev"}`, store.CodeInvalidInput},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, out := branchWrite(t, s, tc.op, tc.body)
			if status < 400 || apitest.ErrorCode(out) != int(tc.code) {
				t.Fatalf("got %d %s, want code %d", status, out, tc.code)
			}
			for branch, want := range map[string]int64{"main": 5, "dev": 4} {
				if n, _ := branchCount(t, s, branch, 0); n != want {
					t.Fatalf("a refused write changed %s: %d rows", branch, n)
				}
			}
		})
	}
	if _, err := c.DeleteTableBranch(ctx, id, "feat"); err != nil {
		t.Fatal(err)
	}
	if n, code := branchCount(t, s, "feat", 0); code != int(store.CodeTableBranchNotFound) {
		t.Fatalf("a deleted branch reads: %d code %d", n, code)
	}
	// Dropping the table drops every branch's rows with it.
	if _, err := c.DropTable(ctx, id); err != nil {
		t.Fatal(err)
	}
	createPeople(t, c, "p")
	if n, code := branchCount(t, s, "dev", 0); code != int(store.CodeTableBranchNotFound) {
		t.Fatalf("a new table of the same name has the old branch: %d code %d", n, code)
	}
}
