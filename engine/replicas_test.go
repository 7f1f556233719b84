package engine_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancens/lancens/client"
	"github.com/lancens/lancens/internal/testkit/apitest"
	"github.com/lancens/lancens/internal/testkit/arrowtest"
	"github.com/lancens/lancens/internal/testkit/pgtest"
	"github.com/lancens/lancens/store"
)

var jsonHeader = http.Header{"Content-Type": {"application/json"}}

// countOn counts the rows of table on branch (at version v, 0: the
// latest) through server s; it returns the count, or -1 and the error
// code.
func countOn(t *testing.T, s *apitest.Server, table, branch string, v int64) (int64, int) {
	t.Helper()
	req := map[string]any{"branch": branch}
	if v > 0 {
		req["version"] = v
	}
	body, _ := json.Marshal(req)
	status, out, _ := s.Do(t, http.MethodPost, "/v1/table/"+table+"/count_rows", jsonHeader, body)
	if status != http.StatusOK {
		return -1, apitest.ErrorCode(out)
	}
	var n int64
	if err := json.Unmarshal(out, &n); err != nil {
		t.Fatalf("count_rows answered %s", out)
	}
	return n, 0
}

// eventually waits up to ten seconds for cond.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after ten seconds", what)
		}
	}
}

// TestReplicasLifecycle checks views, branches and optimize on two
// replicas sharing one PostgreSQL catalog and one warehouse: a view made
// through one is refreshed by whichever claims the job and read through
// the other, and follows writes to its source through either; a branch
// made through one is written through the other; an optimize through one
// is what the other reads next, and removes the old versions for both.
func TestReplicasLifecycle(t *testing.T) {
	url, wh := pgtest.Database(t), t.TempDir()
	a := apitest.Start(t, apitest.Options{Postgres: url, Warehouse: wh})
	b := apitest.Start(t, apitest.Options{Postgres: url, Warehouse: wh})
	ctx := t.Context()
	src := []string{"src"}
	batch := func(from, to int) []arrow.RecordBatch { return []arrow.RecordBatch{numberBatch(t, from, to)} }
	if _, err := a.Client.CreateTable(ctx, src, numbers, batch(1, 10), nil); err != nil {
		t.Fatal(err)
	}

	auto := true
	created, err := b.Client.CreateMaterializedView(ctx, []string{"v"}, client.MaterializedView{Kind: client.ViewQuery,
		SourceQuery: `{"id": ["src"], "filter": "v > 5", "k": 0}`, OutputSchema: numbers, WithData: true, AutoRefresh: &auto})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the first refresh", func() bool {
		tx, err := a.Client.DescribeTransaction(ctx, []string{created.JobID})
		return err == nil && tx.Status == "Succeeded"
	})
	if n, code := countOn(t, a, "v", "", 0); n != 5 {
		t.Fatalf("the view read through the other replica: %d rows (code %d), want 5", n, code)
	}
	if _, err := a.Client.Insert(ctx, src, numbers, batch(11, 12), ""); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the automatic refresh", func() bool { n, _ := countOn(t, b, "v", "", 0); return n == 7 })

	if _, err := a.Client.CreateTableBranch(ctx, src, "dev", "", nil); err != nil {
		t.Fatal(err)
	}
	arrowCT := http.Header{"Content-Type": {"application/vnd.apache.arrow.stream"}}
	if status, out, _ := b.Do(t, http.MethodPost, "/v1/table/src/insert?branch=dev", arrowCT, arrowtest.Stream(t, numbers, batch(100, 100))); status != http.StatusOK {
		t.Fatalf("insert on dev through the other replica: %d %s", status, out)
	}
	if n, code := countOn(t, a, "src", "dev", 0); n != 13 {
		t.Fatalf("dev through the first replica: %d rows (code %d), want 13", n, code)
	}
	if n, _ := countOn(t, a, "src", "main", 0); n != 12 {
		t.Fatalf("main after a write on dev: %d rows, want 12", n)
	}

	// Warm the first replica's cache with version 1, then optimize
	// through the other.
	if n, _ := countOn(t, a, "src", "main", 1); n != 10 {
		t.Fatalf("version 1: %d rows", n)
	}
	status, out, _ := b.Do(t, http.MethodPost, "/v1/table/src/optimize", jsonHeader, []byte(`{"older_than_seconds": 0}`))
	if status != http.StatusOK {
		t.Fatalf("optimize: %d %s", status, out)
	}
	var res struct {
		VersionsRemoved  int64 `json:"versions_removed"`
		FragmentsRemoved int64 `json:"fragments_removed"`
	}
	if err := json.Unmarshal(out, &res); err != nil || res.VersionsRemoved == 0 || res.FragmentsRemoved != 2 {
		t.Fatalf("optimize answered %s", out)
	}
	for name, s := range map[string]*apitest.Server{"a": a, "b": b} {
		if n, code := countOn(t, s, "src", "main", 0); n != 12 {
			t.Errorf("replica %s reads %d rows (code %d) after the optimize, want 12", name, n, code)
		}
		if _, code := countOn(t, s, "src", "main", 1); code != int(store.CodeTableVersionNotFound) {
			t.Errorf("replica %s reads a removed version: code %d, want 11", name, code)
		}
		if n, code := countOn(t, s, "src", "dev", 0); n != 13 {
			t.Errorf("replica %s reads %d rows (code %d) on dev after main's optimize, want 13", name, n, code)
		}
	}
	if n, _ := countOn(t, a, "v", "", 0); n != 7 {
		t.Fatalf("the view after its source's optimize: %d rows", n)
	}
}
