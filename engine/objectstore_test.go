package engine_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/lancens/lancens/engine"
	"github.com/lancens/lancens/internal/testkit/s3test"
	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/store/sqlite"
	"github.com/lancens/lancens/warehouse"
)

// requestLog is a proxy in front of an object store that records the
// requests it passes on.
type requestLog struct {
	mu   sync.Mutex
	seen []*http.Request
}

func (l *requestLog) reset() []*http.Request {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.seen
	l.seen = nil
	return out
}

// proxy starts a reverse proxy to endpoint that logs every request; the
// Host header is kept, so signatures stay valid.
func proxy(t *testing.T, endpoint string) (string, *requestLog) {
	target, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	log := &requestLog{}
	rp := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.mu.Lock()
		log.seen = append(log.seen, r.Clone(context.Background()))
		log.mu.Unlock()
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, log
}

// TestObjectStoreReads checks that on S3 a query reads data files with
// range requests, and that asking again is answered from memory: no
// request to the object store at all.
func TestObjectStoreReads(t *testing.T) {
	g := s3test.Start(t)
	g.CreateBucket(t, "lance-wh")
	endpoint, log := proxy(t, g.Endpoint)
	opts := g.Options()
	opts["aws_endpoint"] = endpoint
	ctx := context.Background()
	wh, err := warehouse.OpenStore(ctx, "s3://lance-wh/root", opts)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "lancens.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	e, err := engine.New(engine.Options{Catalog: db, Warehouse: wh})
	if err != nil {
		t.Fatal(err)
	}
	tg := engine.WithBackend(db, e)
	id := []string{"facts"}
	if _, _, err := tg.CreateTable(ctx, id, store.NewTable{Data: factData(100_000)}); err != nil {
		t.Fatal(err)
	}
	tbl, err := tg.DescribeTable(ctx, id)
	if err != nil || !strings.HasPrefix(tbl.Location, "s3://lance-wh/root/facts-") {
		t.Fatalf("location %v, %v", tbl, err)
	}
	log.reset()
	queries := []store.Query{
		{Filter: "category = 42 AND price > 900", Limit: 100, Projection: store.Projection{Columns: []string{"id", "text"}}},
		{Filter: "id < 20", Projection: store.Projection{Columns: []string{"id", "price"}}},
	}
	for i, q := range queries {
		first, err := tg.Query(ctx, id, q)
		if err != nil {
			t.Fatal(err)
		}
		var dataReads int
		for _, r := range log.reset() {
			if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/data/") {
				dataReads++
				if r.Header.Get("Range") == "" {
					t.Errorf("query %d: a data file was read whole: GET %s", i, r.URL.Path)
				}
			}
		}
		if i == 0 && dataReads == 0 {
			t.Fatalf("query %d read no data file", i)
		}
		again, err := tg.Query(ctx, id, q)
		if err != nil {
			t.Fatal(err)
		}
		if reqs := log.reset(); len(reqs) > 0 {
			t.Errorf("query %d asked again sent %d requests to the object store, the first %s %s", i, len(reqs), reqs[0].Method, reqs[0].URL)
		}
		if rows(first) != rows(again) || rows(first) == 0 {
			t.Fatalf("query %d: %d rows, then %d", i, rows(first), rows(again))
		}
	}
}

func rows(r *store.Result) int64 {
	var n int64
	for _, b := range r.Batches {
		n += b.NumRows()
	}
	return n
}
