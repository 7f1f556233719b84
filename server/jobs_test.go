package server_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancens/lancens/client"
	"github.com/lancens/lancens/coord"
	"github.com/lancens/lancens/gen"
	"github.com/lancens/lancens/internal/testkit/apitest"
	"github.com/lancens/lancens/server"
	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/store/sqlite"
	"github.com/lancens/lancens/warehouse"
)

// startIndexBuild asks for an index and returns the build's transaction id.
func startIndexBuild(t *testing.T, s *apitest.Server, table, body string) string {
	t.Helper()
	status, out, _ := s.Do(t, "POST", "/v1/table/"+table+"/create_index", jsonHeader, []byte(body))
	var resp gen.CreateTableIndexResponse
	if status != 200 || json.Unmarshal(out, &resp) != nil || resp.TransactionId == nil {
		t.Fatalf("create_index %s: %d %s", body, status, out)
	}
	return *resp.TransactionId
}

// listIndexes returns the table's indexes by name.
func listIndexes(t *testing.T, s *apitest.Server, table string) map[string]gen.IndexContent {
	t.Helper()
	status, body, _ := s.Do(t, "POST", "/v1/table/"+table+"/index/list", jsonHeader, []byte(`{}`))
	var list gen.ListTableIndicesResponse
	if status != 200 || json.Unmarshal(body, &list) != nil {
		t.Fatalf("index/list: %d %s", status, body)
	}
	out := map[string]gen.IndexContent{}
	for _, ix := range list.Indexes {
		out[ix.IndexName] = ix
	}
	return out
}

// TestFailedIndexBuild checks that a build that cannot succeed (PQ with a
// sub-vector count that does not divide the dimension) ends FAILED, with
// its cause on the transaction and the index, and that its name can be used
// again: by a new create_index, which replaces it, or after a drop.
func TestFailedIndexBuild(t *testing.T) {
	s := apitest.Start(t, apitest.Options{})
	schema, rec := vectorTable(clustered(300, 4, 4, 1), 0)
	if _, err := s.Client.CreateTable(t.Context(), []string{"v"}, schema, []arrow.RecordBatch{rec}, nil); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"vidx", "other"} {
		body := []byte(`{"column":"vector","index_type":"IVF_PQ","name":"` + name + `","num_partitions":2,"num_sub_vectors":3}`)
		tx := waitTransaction(t, s.Client, startIndexBuild(t, s, "v", string(body)))
		if tx.Status != "Failed" || tx.Properties["error"] == "" {
			t.Fatalf("%s: transaction %+v, want Failed with an error", name, tx)
		}
		ix, ok := listIndexes(t, s, "v")[name]
		if !ok || ix.Status != store.IndexFailed {
			t.Fatalf("%s: listed as %+v, want FAILED", name, ix)
		}
		var details map[string]any
		if ix.IndexDetails == nil || json.Unmarshal([]byte(*ix.IndexDetails), &details) != nil || details["error"] == "" || details["error"] == nil {
			t.Fatalf("%s: index_details %v carry no error", name, ix.IndexDetails)
		}
		status, out, _ := s.Do(t, "POST", "/v1/table/v/index/"+name+"/stats", jsonHeader, []byte(`{}`))
		var st gen.DescribeTableIndexStatsResponse
		if status != 200 || json.Unmarshal(out, &st) != nil || *st.NumIndexedRows != 0 || *st.NumUnindexedRows != 300 {
			t.Fatalf("%s: stats %d %s", name, status, out)
		}
	}
	// Searches go on, exactly.
	if ids, _ := search(t, s.Client, "v", vectorQuery([]float32{0, 0, 0, 0}, 3)); len(ids) != 3 {
		t.Fatalf("search beside a failed index: %v", ids)
	}
	// A new index of the failed one's name replaces it, through the
	// spec's create_index (which never replaces a working index).
	tx := waitTransaction(t, s.Client, startIndexBuild(t, s, "v", `{"column":"vector","index_type":"IVF_PQ","name":"vidx","num_partitions":2,"num_sub_vectors":2}`))
	if tx.Status != "Succeeded" {
		t.Fatalf("rebuild: %+v", tx)
	}
	if ix := listIndexes(t, s, "v")["vidx"]; ix.Status != store.IndexSucceeded || *ix.NumIndexedRows != 300 {
		t.Fatalf("rebuilt index: %+v", ix)
	}
	status, out, _ := s.Do(t, "POST", "/v1/table/v/create_index", jsonHeader, []byte(`{"column":"vector","index_type":"IVF_FLAT","name":"vidx"}`))
	if apitest.ErrorCode(out) != int(store.CodeTableIndexAlreadyExists) {
		t.Fatalf("create over a built index: %d %s", status, out)
	}
	// A failed index can be dropped, and its name used again.
	if status, out, _ := s.Do(t, "POST", "/v1/table/v/index/other/drop", nil, nil); status != 200 {
		t.Fatalf("drop failed index: %d %s", status, out)
	}
	if tx := waitTransaction(t, s.Client, startIndexBuild(t, s, "v", `{"column":"vector","index_type":"IVF_FLAT","name":"other","num_partitions":2}`)); tx.Status != "Succeeded" {
		t.Fatalf("index in a dropped failed index's name: %+v", tx)
	}
}

// blockedBuilds is a store whose index builds wait until they are
// cancelled, then run (and fail, being cancelled): a build interrupted by
// shutdown at a known point.
type blockedBuilds struct {
	store.ManagedBackend
	started chan struct{}
}

func (b *blockedBuilds) BuildIndex(ctx context.Context, job store.BuildIndex) error {
	b.started <- struct{}{}
	<-ctx.Done()
	return b.ManagedBackend.BuildIndex(ctx, job)
}

// TestShutdownRequeuesIndexBuild stops a server while it builds an index;
// the build must wait in the queue, not fail, and finish once the server
// runs again on the same database.
func TestShutdownRequeuesIndexBuild(t *testing.T) {
	dir := t.TempDir()
	opts := apitest.Options{DBPath: dir + "/lancens.db", Warehouse: dir + "/wh"}
	jobsQueued := coord.NewSignal()
	db, err := sqlite.Open(t.Context(), opts.DBPath, sqlite.Options{Synchronous: "NORMAL", OnJobQueued: jobsQueued.Notify})
	if err != nil {
		t.Fatal(err)
	}
	closeDB := sync.OnceFunc(func() { db.Close() })
	defer closeDB()
	wh, err := warehouse.Open(opts.Warehouse)
	if err != nil {
		t.Fatal(err)
	}
	served, commits := apitest.WithEngine(t, db, wh)
	st := &blockedBuilds{ManagedBackend: served, started: make(chan struct{}, 1)}
	services := coord.NewServices(coord.ServicesConfig{Store: st, Warehouse: wh, Committer: commits, JobsQueued: jobsQueued})
	srv, err := server.New(server.Config{Store: st, Warehouse: wh, Services: services})
	if err != nil {
		t.Fatal(err)
	}
	services.Start()
	hs := httptest.NewServer(apitest.NewValidator(t).Wrap(srv))
	c, err := client.New(hs.URL)
	if err != nil {
		t.Fatal(err)
	}
	const rows = 2000
	schema, rec := vectorTable(clustered(rows, 8, 8, 3), 0)
	if _, err := c.CreateTable(t.Context(), []string{"v"}, schema, []arrow.RecordBatch{rec}, nil); err != nil {
		t.Fatal(err)
	}
	first := &apitest.Server{URL: hs.URL, DB: db, HTTP: hs.Client(), Client: c}
	txID := startIndexBuild(t, first, "v", `{"column":"vector","index_type":"IVF_PQ","name":"vidx","num_partitions":4,"num_sub_vectors":4}`)
	select {
	case <-st.started:
	case <-time.After(30 * time.Second):
		t.Fatal("the build did not start")
	}
	hs.Close()
	services.Stop() // cancels the build and waits for the runner
	if tx, err := db.DescribeTransaction(t.Context(), []string{txID}); err != nil || tx.Status != store.TxQueued {
		t.Fatalf("after shutdown the build is %+v (%v), want Queued", tx, err)
	}
	closeDB()

	s := apitest.Start(t, opts)
	if tx := waitTransaction(t, s.Client, txID); tx.Status != "Succeeded" {
		t.Fatalf("resumed build: %+v", tx)
	}
	if ix := listIndexes(t, s, "v")["vidx"]; ix.Status != store.IndexSucceeded || *ix.NumIndexedRows != rows {
		t.Fatalf("resumed index: %+v", ix)
	}
}
