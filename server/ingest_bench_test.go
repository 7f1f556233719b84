package server_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancens/lancens/internal/testkit/apitest"
)

// BenchmarkIngest times inserting 10k-row batches of (int64 id, utf8 text,
// 128-dim float32 vector), the rows make bench ingests, over HTTP.
func BenchmarkIngest(b *testing.B) {
	s := apitest.Start(b, apitest.Options{})
	const dim, rows = 128, 10_000
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "text", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "vector", Type: arrow.FixedSizeListOf(dim, arrow.PrimitiveTypes.Float32), Nullable: true}}, nil)
	r := rand.New(rand.NewPCG(1, 2))
	rb := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	vb := rb.Field(2).(*array.FixedSizeListBuilder)
	for i := range rows {
		rb.Field(0).(*array.Int64Builder).Append(int64(i))
		rb.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("row %d of the ingest benchmark", i))
		vb.Append(true)
		for range dim {
			vb.ValueBuilder().(*array.Float32Builder).Append(r.Float32())
		}
	}
	batch := rb.NewRecordBatch()
	if _, err := s.Client.CreateTable(b.Context(), []string{"t"}, schema, nil, nil); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(rows * (8 + 30 + 4*dim)))
	for b.Loop() {
		if _, err := s.Client.Insert(b.Context(), []string{"t"}, schema, []arrow.RecordBatch{batch}, ""); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*rows)/b.Elapsed().Seconds(), "rows/s")
}
