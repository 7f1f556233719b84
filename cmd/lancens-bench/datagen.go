package main

import (
	"fmt"
	"math/rand/v2"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

var words = []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet",
	"kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo", "sierra", "tango", "uniform", "victor",
	"whiskey", "xray", "yankee", "zulu", "lance", "vector", "search", "table"}

// sentence returns n random words joined by spaces.
func sentence(r *rand.Rand, n int) string {
	b := []byte{}
	for i := range n {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, words[r.IntN(len(words))]...)
	}
	return string(b)
}

// vectorSchema is (id int64, text utf8, vector fixed_size_list<float32>[dim]).
func vectorSchema(dim int) *arrow.Schema {
	return arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "text", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "vector", Type: arrow.FixedSizeListOf(int32(dim), arrow.PrimitiveTypes.Float32), Nullable: true},
	}, nil)
}

// vectorBatches generates n rows of vectorSchema in batches of batchRows.
// vec supplies each row's vector (nil: uniform random).
func vectorBatches(n, dim, batchRows int, seed uint64, vec func(i int) []float32) []arrow.RecordBatch {
	r := rand.New(rand.NewPCG(seed, 1))
	schema := vectorSchema(dim)
	var out []arrow.RecordBatch
	for start := 0; start < n; start += batchRows {
		end := min(n, start+batchRows)
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		ids := b.Field(0).(*array.Int64Builder)
		texts := b.Field(1).(*array.StringBuilder)
		vl := b.Field(2).(*array.FixedSizeListBuilder)
		vb := vl.ValueBuilder().(*array.Float32Builder)
		for i := start; i < end; i++ {
			ids.Append(int64(i))
			texts.Append(sentence(r, 8+r.IntN(8)))
			vl.Append(true)
			if vec != nil {
				vb.AppendValues(vec(i), nil)
				continue
			}
			for range dim {
				vb.Append(r.Float32())
			}
		}
		out = append(out, b.NewRecordBatch())
		b.Release()
	}
	return out
}

// factSchema is (id int64, category int32, price float64, text utf8): a
// table for filtered scans.
var factSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "category", Type: arrow.PrimitiveTypes.Int32},
	{Name: "price", Type: arrow.PrimitiveTypes.Float64},
	{Name: "text", Type: arrow.BinaryTypes.String},
}, nil)

func factBatches(n, batchRows int, seed uint64) []arrow.RecordBatch {
	r := rand.New(rand.NewPCG(seed, 2))
	var out []arrow.RecordBatch
	for start := 0; start < n; start += batchRows {
		end := min(n, start+batchRows)
		b := array.NewRecordBuilder(memory.DefaultAllocator, factSchema)
		for i := start; i < end; i++ {
			b.Field(0).(*array.Int64Builder).Append(int64(i))
			b.Field(1).(*array.Int32Builder).Append(int32(r.IntN(100)))
			b.Field(2).(*array.Float64Builder).Append(float64(r.IntN(100000)) / 100)
			b.Field(3).(*array.StringBuilder).Append(fmt.Sprintf("item %d %s", i, words[r.IntN(len(words))]))
		}
		out = append(out, b.NewRecordBatch())
		b.Release()
	}
	return out
}
