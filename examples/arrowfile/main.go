// Command arrowfile writes a small table as an Arrow IPC stream file, the
// body lancens' create, insert and merge_insert take, for loading a table
// with curl:
//
//	go run ./examples/arrowfile docs.arrow
//	curl -X POST localhost:2333/v1/table/docs/create \
//	  -H 'Content-Type: application/vnd.apache.arrow.stream' --data-binary @docs.arrow
//
// The table has an id, a text and a 3-dimensional float32 vector per row.
package main

import (
	"fmt"
	"log"
	"os"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

type doc struct {
	id     int64
	text   string
	vector []float32
}

var docs = []doc{
	{1, "rivers and mountains", []float32{0.9, 0.1, 0.0}},
	{2, "cats and dogs", []float32{0.0, 0.9, 0.1}},
	{3, "mountain lakes", []float32{0.8, 0.0, 0.2}},
	{4, "dogs in the snow", []float32{0.1, 0.8, 0.3}},
	{5, "city lights", []float32{0.0, 0.1, 0.9}},
}

func main() {
	path := "docs.arrow"
	if len(os.Args) > 1 {
		path = os.Args[1]
	}
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "text", Type: arrow.BinaryTypes.String},
		{Name: "vector", Type: arrow.FixedSizeListOf(3, arrow.PrimitiveTypes.Float32)},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	ids := b.Field(0).(*array.Int64Builder)
	texts := b.Field(1).(*array.StringBuilder)
	vectors := b.Field(2).(*array.FixedSizeListBuilder)
	values := vectors.ValueBuilder().(*array.Float32Builder)
	for _, d := range docs {
		ids.Append(d.id)
		texts.Append(d.text)
		vectors.Append(true)
		values.AppendValues(d.vector, nil)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()

	f, err := os.Create(path)
	if err != nil {
		log.Fatal(err)
	}
	w := ipc.NewWriter(f, ipc.WithSchema(schema))
	if err := w.Write(rec); err != nil {
		log.Fatal(err)
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("wrote %d rows to %s\n", rec.NumRows(), path)
}
