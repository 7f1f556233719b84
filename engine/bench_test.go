package engine_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/store/sqlite"
)

// factData is the data suite's table of facts (id, category, price, text):
// n rows in batches of 50,000.
func factData(n int) store.Data {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "category", Type: arrow.PrimitiveTypes.Int32},
		{Name: "price", Type: arrow.PrimitiveTypes.Float64},
		{Name: "text", Type: arrow.BinaryTypes.String},
	}, nil)
	r := rand.New(rand.NewPCG(7, 2))
	var batches []arrow.RecordBatch
	for start := 0; start < n; start += 50_000 {
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		for i := start; i < min(n, start+50_000); i++ {
			b.Field(0).(*array.Int64Builder).Append(int64(i))
			b.Field(1).(*array.Int32Builder).Append(int32(r.IntN(100)))
			b.Field(2).(*array.Float64Builder).Append(float64(r.IntN(100000)) / 100)
			b.Field(3).(*array.StringBuilder).Append(fmt.Sprintf("item %d", i))
		}
		batches = append(batches, b.NewRecordBatch())
		b.Release()
	}
	return store.NewData(schema, batches...)
}

// benchTable makes a table of n facts and returns the engine's backend.
func benchTable(b *testing.B, n int) store.ManagedBackend {
	db, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "lancens.db"), sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	_, tg := newEngine(b, db)
	if _, _, err := tg.CreateTable(context.Background(), []string{"facts"}, store.NewTable{Data: factData(n)}); err != nil {
		b.Fatal(err)
	}
	return tg
}

// BenchmarkFilteredCount is the data suite's filtered count over a
// million rows, with the columns cached after the first call.
func BenchmarkFilteredCount(b *testing.B) {
	tg := benchTable(b, 1_000_000)
	ctx := context.Background()
	for b.Loop() {
		if _, _, err := tg.CountRows(ctx, []string{"facts"}, nil, "category = 7 AND price > 500"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFilteredQuery is the data suite's filtered query: 100 rows of
// two columns.
func BenchmarkFilteredQuery(b *testing.B) {
	tg := benchTable(b, 1_000_000)
	ctx := context.Background()
	q := store.Query{Filter: "category = 42 AND price > 900", Limit: 100, Projection: store.Projection{Columns: []string{"id", "price"}}}
	for b.Loop() {
		if _, err := tg.Query(ctx, []string{"facts"}, q); err != nil {
			b.Fatal(err)
		}
	}
}

// ingestData is the data suite's ingest: n rows of (id, text, 128-d
// vector) in batches of 10,000.
func ingestData(n int) []arrow.RecordBatch {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "text", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "vector", Type: arrow.FixedSizeListOf(128, arrow.PrimitiveTypes.Float32), Nullable: true},
	}, nil)
	r := rand.New(rand.NewPCG(42, 1))
	var out []arrow.RecordBatch
	for start := 0; start < n; start += 10_000 {
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		vl := b.Field(2).(*array.FixedSizeListBuilder)
		vb := vl.ValueBuilder().(*array.Float32Builder)
		for i := start; i < min(n, start+10_000); i++ {
			b.Field(0).(*array.Int64Builder).Append(int64(i))
			b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("document %d about cats and rivers and mountains", i))
			vl.Append(true)
			for range 128 {
				vb.Append(r.Float32())
			}
		}
		out = append(out, b.NewRecordBatch())
		b.Release()
	}
	return out
}

// BenchmarkIngest is the data suite's ingest without HTTP: a table made
// from the first 10,000 rows, then nine appends of 10,000, each a durable
// commit (SQLite's default synchronous mode, data files synced).
func BenchmarkIngest(b *testing.B) {
	data := ingestData(100_000)
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "lancens.db"), sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	_, tg := newEngine(b, db)
	for i := 0; b.Loop(); i++ {
		id := []string{fmt.Sprintf("ingest%d", i)}
		if _, _, err := tg.CreateTable(ctx, id, store.NewTable{Data: store.NewData(data[0].Schema(), data[0])}); err != nil {
			b.Fatal(err)
		}
		for _, d := range data[1:] {
			if _, err := tg.Insert(ctx, id, store.InsertAppend, store.NewData(d.Schema(), d)); err != nil {
				b.Fatal(err)
			}
		}
	}
}
