package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancens/lancens/lance/table"
	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/store/sqlite"
	"github.com/lancens/lancens/warehouse"
)

// indexEnv is an engine over a SQLite catalog in a temporary directory.
type indexEnv struct {
	t   testing.TB
	e   *Engine
	cat store.Backend
	dir string
	id  []string
}

func newIndexEnv(t testing.TB) *indexEnv {
	t.Helper()
	dir := t.TempDir()
	db, err := sqlite.Open(t.Context(), filepath.Join(dir, "lancens.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	env := &indexEnv{t: t, cat: db, dir: dir, id: []string{"items"}}
	env.e = env.engine()
	return env
}

// engine returns a new engine over the environment's catalog and
// warehouse, with a cache of its own.
func (env *indexEnv) engine() *Engine {
	wh, err := warehouse.Open(filepath.Join(env.dir, "wh"))
	if err != nil {
		env.t.Fatal(err)
	}
	e, err := New(Options{Catalog: env.cat, Warehouse: wh})
	if err != nil {
		env.t.Fatal(err)
	}
	return e
}

var indexWords = []string{"quick brown fox", "lazy dogs sleep", "cats chase mice", "birds sing songs", "rivers run deep"}

// vectorOf is row i's vector: one of eight clusters, with noise.
func vectorOf(i int) []float32 {
	r := rand.New(rand.NewPCG(uint64(i), 7))
	v := make([]float32, 8)
	for j := range v {
		v[j] = float32(i%8*(j%3)) + float32(r.NormFloat64())*0.3
	}
	return v
}

// rowsData returns rows from..from+n-1: id, category (c0..c4), tags
// (t0..t2, and "seven" on multiples of 7), body (words and the row's
// number) and vec.
func rowsData(from, n int) store.Data {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "category", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "tags", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
		{Name: "body", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "vec", Type: arrow.FixedSizeListOf(8, arrow.PrimitiveTypes.Float32), Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	tags := b.Field(2).(*array.ListBuilder)
	vecs := b.Field(4).(*array.FixedSizeListBuilder)
	for i := from; i < from+n; i++ {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("c%d", i%5))
		tags.Append(true)
		tags.ValueBuilder().(*array.StringBuilder).Append(fmt.Sprintf("t%d", i%3))
		if i%7 == 0 {
			tags.ValueBuilder().(*array.StringBuilder).Append("seven")
		}
		b.Field(3).(*array.StringBuilder).Append(fmt.Sprintf("%s number%d", indexWords[i%len(indexWords)], i%13))
		vecs.Append(true)
		vecs.ValueBuilder().(*array.Float32Builder).AppendValues(vectorOf(i), nil)
	}
	return store.NewData(schema, b.NewRecordBatch())
}

func (env *indexEnv) create(from, n int) {
	env.t.Helper()
	if _, _, err := env.e.CreateTable(env.t.Context(), env.id, store.NewTable{Data: rowsData(from, n)}); err != nil {
		env.t.Fatal(err)
	}
}

func (env *indexEnv) insert(mode store.InsertMode, from, n int) {
	env.t.Helper()
	if _, err := env.e.Insert(env.t.Context(), env.id, mode, rowsData(from, n)); err != nil {
		env.t.Fatal(err)
	}
}

func (env *indexEnv) index(spec store.IndexSpec) {
	env.t.Helper()
	if _, err := env.e.CreateIndex(env.t.Context(), env.id, spec); err != nil {
		env.t.Fatal(err)
	}
	env.runJobs()
}

// runJobs runs the queued index builds, as the server's job runner does.
func (env *indexEnv) runJobs() {
	env.t.Helper()
	ctx := env.t.Context()
	for {
		job, err := env.cat.ClaimJob(ctx, store.JobBuildIndex)
		if err != nil {
			env.t.Fatal(err)
		}
		if job == nil {
			return
		}
		var p store.BuildIndex
		if err := json.Unmarshal(job.Payload, &p); err != nil {
			env.t.Fatal(err)
		}
		if err := env.cat.FinishJob(ctx, job.TransactionID, env.e.BuildIndex(ctx, p)); err != nil {
			env.t.Fatal(err)
		}
	}
}

// ids runs q and returns the ids of its rows, in order.
func (env *indexEnv) ids(q store.Query) []int64 {
	env.t.Helper()
	res, err := env.e.Query(env.t.Context(), env.id, q)
	if err != nil {
		env.t.Fatalf("query %+v: %v", q, err)
	}
	return idsOf(res)
}

func idsOf(res *store.Result) []int64 {
	out := []int64{}
	for _, b := range res.Batches {
		col := b.Column(b.Schema().FieldIndices("id")[0]).(*array.Int64)
		out = append(out, col.Int64Values()...)
	}
	return out
}

// scores returns the _score of each row of a full-text search, by id.
func (env *indexEnv) scores(q store.Query) map[int64]float32 {
	env.t.Helper()
	res, err := env.e.Query(env.t.Context(), env.id, q)
	if err != nil {
		env.t.Fatalf("query %+v: %v", q, err)
	}
	out := map[int64]float32{}
	for _, b := range res.Batches {
		ids := b.Column(b.Schema().FieldIndices("id")[0]).(*array.Int64)
		sc := b.Column(b.Schema().FieldIndices("_score")[0]).(*array.Float32)
		for i := range ids.Len() {
			out[ids.Value(i)] = sc.Value(i)
		}
	}
	return out
}

func (env *indexEnv) describe(name string, version *int64) (*store.IndexInfo, error) {
	return env.e.DescribeIndex(env.t.Context(), env.id, name, version)
}

// coverage checks the indexed and unindexed rows of index name at a
// version.
func (env *indexEnv) coverage(step, name string, version *int64, status string, indexed, unindexed int64) {
	env.t.Helper()
	ix, err := env.describe(name, version)
	if err != nil {
		env.t.Fatalf("%s: describe %s: %v", step, name, err)
	}
	if ix.Status != status || ix.NumIndexedRows != indexed || ix.NumUnindexedRows != unindexed {
		env.t.Fatalf("%s: %s is %s with %d indexed, %d not; want %s, %d, %d", step, name, ix.Status, ix.NumIndexedRows, ix.NumUnindexedRows,
			status, indexed, unindexed)
	}
}

func vecQuery(q []float32, k int64) store.Query {
	return store.Query{Limit: k, Vector: &store.VectorSearch{Column: "vec", Vectors: [][]float32{q}, Nprobes: 4}}
}

func textQuery(terms string) store.Query {
	return store.Query{Limit: 100, Text: &store.TextSearch{Query: store.FtsQuery{Match: &store.FtsMatch{Terms: terms}}}}
}

// agree checks that searches and filters through the indexes answer what
// exact searches and full scans answer, at a version.
func (env *indexEnv) agree(step string, version *int64) {
	env.t.Helper()
	for _, probe := range []int{3, 500, 1050} {
		q := vecQuery(vectorOf(probe), 7)
		q.Version = version
		got := env.ids(q)
		q.Vector.BypassIndex = true
		if want := env.ids(q); !slices.Equal(got, want) {
			env.t.Fatalf("%s: nearest to %d through the index %v, exactly %v", step, probe, got, want)
		}
	}
	for _, filter := range []string{"id = 5", "id >= 995 AND id < 1003", "category IN ('c1', 'c3') AND id < 40", "array_has_any(tags, ['seven'])"} {
		got := env.ids(store.Query{Filter: filter, Version: version})
		want := env.ids(store.Query{Filter: "(" + filter + ") OR id < -1", Version: version}) // an OR no index answers
		if !slices.Equal(got, want) {
			env.t.Fatalf("%s: filter %q through the indexes %v, by a scan %v", step, filter, got, want)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// TestIndexCoverage follows the coverage of indexes through appends,
// deletes, time travel, compaction, optimize, restore and overwrite:
// indexes count as indexed the live rows of the fragments their build
// covers, searches through them agree with exact ones, and writes that
// leave an index covering nothing rebuild it.
func TestIndexCoverage(t *testing.T) {
	env := newIndexEnv(t)
	ctx := t.Context()
	env.create(0, 1000) // version 1
	env.index(store.IndexSpec{Name: "vidx", Column: "vec", Type: store.IndexIVFFlat, Vector: store.VectorIndexParams{NumPartitions: 4}})
	env.index(store.IndexSpec{Name: "ids", Column: "id", Type: store.IndexBTree})
	env.index(store.IndexSpec{Name: "cats", Column: "category", Type: store.IndexBitmap})
	env.index(store.IndexSpec{Name: "labels", Column: "tags", Type: store.IndexLabelList})
	env.index(store.IndexSpec{Name: "words", Column: "body", Type: store.IndexInverted})
	for _, name := range []string{"vidx", "ids", "cats", "labels", "words"} {
		env.coverage("built", name, nil, store.IndexSucceeded, 1000, 0)
	}
	env.agree("built", nil)

	env.insert(store.InsertAppend, 1000, 100) // version 2
	env.coverage("appended", "vidx", nil, store.IndexSucceeded, 1000, 100)
	env.coverage("appended, at the build", "vidx", ptr(int64(1)), store.IndexSucceeded, 1000, 0)
	env.agree("appended", nil)
	if got := env.ids(textQuery("number12")); !slices.Contains(got, 1091) || !slices.Contains(got, 12) {
		t.Fatalf("full-text search after an append found %v, without rows 12 and 1091", got)
	}

	if _, err := env.e.Delete(ctx, env.id, "id < 10"); err != nil { // version 3
		t.Fatal(err)
	}
	env.coverage("deleted", "ids", nil, store.IndexSucceeded, 990, 100)
	env.agree("deleted", nil)
	if got := env.ids(vecQuery(vectorOf(5), 1)); got[0] == 5 {
		t.Fatalf("a deleted row was found: %v", got)
	}
	if got := env.ids(store.Query{Filter: "id = 5"}); len(got) != 0 {
		t.Fatalf("filter on a deleted row found %v", got)
	}
	// Version 1 still has row 5, which the index holds.
	v1 := ptr(int64(1))
	if got := env.ids(store.Query{Filter: "id = 5", Version: v1}); !slices.Equal(got, []int64{5}) {
		t.Fatalf("filter at version 1 found %v", got)
	}
	q := vecQuery(vectorOf(5), 1)
	q.Version = v1
	if got := env.ids(q); got[0] != 5 {
		t.Fatalf("nearest to row 5 at version 1: %v", got)
	}
	env.agree("deleted, at version 1", v1)

	// An index built now does not exist at earlier versions.
	env.index(store.IndexSpec{Name: "late", Column: "category", Type: store.IndexBTree})
	if _, err := env.describe("late", ptr(int64(2))); !errors.Is(err, store.ErrTableIndexNotFound) {
		t.Fatalf("an index built at version 3, at version 2: %v", err)
	}
	if list, _, err := env.e.ListIndices(ctx, env.id, ptr(int64(2)), store.Page{}); err != nil || len(list) != 5 {
		t.Fatalf("indexes at version 2: %d, %v", len(list), err)
	}

	// Compaction writes new fragments, which no build covers.
	env.compact() // version 4
	env.coverage("compacted", "vidx", nil, store.IndexSucceeded, 0, 1090)
	env.agree("compacted", nil)
	txs, err := env.e.OptimizeIndexes(ctx, env.id)
	if err != nil || len(txs) != 6 {
		t.Fatalf("optimize queued %d rebuilds (%v), want 6", len(txs), err)
	}
	env.coverage("optimizing", "vidx", nil, store.IndexBuilding, 0, 1090)
	env.runJobs()
	for _, name := range []string{"vidx", "ids", "cats", "labels", "words", "late"} {
		env.coverage("optimized", name, nil, store.IndexSucceeded, 1090, 0)
	}
	env.coverage("optimized, at the first build", "vidx", v1, store.IndexSucceeded, 0, 1000)
	env.agree("optimized", nil)
	if txs, err := env.e.OptimizeIndexes(ctx, env.id); err != nil || len(txs) != 0 {
		t.Fatalf("optimizing again queued %d rebuilds (%v)", len(txs), err)
	}

	// A restore brings back fragments no build covers now: the indexes
	// are built again, and serve meanwhile.
	if _, err := env.e.Restore(ctx, env.id, 2); err != nil { // version 5
		t.Fatal(err)
	}
	env.coverage("restored", "vidx", nil, store.IndexBuilding, 0, 1100)
	env.agree("restored", nil)
	env.runJobs()
	env.coverage("restored and rebuilt", "vidx", nil, store.IndexSucceeded, 1100, 0)
	env.agree("restored and rebuilt", nil)

	env.insert(store.InsertOverwrite, 5000, 50) // version 6
	env.coverage("overwritten", "ids", nil, store.IndexBuilding, 0, 50)
	env.runJobs()
	env.coverage("overwritten and rebuilt", "ids", nil, store.IndexSucceeded, 50, 0)
	if got := env.ids(store.Query{Filter: "id = 5010"}); !slices.Equal(got, []int64{5010}) {
		t.Fatalf("after the overwrite: %v", got)
	}
}

// compact rewrites the table's fragments into one, as optimize does.
func (env *indexEnv) compact() {
	env.t.Helper()
	ctx := env.t.Context()
	r, err := env.e.findData(ctx, env.id)
	if err != nil {
		env.t.Fatal(err)
	}
	s, err := env.e.open(ctx, r, nil)
	if err != nil {
		env.t.Fatal(err)
	}
	c := &committer{e: env.e, ref: r}
	if _, stats, err := s.ds.WithOptions(env.e.writeOptions(r, c)).Compact(ctx, table.CompactOptions{}); err != nil || stats.FragmentsAdded == 0 {
		env.t.Fatalf("compact: %+v %v", stats, err)
	}
}

// TestRestoreKeepsCoverage: restoring the version an index was built on
// brings back the fragments it covers: nothing needs building again.
func TestRestoreKeepsCoverage(t *testing.T) {
	env := newIndexEnv(t)
	env.create(0, 300)
	env.index(store.IndexSpec{Name: "vidx", Column: "vec", Type: store.IndexIVFPQ, Vector: store.VectorIndexParams{NumPartitions: 2, NumSubVectors: 2}})
	env.insert(store.InsertAppend, 300, 20)
	if _, err := env.e.Restore(t.Context(), env.id, 1); err != nil {
		t.Fatal(err)
	}
	env.coverage("restored", "vidx", nil, store.IndexSucceeded, 300, 0)
	if job, err := env.cat.ClaimJob(t.Context(), store.JobBuildIndex); err != nil || job != nil {
		t.Fatalf("a restore of the built version queued %+v (%v)", job, err)
	}
}

// TestVectorIndexRecall checks every vector index type against exact
// search on a table with appends and deletes after the build: recall at
// least what vecindex's own tests hold it to, results only of live rows.
func TestVectorIndexRecall(t *testing.T) {
	for _, tc := range []struct {
		typ    string
		params store.VectorIndexParams
		tune   func(*store.VectorSearch)
		min    float64
	}{
		{store.IndexIVFFlat, store.VectorIndexParams{NumPartitions: 8}, func(v *store.VectorSearch) { v.Nprobes = 8 }, 1},
		{store.IndexIVFPQ, store.VectorIndexParams{NumPartitions: 8, NumSubVectors: 4}, func(v *store.VectorSearch) { v.Nprobes = 8; v.RefineFactor = 10 }, 0.9},
		{store.IndexIVFSQ, store.VectorIndexParams{NumPartitions: 8}, func(v *store.VectorSearch) { v.Nprobes = 8; v.RefineFactor = 5 }, 0.9},
		{store.IndexIVFHNSWSQ, store.VectorIndexParams{NumPartitions: 2}, func(v *store.VectorSearch) { v.Nprobes = 2; v.Ef = 64 }, 0.9},
		{store.IndexIVFHNSWPQ, store.VectorIndexParams{NumPartitions: 2, NumSubVectors: 4}, func(v *store.VectorSearch) {
			v.Nprobes = 2
			v.Ef = 64
			v.RefineFactor = 10
		}, 0.9},
	} {
		t.Run(tc.typ, func(t *testing.T) {
			env := newIndexEnv(t)
			env.create(0, 2000)
			env.index(store.IndexSpec{Name: "v", Column: "vec", Type: tc.typ, Vector: tc.params})
			env.insert(store.InsertAppend, 2000, 200)
			if _, err := env.e.Delete(t.Context(), env.id, "id % 10 = 3"); err != nil {
				t.Fatal(err)
			}
			var total float64
			const k, queries = 10, 40
			for i := range queries {
				q := vecQuery(vectorOf(10000+i), k)
				tc.tune(q.Vector)
				got := env.ids(q)
				q.Vector.BypassIndex = true
				want := env.ids(q)
				hit := 0
				for _, id := range got {
					if id%10 == 3 {
						t.Fatalf("query %d answered deleted row %d", i, id)
					}
					if slices.Contains(want, id) {
						hit++
					}
				}
				total += float64(hit) / k
			}
			if recall := total / queries; recall < tc.min {
				t.Fatalf("recall@%d %.3f, want at least %.2f", k, recall, tc.min)
			}
		})
	}
}

// TestScalarIndexesNarrow: the scalar indexes answer the conditions of a
// filter they can, so that the filter is evaluated on few rows, and the
// rows kept are those a full scan keeps, for every kind of condition,
// including rows written after the build and conditions no index answers.
func TestScalarIndexesNarrow(t *testing.T) {
	env := newIndexEnv(t)
	ctx := t.Context()
	env.create(0, 600)
	env.index(store.IndexSpec{Name: "ids", Column: "id", Type: store.IndexBTree})
	env.index(store.IndexSpec{Name: "cats", Column: "category", Type: store.IndexBitmap})
	env.index(store.IndexSpec{Name: "labels", Column: "tags", Type: store.IndexLabelList})
	env.insert(store.InsertAppend, 600, 50)
	for _, tc := range []struct {
		filter    string
		narrowed  bool
		wantCount int
	}{
		{"id = 17", true, 1},
		{"17 = id", true, 1},
		{"id IN (1, 2, 640)", true, 3},
		{"id > 590 AND id <= 605", true, 15},
		{"id BETWEEN 10 AND 19", true, 10},
		{"id < 3.5", true, 4},
		{"id = 2.5", true, 0},
		{"id >= 599.0 AND id < 601", true, 2},
		{"category = 'c3'", true, 130},
		{"category IN ('c1', 'c2') AND id < 10", true, 4},
		{"category = 'c1' OR id = 3", true, 131},
		{"array_has_any(tags, ['seven'])", true, 93},
		{"array_has_all(tags, ['seven', 't0'])", true, 31},
		{"array_has(tags, 't2')", true, 216},
		{"array_has_any(tags, ['nope'])", true, 0},
		{"category = 'c1' OR body LIKE 'quick%'", false, 260},
		{"category > 'c3'", true, 130},
		{"id + 0 = 5", false, 1},
		{"NOT id = 5", false, 649},
	} {
		t.Run(tc.filter, func(t *testing.T) {
			env := &indexEnv{t: t, e: env.e, cat: env.cat, dir: env.dir, id: env.id}
			got := env.ids(store.Query{Filter: tc.filter})
			want := env.ids(store.Query{Filter: "(" + tc.filter + ") OR id < -1"})
			if !slices.Equal(got, want) || len(got) != tc.wantCount {
				t.Fatalf("through the indexes %d rows %v, by a scan %d rows; want %d", len(got), got, len(want), tc.wantCount)
			}
			n, _, err := env.e.CountRows(ctx, env.id, nil, tc.filter)
			if err != nil || n != int64(tc.wantCount) {
				t.Fatalf("count %d (%v), want %d", n, err, tc.wantCount)
			}
			plan, err := env.e.ExplainQuery(ctx, env.id, store.Query{Filter: tc.filter}, false)
			if err != nil {
				t.Fatal(err)
			}
			if narrowed := strings.Contains(plan, "ScalarIndexQuery"); narrowed != tc.narrowed {
				t.Fatalf("plan narrowed by an index: %v, want %v:\n%s", narrowed, tc.narrowed, plan)
			}
		})
	}
	// The index leaves few rows to evaluate: those of the matching keys in
	// the fragment it covers; the fragment written later is read whole.
	r, err := env.e.findData(ctx, env.id)
	if err != nil {
		t.Fatal(err)
	}
	s, err := env.e.open(ctx, r, nil)
	if err != nil {
		t.Fatal(err)
	}
	rd := env.e.reader(r, s)
	if err := rd.narrowFilter(ctx, "id = 17 OR id = 18"); err != nil || rd.narrowed == nil {
		t.Fatalf("narrowing %v, %v", rd.narrowed, err)
	}
	first := s.ds.Manifest().Fragments[0].ID
	if len(rd.narrowed.frags) != 1 || rd.narrowed.frags[first].GetCardinality() != 2 {
		t.Fatalf("narrowed to %v, want rows 17 and 18 of fragment %d only", rd.narrowed.frags, first)
	}
}

// TestFullTextAcrossWrites: a full-text search after writes the index does
// not cover answers the rows and scores a search of an index built on
// everything answers.
func TestFullTextAcrossWrites(t *testing.T) {
	env := newIndexEnv(t)
	ctx := t.Context()
	env.create(0, 400)
	yes := true
	env.index(store.IndexSpec{Name: "words", Column: "body", Type: store.IndexInverted, Text: store.TextIndexParams{WithPosition: &yes}})
	env.insert(store.InsertAppend, 400, 60)
	if _, err := env.e.Delete(ctx, env.id, "id % 4 = 1"); err != nil {
		t.Fatal(err)
	}
	if _, err := env.e.Update(ctx, env.id, []store.ColumnUpdate{{Path: "body", Expr: "'zebra crossing'"}}, "id = 8"); err != nil {
		t.Fatal(err)
	}
	queries := []store.Query{
		textQuery("cats number3"),
		textQuery("zebra"),
		{Limit: 100, Text: &store.TextSearch{Query: store.FtsQuery{Phrase: &store.FtsPhrase{Terms: "lazy dogs", Column: "body"}}}},
		{Limit: 100, Filter: "id > 100", Text: &store.TextSearch{Query: store.FtsQuery{Match: &store.FtsMatch{Terms: "birds", Operator: "AND"}}}},
	}
	before := make([]map[int64]float32, len(queries))
	for i, q := range queries {
		before[i] = env.scores(q)
		if len(before[i]) == 0 {
			t.Fatalf("query %d matched nothing", i)
		}
	}
	if got := env.scores(queries[1]); len(got) != 1 || got[8] == 0 {
		t.Fatalf("the updated row: %v", got)
	}
	if _, err := env.e.OptimizeIndexes(ctx, env.id); err != nil {
		t.Fatal(err)
	}
	env.runJobs()
	env.coverage("rebuilt", "words", nil, store.IndexSucceeded, 345, 0)
	// A fresh engine reads the rebuilt index from its file.
	env.e = env.engine()
	for i, q := range queries {
		after := env.scores(q)
		if len(after) != len(before[i]) {
			t.Fatalf("query %d: %d rows after the rebuild, %d before", i, len(after), len(before[i]))
		}
		for id, s := range before[i] {
			if d := after[id] - s; d > 1e-5 || d < -1e-5 {
				t.Fatalf("query %d: row %d scored %v before the rebuild, %v after", i, id, s, after[id])
			}
		}
	}
	// An older version than the index has none: full-text search there
	// fails as on a table without one.
	env.index(store.IndexSpec{Name: "late", Column: "category", Type: store.IndexInverted})
	late := textQuery("c1")
	late.Text.Columns = []string{"category"}
	if got := env.ids(late); len(got) == 0 {
		t.Fatalf("search of the new index found nothing")
	}
	late.Version = ptr(int64(1))
	if _, err := env.e.Query(ctx, env.id, late); store.ErrorCode(err) != store.CodeInvalidInput {
		t.Fatalf("search at a version older than the index: %v", err)
	}
}

// TestIndexFiles: an index's files are under _lancens/indices/<uuid>/
// beside the data; a new engine searches through them without building;
// dropping the index removes them.
func TestIndexFiles(t *testing.T) {
	env := newIndexEnv(t)
	ctx := t.Context()
	env.create(0, 500)
	env.index(store.IndexSpec{Name: "vidx", Column: "vec", Type: store.IndexIVFHNSWSQ, Vector: store.VectorIndexParams{NumPartitions: 2}})
	env.index(store.IndexSpec{Name: "ids", Column: "id", Type: store.IndexBTree})
	ix, err := env.describe("vidx", nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := env.e.findData(ctx, env.id)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for info, err := range r.root.List(ctx, "_lancens/") {
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, info.Path)
	}
	if len(files) != 2 || !slices.ContainsFunc(files, func(p string) bool { return strings.HasPrefix(p, indexDir(ix.UUID)) }) {
		t.Fatalf("index files %q", files)
	}
	if ix.SizeBytes <= 0 {
		t.Fatalf("index size %d", ix.SizeBytes)
	}

	env.e = env.engine()
	plan, err := env.e.ExplainQuery(ctx, env.id, vecQuery(vectorOf(1), 3), true)
	if err != nil || !strings.Contains(plan, "IVF_HNSW_SQ index vidx") {
		t.Fatalf("plan of a new engine: %v\n%s", err, plan)
	}
	if err := env.e.PrewarmIndex(ctx, env.id, "ids"); err != nil {
		t.Fatal(err)
	}
	if _, err := env.e.DropIndex(ctx, env.id, "vidx"); err != nil {
		t.Fatal(err)
	}
	for info, err := range r.root.List(ctx, indexDir(ix.UUID)) {
		t.Fatalf("after the drop: %v %v", info, err)
	}
	plan, err = env.e.ExplainQuery(ctx, env.id, vecQuery(vectorOf(1), 3), false)
	if err != nil || !strings.Contains(plan, "exact search") {
		t.Fatalf("plan after the drop: %v\n%s", err, plan)
	}
	// A file gone under a record (removed by hand) fails a prewarm, and
	// searches do without it.
	ids, err := env.describe("ids", nil)
	if err != nil {
		t.Fatal(err)
	}
	env.e = env.engine()
	for info := range r.root.List(ctx, indexDir(ids.UUID)) {
		if err := r.root.Delete(ctx, info.Path); err != nil {
			t.Fatal(err)
		}
	}
	if err := env.e.PrewarmIndex(ctx, env.id, "ids"); store.ErrorCode(err) != store.CodeInvalidTableState {
		t.Fatalf("prewarm of a missing file: %v", err)
	}
	if got := env.ids(store.Query{Filter: "id = 7"}); !slices.Equal(got, []int64{7}) {
		t.Fatalf("filter beside a missing index file: %v", got)
	}
}

// TestScalarIndexFile: the file of a scalar index reads back as written,
// and damaged files are errors.
func TestScalarIndexFile(t *testing.T) {
	for _, kind := range []string{store.IndexBTree, store.IndexBitmap, store.IndexLabelList} {
		b := &scalarBuilder{si: &scalarIndex{kind: kind, class: keysText}, bySet: map[any]*roaring64.Bitmap{}}
		for i := range 50 {
			b.add(fmt.Sprintf("k%d", i%7), rowAddress(uint64(i%3), i))
		}
		si := b.finish()
		data := si.marshal()
		back, err := loadScalarIndex(data)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(back.marshal(), data) || back.keys() != si.keys() {
			t.Fatalf("%s: read back differently", kind)
		}
		for n := range len(data) {
			if _, err := loadScalarIndex(data[:n]); !errors.Is(err, errScalarCorrupt) {
				t.Fatalf("%s: %d of %d bytes: %v", kind, n, len(data), err)
			}
		}
	}
}

// TestBuildAfterCleanup checks that a queued index build whose version an
// optimize compacts and cleans up while the build reads it builds from the
// new latest version instead of failing for good.
func TestBuildAfterCleanup(t *testing.T) {
	env := newIndexEnv(t)
	ctx := t.Context()
	env.create(0, 200)
	env.insert(store.InsertAppend, 200, 200)
	if _, err := env.e.CreateIndex(ctx, env.id, store.IndexSpec{Name: "vidx", Column: "vec", Type: store.IndexIVFFlat,
		Vector: store.VectorIndexParams{NumPartitions: 4}}); err != nil {
		t.Fatal(err)
	}
	optimized := false
	beforeBuild = func() {
		if optimized {
			return
		}
		optimized = true
		if _, _, err := env.e.Optimize(ctx, env.id, time.Now().Add(time.Second)); err != nil {
			t.Errorf("optimize: %v", err)
		}
	}
	t.Cleanup(func() { beforeBuild = nil })
	env.runJobs()
	if !optimized {
		t.Fatal("the build did not run")
	}
	env.coverage("after a cleanup under the build", "vidx", nil, store.IndexSucceeded, 400, 0)
}
