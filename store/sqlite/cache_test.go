package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancens/lancens/store"
)

const testDim = 16

// testRows returns n rows (id, text, vector) from id first on, the same
// for the same first.
func testRows(first, n int) store.Data {
	rec := testBatch(first, n)
	return store.NewData(rec.Schema(), rec)
}

// testBatch returns the rows of testRows as one batch.
func testBatch(first, n int) arrow.RecordBatch {
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "text", Type: arrow.BinaryTypes.String},
		{Name: "vector", Type: arrow.FixedSizeListOf(testDim, arrow.PrimitiveTypes.Float32)}}, nil)
	r := rand.New(rand.NewPCG(uint64(first), 7))
	words := strings.Fields("alpha bravo charlie delta echo foxtrot golf hotel india juliet")
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	vl := b.Field(2).(*array.FixedSizeListBuilder)
	for i := first; i < first+n; i++ {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.StringBuilder).Append(words[r.IntN(len(words))] + " " + words[r.IntN(len(words))])
		vl.Append(true)
		for range testDim {
			vl.ValueBuilder().(*array.Float32Builder).Append(float32(r.NormFloat64()))
		}
	}
	return b.NewRecordBatch()
}

// vectorOf returns the vector of row id of rows (testBatch's).
func vectorOf(rows arrow.RecordBatch, row int) []float32 {
	l := rows.Column(2).(*array.FixedSizeList)
	return l.ListValues().(*array.Float32).Float32Values()[row*testDim : (row+1)*testDim]
}

// runJobs runs the queued jobs as the server's runner does.
func runJobs(t *testing.T, db *DB) {
	t.Helper()
	ctx := t.Context()
	for {
		job, err := db.ClaimJob(ctx, store.JobBuildIndex)
		if err != nil {
			t.Fatal(err)
		}
		if job == nil {
			return
		}
		var p store.BuildIndex
		if err := json.Unmarshal(job.Payload, &p); err != nil {
			t.Fatal(err)
		}
		buildErr := db.BuildIndex(ctx, p)
		if err := db.FinishJob(ctx, job.TransactionID, buildErr); err != nil || buildErr != nil {
			t.Fatal(err, buildErr)
		}
	}
}

// searchTable makes a table of rows (testBatch's, which it returns) with a
// vector index and a full-text index.
func searchTable(t *testing.T, db *DB, name string, rows int) arrow.RecordBatch {
	t.Helper()
	ctx := t.Context()
	data := testBatch(0, rows)
	if _, _, err := db.CreateTable(ctx, []string{name}, store.NewTable{Mode: store.ModeCreate, Data: store.NewData(data.Schema(), data)}); err != nil {
		t.Fatal(err)
	}
	for _, spec := range []store.IndexSpec{
		{Column: "vector", Type: store.IndexIVFFlat, Vector: store.VectorIndexParams{NumPartitions: 4}},
		{Column: "text", Type: store.IndexInverted},
	} {
		if _, err := db.CreateIndex(ctx, []string{name}, spec); err != nil {
			t.Fatal(err)
		}
	}
	runJobs(t, db)
	return data
}

// nearestID runs a vector search for v (filtered when filter is set) and
// returns the nearest row's id.
func nearestID(ctx context.Context, db *DB, table string, v []float32, version *int64, filter string) (int64, error) {
	res, err := db.Query(ctx, []string{table}, store.Query{Version: version, Filter: filter, Limit: 1,
		Vector: &store.VectorSearch{Vectors: [][]float32{v}, Nprobes: 4}})
	if err != nil {
		return 0, err
	}
	if len(res.Batches) == 0 || res.Batches[0].NumRows() == 0 {
		return 0, fmt.Errorf("no result")
	}
	return res.Batches[0].Column(0).(*array.Int64).Value(0), nil
}

func ftsQuery(ctx context.Context, db *DB, table, terms string) error {
	_, err := db.Query(ctx, []string{table}, store.Query{Limit: 5,
		Text: &store.TextSearch{Query: store.FtsQuery{Match: &store.FtsMatch{Terms: terms}}}})
	return err
}

// entriesOf counts the cache entries of table uuid, by kind (the name up to
// its first slash).
func entriesOf(c *memCache, uuid string) map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]int{}
	for k := range c.entries {
		if k.table == uuid {
			out[strings.SplitN(k.name, "/", 2)[0]]++
		}
	}
	return out
}

func tableUUID(t *testing.T, db *DB, name string) string {
	t.Helper()
	tb, err := db.DescribeTable(t.Context(), []string{name})
	if err != nil {
		t.Fatal(err)
	}
	return tb.UUID
}

// TestCacheBudget searches several tables, old versions and new ones, with
// a budget far smaller than what they load: every kind of cached value is
// counted (vector indexes and posting lists included), the cache stays
// within its budget, and searches keep answering right.
func TestCacheBudget(t *testing.T) {
	const budget = 1 << 20
	db, err := Open(t.Context(), filepath.Join(t.TempDir(), "c.db"), Options{CacheBytes: budget})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := t.Context()
	const tables, rows = 6, 3000 // 3000 × 16 × 4 = 192 KiB of vectors a table
	data := map[string]arrow.RecordBatch{}
	for i := range tables {
		name := fmt.Sprintf("t%d", i)
		data[name] = searchTable(t, db, name, rows)
	}
	// One table alone: each kind of value is cached and counted.
	if _, err := nearestID(ctx, db, "t0", vectorOf(data["t0"], 0), nil, "id >= 0"); err != nil {
		t.Fatal(err)
	}
	if err := ftsQuery(ctx, db, "t0", "alpha"); err != nil {
		t.Fatal(err)
	}
	kinds := entriesOf(db.cache, tableUUID(t, db, "t0"))
	for _, k := range []string{"vectors", "index", "postings", "visible", "rows", "column"} {
		if kinds[k] == 0 {
			t.Errorf("no %s entry cached: %v", k, kinds)
		}
	}
	for round := range 3 {
		for i := range tables {
			name := fmt.Sprintf("t%d", i)
			if _, err := db.Insert(ctx, []string{name}, store.InsertAppend, testRows(rows+round*10, 10)); err != nil {
				t.Fatal(err)
			}
			for _, version := range []*int64{nil, ptr(int64(1))} {
				row := (round*7 + i) % rows
				got, err := nearestID(ctx, db, name, vectorOf(data[name], row), version, "id >= 0")
				if err != nil || got != int64(row) {
					t.Fatalf("%s version %v: nearest to row %d is %d, %v", name, version, row, got, err)
				}
			}
			if err := ftsQuery(ctx, db, name, "bravo delta"); err != nil {
				t.Fatal(err)
			}
			used := db.CacheBytes()
			if used > db.CacheBudget() {
				t.Fatalf("the cache holds %d bytes, over its budget of %d", used, db.CacheBudget())
			}
		}
	}
	if db.CacheBytes() < budget/2 {
		t.Fatalf("the cache holds only %d bytes of its %d: the test does not fill it", db.CacheBytes(), budget)
	}
}

func ptr[T any](v T) *T { return &v }

// TestCacheReleasesDroppedTables checks that dropping or overwriting a
// table, or dropping an index, lets its cached values go.
func TestCacheReleasesDroppedTables(t *testing.T) {
	db, err := Open(t.Context(), filepath.Join(t.TempDir(), "c.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := t.Context()
	for _, name := range []string{"a", "b", "c"} {
		d := searchTable(t, db, name, 500)
		if _, err := nearestID(ctx, db, name, vectorOf(d, 1), nil, "id > 0"); err != nil {
			t.Fatal(err)
		}
		if err := ftsQuery(ctx, db, name, "alpha"); err != nil {
			t.Fatal(err)
		}
	}
	a, b, c := tableUUID(t, db, "a"), tableUUID(t, db, "b"), tableUUID(t, db, "c")
	before := db.CacheBytes()
	if _, _, err := db.DropTable(ctx, []string{"a"}); err != nil {
		t.Fatal(err)
	}
	if n := entriesOf(db.cache, a); len(n) != 0 {
		t.Fatalf("dropped table still cached: %v", n)
	}
	if db.CacheBytes() >= before {
		t.Fatalf("cache bytes %d after the drop, %d before", db.CacheBytes(), before)
	}
	if _, _, err := db.CreateTable(ctx, []string{"b"}, store.NewTable{Mode: store.ModeOverwrite, Data: testRows(0, 10)}); err != nil {
		t.Fatal(err)
	}
	if n := entriesOf(db.cache, b); len(n) != 0 {
		t.Fatalf("overwritten table still cached: %v", n)
	}
	list, _, err := db.ListIndices(ctx, []string{"c"}, nil, store.Page{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ix := range list {
		if _, err := db.DropIndex(ctx, []string{"c"}, ix.Name); err != nil {
			t.Fatal(err)
		}
	}
	if n := entriesOf(db.cache, c); n["index"] != 0 || n["postings"] != 0 || n["vectors"] == 0 {
		t.Fatalf("after dropping c's indexes, its cache holds %v", n)
	}
}

// TestIndexLoadsDoNotBlockOtherTables holds the load of table a's vector
// index and checks that searches of table b run meanwhile, and that the
// searches of a waiting for that load share it.
func TestIndexLoadsDoNotBlockOtherTables(t *testing.T) {
	db, err := Open(t.Context(), filepath.Join(t.TempDir(), "c.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := t.Context()
	da, db2 := searchTable(t, db, "a", 500), searchTable(t, db, "b", 500)
	a := tableUUID(t, db, "a")
	entered, release := make(chan struct{}), make(chan struct{})
	loads := 0
	db.cache.beforeLoad = func(k cacheKey) {
		if k.table == a && strings.HasPrefix(k.name, "index/") {
			loads++
			if loads == 1 {
				close(entered)
				<-release
			}
		}
	}
	results := make(chan error, 2)
	for range 2 {
		go func() {
			got, err := nearestID(ctx, db, "a", vectorOf(da, 3), nil, "")
			if err == nil && got != 3 {
				err = fmt.Errorf("nearest to row 3 is %d", got)
			}
			results <- err
		}()
	}
	<-entered
	done := make(chan error, 1)
	go func() {
		got, err := nearestID(ctx, db, "b", vectorOf(db2, 5), nil, "")
		if err == nil && got != 5 {
			err = fmt.Errorf("nearest to row 5 is %d", got)
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a search of table b waited for the index load of table a")
	}
	close(release)
	for range 2 {
		if err := <-results; err != nil {
			t.Fatal(err)
		}
	}
	if loads != 1 {
		t.Fatalf("table a's index was loaded %d times", loads)
	}
}

// sized is a cache value of a given size.
type sized int64

func (s sized) cacheBytes() int64 { return int64(s) }

// TestMemCacheRules checks the rules of the cache on plain values: newer
// versions release older ones of the same series, a value over the budget
// is not kept, least recently used values go first, and a load that panics
// does not leave the callers waiting for it hanging.
func TestMemCacheRules(t *testing.T) {
	ctx := t.Context()
	c := newMemCache(100)
	put := func(k cacheKey, size int64) {
		t.Helper()
		if _, err := c.get(ctx, k, func() (cached, error) { return sized(size), nil }); err != nil {
			t.Fatal(err)
		}
	}
	has := func(k cacheKey) bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		_, ok := c.entries[k]
		return ok
	}
	v := func(table, name string, version int64) cacheKey { return cacheKey{table, name, version} }
	put(v("a", "vectors/c1", 3), 10)
	put(v("a", "vectors/c1", 1), 10) // time travel: kept beside version 3
	put(v("a", "vectors/c2", 2), 10)
	if !has(v("a", "vectors/c1", 3)) || !has(v("a", "vectors/c1", 1)) {
		t.Fatal("an older version released a newer one")
	}
	put(v("a", "vectors/c1", 4), 10)
	if has(v("a", "vectors/c1", 3)) || has(v("a", "vectors/c1", 1)) || !has(v("a", "vectors/c2", 2)) {
		t.Fatal("version 4 did not release exactly the older versions of its series")
	}
	if c.bytes() != 20 {
		t.Fatalf("used %d, want 20", c.bytes())
	}
	put(v("b", "index/x", noVersion), 101)
	if has(v("b", "index/x", noVersion)) || c.bytes() != 20 {
		t.Fatal("a value over the whole budget was kept")
	}
	put(v("b", "index/y", noVersion), 70)
	put(v("b", "index/z", noVersion), 20) // evicts the least recently used: vectors/c2@2
	if has(v("a", "vectors/c2", 2)) || !has(v("a", "vectors/c1", 4)) || c.bytes() != 100 {
		t.Fatalf("eviction: used %d", c.bytes())
	}
	c.forgetTables([]string{"b"})
	if c.bytes() != 10 || len(c.versions) != 1 {
		t.Fatalf("after forgetting b: used %d, series %v", c.bytes(), c.versions)
	}
	// A panicking load wakes its waiters, which then load themselves.
	k := v("c", "rows", 1)
	started, release := make(chan struct{}), make(chan struct{})
	go func() {
		defer func() { _ = recover() }()
		_, _ = c.get(ctx, k, func() (cached, error) {
			close(started)
			<-release
			panic("load failed")
		})
	}()
	<-started
	waited := make(chan error, 1)
	go func() {
		_, err := c.get(ctx, k, func() (cached, error) { return sized(1), nil })
		waited <- err
	}()
	close(release)
	if err := <-waited; err != nil || !has(k) {
		t.Fatalf("after a panicking load: %v, cached %v", err, has(k))
	}
	// A caller waiting for another's load stops when its context ends.
	k2 := v("c", "rows", 2)
	block := make(chan struct{})
	go func() { _, _ = c.get(ctx, k2, func() (cached, error) { <-block; return sized(1), nil }) }()
	for {
		c.mu.Lock()
		_, loading := c.loading[k2]
		c.mu.Unlock()
		if loading {
			break
		}
		time.Sleep(time.Millisecond)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := c.get(cctx, k2, func() (cached, error) { return sized(1), nil }); err != context.Canceled {
		t.Fatalf("waiting with a cancelled context: %v", err)
	}
	close(block)
}
