package sqlite_test

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/store/sqlite"
)

// ingestRows returns n rows of (int64 id, utf8 text, 128-dim float32
// vector), the rows the ingest benchmarks write.
func ingestRows(n int) arrow.RecordBatch {
	const dim = 128
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "text", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "vector", Type: arrow.FixedSizeListOf(dim, arrow.PrimitiveTypes.Float32), Nullable: true}}, nil)
	r := rand.New(rand.NewPCG(1, 2))
	rb := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	vb := rb.Field(2).(*array.FixedSizeListBuilder)
	for i := range n {
		rb.Field(0).(*array.Int64Builder).Append(int64(i))
		rb.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("row %d of the ingest benchmark", i))
		vb.Append(true)
		for range dim {
			vb.ValueBuilder().(*array.Float32Builder).Append(r.Float32())
		}
	}
	return rb.NewRecordBatch()
}

// dataOf returns rec as the rows of one write.
func dataOf(rec arrow.RecordBatch) store.Data { return store.NewData(rec.Schema(), rec) }

// BenchmarkLargeInsert times one insert of 100k rows (about 55 MB).
func BenchmarkLargeInsert(b *testing.B) {
	const rows = 100_000
	rec := ingestRows(rows)
	db, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "lancens.db"), sqlite.Options{Synchronous: "NORMAL"})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if _, _, err := db.CreateTable(b.Context(), []string{"t"}, store.NewTable{Data: store.Data{Schema: rec.Schema()}}); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := db.Insert(b.Context(), []string{"t"}, store.InsertAppend, dataOf(rec)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*rows)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkCatalogWriteDuringInsert creates namespaces one after another
// while 100k-row inserts run, and reports the slowest create: how long one
// large write can make every other write wait.
func BenchmarkCatalogWriteDuringInsert(b *testing.B) {
	const rows = 100_000
	rec := ingestRows(rows)
	db, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "lancens.db"), sqlite.Options{Synchronous: "NORMAL"})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	ctx := b.Context()
	if _, _, err := db.CreateTable(ctx, []string{"t"}, store.NewTable{Data: store.Data{Schema: rec.Schema()}}); err != nil {
		b.Fatal(err)
	}
	var slowest time.Duration
	creates := 0
	for b.Loop() {
		done := make(chan error, 1)
		go func() {
			_, err := db.Insert(ctx, []string{"t"}, store.InsertAppend, dataOf(rec))
			done <- err
		}()
		for running := true; running; {
			select {
			case err := <-done:
				if err != nil {
					b.Fatal(err)
				}
				running = false
			default:
				start := time.Now()
				if _, err := db.CreateNamespace(ctx, []string{fmt.Sprint("ns", creates)}, store.ModeCreate, nil); err != nil {
					b.Fatal(err)
				}
				slowest = max(slowest, time.Since(start))
				creates++
			}
		}
	}
	b.ReportMetric(float64(slowest.Milliseconds()), "max-create-ms")
	b.ReportMetric(float64(creates)/float64(b.N), "creates/insert")
}

// BenchmarkMergeInsert merges n source rows, half of them matching, into
// a table of n rows, at two sizes; the time per source row stays flat as
// n grows when the merge scales linearly (compare the two sizes).
func BenchmarkMergeInsert(b *testing.B) {
	for _, n := range []int{2000, 8000} {
		b.Run(fmt.Sprintf("rows=%d", n), func(b *testing.B) {
			target, source := keyedRows(0, n), keyedRows(n/2, n)
			for b.Loop() {
				b.StopTimer()
				db, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "lancens.db"), sqlite.Options{Synchronous: "NORMAL"})
				if err != nil {
					b.Fatal(err)
				}
				if _, _, err := db.CreateTable(b.Context(), []string{"t"}, store.NewTable{Data: dataOf(target)}); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if _, err := db.MergeInsert(b.Context(), []string{"t"}, store.Merge{On: []string{"id"},
					WhenMatchedUpdateAll: true, WhenNotMatchedInsertAll: true, Data: dataOf(source)}); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				db.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/source-row")
		})
	}
}

// keyedRows returns n rows (int64 id from `from` on, utf8 name).
func keyedRows(from, n int) arrow.RecordBatch {
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	rb := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	for i := from; i < from+n; i++ {
		rb.Field(0).(*array.Int64Builder).Append(int64(i))
		rb.Field(1).(*array.StringBuilder).Append(fmt.Sprint("name ", i))
	}
	return rb.NewRecordBatch()
}
