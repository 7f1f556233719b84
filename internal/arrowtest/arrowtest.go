// Package arrowtest builds Arrow data for tests.
package arrowtest

import (
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Record builds one record batch of schema from a JSON array of row
// objects, failing the test on error.
func Record(t testing.TB, schema *arrow.Schema, rows string) arrow.RecordBatch {
	t.Helper()
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, schema, strings.NewReader(rows))
	if err != nil {
		t.Fatalf("building a record: %v", err)
	}
	return rec
}

// Column builds one array of type dt from a JSON array.
func Column(t testing.TB, dt arrow.DataType, values string) arrow.Array {
	t.Helper()
	arr, _, err := array.FromJSON(memory.DefaultAllocator, dt, strings.NewReader(values))
	if err != nil {
		t.Fatalf("building a %s column: %v", dt, err)
	}
	return arr
}

// Schema builds a schema of nullable fields from name/type pairs.
func Schema(pairs ...any) *arrow.Schema {
	fields := make([]arrow.Field, 0, len(pairs)/2)
	for i := 0; i+1 < len(pairs); i += 2 {
		fields = append(fields, arrow.Field{Name: pairs[i].(string), Type: pairs[i+1].(arrow.DataType), Nullable: true})
	}
	return arrow.NewSchema(fields, nil)
}

// Concat joins record batches of one schema into one.
func Concat(t testing.TB, schema *arrow.Schema, batches []arrow.RecordBatch) arrow.RecordBatch {
	t.Helper()
	cols := make([]arrow.Array, schema.NumFields())
	var n int64
	for _, b := range batches {
		n += b.NumRows()
	}
	for i := range cols {
		parts := make([]arrow.Array, 0, len(batches))
		for _, b := range batches {
			parts = append(parts, b.Column(i))
		}
		if len(parts) == 0 {
			cols[i] = array.MakeArrayOfNull(memory.DefaultAllocator, schema.Field(i).Type, 0)
			continue
		}
		c, err := array.Concatenate(parts, memory.DefaultAllocator)
		if err != nil {
			t.Fatal(err)
		}
		cols[i] = c
	}
	return array.NewRecordBatch(schema, cols, n)
}

// ZeroVectors builds a batch of one column "v", fixed_size_list<float32>
// of dim items, holding rows vectors of zeros (no nulls): data that
// compresses to almost nothing.
func ZeroVectors(rows, dim int) arrow.RecordBatch {
	vt := arrow.FixedSizeListOf(int32(dim), arrow.PrimitiveTypes.Float32)
	schema := arrow.NewSchema([]arrow.Field{{Name: "v", Type: vt, Nullable: true}}, nil)
	values := array.NewData(arrow.PrimitiveTypes.Float32, rows*dim,
		[]*memory.Buffer{nil, memory.NewBufferBytes(make([]byte, 4*rows*dim))}, nil, 0, 0)
	list := array.NewData(vt, rows, []*memory.Buffer{nil}, []arrow.ArrayData{values}, 0, 0)
	return array.NewRecordBatch(schema, []arrow.Array{array.MakeFromData(list)}, int64(rows))
}
