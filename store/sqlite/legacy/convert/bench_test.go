package convert_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancens/lancens/engine"
	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/store/sqlite"
	"github.com/lancens/lancens/store/sqlite/legacy/convert"
	"github.com/lancens/lancens/warehouse"
)

// benchRows is the data suite's ingest: n rows of (id, text, 128-d
// vector), in batches of 10,000.
func benchRows(n int) (*arrow.Schema, []arrow.RecordBatch) {
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
	return schema, out
}

// BenchmarkConvert converts a managed table of the row store holding the
// data suite's 100,000 rows, as five versions (a create and four appends
// of 20,000 rows, then a delete of 1,000 and an update of 1,000), and
// reports the rows it wrote per second, against the engine writing the
// same rows into a new table from Arrow in the same run
// (speed_vs_engine_create: the conversion's rows per second over the
// engine's). The source database is made once and copied for each
// conversion.
func BenchmarkConvert(b *testing.B) {
	ctx := context.Background()
	schema, recs := benchRows(100_000)
	src := filepath.Join(b.TempDir(), "source.db")
	db, err := sqlite.Open(ctx, src, sqlite.Options{Synchronous: "NORMAL"})
	if err != nil {
		b.Fatal(err)
	}
	id := []string{"docs"}
	part := func(from, to int) store.Data { return store.NewData(schema, recs[from/10_000:to/10_000]...) }
	if _, _, err := db.CreateTable(ctx, id, store.NewTable{Data: part(0, 20_000)}); err != nil {
		b.Fatal(err)
	}
	for from := 20_000; from < 100_000; from += 20_000 {
		if _, err := db.Insert(ctx, id, store.InsertAppend, part(from, from+20_000)); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := db.Delete(ctx, id, "id % 100 = 7"); err != nil {
		b.Fatal(err)
	}
	if _, err := db.Update(ctx, id, []store.ColumnUpdate{{Path: "text", Expr: "'updated'"}}, "id % 100 = 8"); err != nil {
		b.Fatal(err)
	}
	if err := db.Close(); err != nil {
		b.Fatal(err)
	}
	srcBytes, err := os.ReadFile(src)
	if err != nil {
		b.Fatal(err)
	}

	var convertTime, createTime time.Duration
	var convertRows int64
	for b.Loop() {
		b.StopTimer()
		dir := b.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "lancens.db"), srcBytes, 0o644); err != nil {
			b.Fatal(err)
		}
		db, err := sqlite.Open(ctx, filepath.Join(dir, "lancens.db"), sqlite.Options{})
		if err != nil {
			b.Fatal(err)
		}
		wh, err := warehouse.Open(dir)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		sum, err := convert.Run(ctx, db, convert.Options{Warehouse: wh})
		if err != nil || sum.Tables != 1 {
			b.Fatalf("converted %d tables: %v", sum.Tables, err)
		}
		convertTime += time.Since(start)
		convertRows += sum.Rows

		// The peer: the engine writes the same rows into a new table.
		b.StopTimer()
		e, err := engine.New(engine.Options{Catalog: db, Warehouse: wh})
		if err != nil {
			b.Fatal(err)
		}
		start = time.Now()
		if _, _, err := e.CreateTable(ctx, []string{"peer"}, store.NewTable{Data: part(0, 100_000)}); err != nil {
			b.Fatal(err)
		}
		createTime += time.Since(start)
		db.Close()
		b.StartTimer()
	}
	convertRate := float64(convertRows) / convertTime.Seconds()
	createRate := float64(b.N*100_000) / createTime.Seconds()
	b.ReportMetric(convertRate, "rows/s")
	b.ReportMetric(convertRate/createRate, "speed_vs_engine_create")
}
