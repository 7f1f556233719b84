package tableio

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	arrowcsv "github.com/apache/arrow-go/v18/arrow/csv"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// Writer writes record batches of one schema to a file, as they come.
type Writer interface {
	// Write writes the rows of rec.
	Write(rec arrow.RecordBatch) error
	// Close writes what the format keeps for the end (a Parquet footer)
	// and flushes; it does not close the io.Writer.
	Close() error
}

// NewWriter returns a Writer of format f to w for batches of schema. CSV
// and JSON-lines files are written as this package reads them (see csv.go
// and jsonl.go); a Parquet file records the Arrow schema, so that it
// reads back with the same types, and is compressed with Zstandard in row
// groups of up to 1Mi rows.
func NewWriter(w io.Writer, f Format, schema *arrow.Schema) (Writer, error) {
	switch f {
	case CSV:
		return newCSVWriter(w, schema), nil
	case JSONL:
		return newJSONLWriter(w, schema), nil
	case Parquet:
		props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd),
			parquet.WithMaxRowGroupLength(1<<20), parquet.WithDictionaryDefault(false))
		// pqarrow closes a writer that is an io.Closer: hide it.
		pw, err := pqarrow.NewFileWriter(schema, struct{ io.Writer }{w}, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
		if err != nil {
			return nil, fmt.Errorf("parquet: %w", err)
		}
		return parquetWriter{pw}, nil
	}
	return nil, fmt.Errorf("unknown format %q", f)
}

type parquetWriter struct{ w *pqarrow.FileWriter }

func (p parquetWriter) Write(rec arrow.RecordBatch) error { return p.w.WriteBuffered(rec) }
func (p parquetWriter) Close() error                      { return p.w.Close() }

// csvWriter writes with Arrow's CSV writer, with a header, empty cells for
// nulls, and JSON for the lists and structs it has no format for.
type csvWriter struct {
	w      *arrowcsv.Writer
	out    *bufio.Writer
	schema *arrow.Schema
	wrote  bool // a batch went to w, and with it the header
}

func newCSVWriter(w io.Writer, schema *arrow.Schema) *csvWriter {
	out := bufio.NewWriterSize(w, 1<<20)
	cw := arrowcsv.NewWriter(out, schema, arrowcsv.WithHeader(true), arrowcsv.WithNullWriter(""),
		arrowcsv.WithCustomTypeConverter(func(typ arrow.DataType, col arrow.Array) ([]string, bool) {
			if !csvJSON(typ) {
				return nil, false
			}
			cells := make([]string, col.Len())
			var buf []byte
			for i := range cells {
				if col.IsNull(i) {
					continue
				}
				buf = appendJSONValue(buf[:0], col, i)
				cells[i] = string(buf)
			}
			return cells, true
		}))
	return &csvWriter{w: cw, out: out, schema: schema}
}

func (c *csvWriter) Write(rec arrow.RecordBatch) error {
	c.wrote = true
	return c.w.Write(rec)
}

// Close writes the header if no batch did (Arrow's writer writes it with
// the first batch), then flushes.
func (c *csvWriter) Close() error {
	if !c.wrote {
		b := array.NewRecordBuilder(memory.DefaultAllocator, c.schema)
		empty := b.NewRecordBatch()
		b.Release()
		err := c.Write(empty)
		empty.Release()
		if err != nil {
			return err
		}
	}
	c.w.Flush()
	if err := c.w.Error(); err != nil {
		return err
	}
	return c.out.Flush()
}

// jsonlWriter writes one JSON object per row, its members the columns in
// order; a null is written as null.
type jsonlWriter struct {
	out   *bufio.Writer
	names [][]byte
	buf   []byte
}

func newJSONLWriter(w io.Writer, schema *arrow.Schema) *jsonlWriter {
	names := make([][]byte, schema.NumFields())
	for i, f := range schema.Fields() {
		names[i], _ = json.Marshal(f.Name)
	}
	return &jsonlWriter{out: bufio.NewWriterSize(w, 1<<20), names: names}
}

func (j *jsonlWriter) Write(rec arrow.RecordBatch) error {
	cols := rec.Columns()
	for r := 0; r < int(rec.NumRows()); r++ {
		b := append(j.buf[:0], '{')
		for c, col := range cols {
			if c > 0 {
				b = append(b, ',')
			}
			b = append(b, j.names[c]...)
			b = append(b, ':')
			b = appendJSONValue(b, col, r)
		}
		b = append(b, '}', '\n')
		if _, err := j.out.Write(b); err != nil {
			return err
		}
		j.buf = b
	}
	return nil
}

func (j *jsonlWriter) Close() error { return j.out.Flush() }

// appendJSONValue appends row i of arr as JSON: numbers as numbers (NaN
// and infinities as the strings "NaN", "Infinity", "-Infinity", which
// Arrow reads back into float columns), lists as arrays, structs as
// objects, and the rest as Arrow formats them for JSON (timestamps and
// dates as strings, binary as base64).
func appendJSONValue(b []byte, arr arrow.Array, i int) []byte {
	if arr.IsNull(i) {
		return append(b, "null"...)
	}
	switch a := arr.(type) {
	case *array.Float32:
		return appendFloat(b, float64(a.Value(i)), 32)
	case *array.Float64:
		return appendFloat(b, a.Value(i), 64)
	case *array.Int64:
		return strconv.AppendInt(b, a.Value(i), 10)
	case *array.String:
		v, _ := json.Marshal(a.Value(i))
		return append(b, v...)
	case array.ListLike:
		start, end := a.ValueOffsets(i)
		values := a.ListValues()
		b = append(b, '[')
		for k := start; k < end; k++ {
			if k > start {
				b = append(b, ',')
			}
			b = appendJSONValue(b, values, int(k))
		}
		return append(b, ']')
	case *array.Struct:
		st := a.DataType().(*arrow.StructType)
		b = append(b, '{')
		for k, f := range st.Fields() {
			if k > 0 {
				b = append(b, ',')
			}
			name, _ := json.Marshal(f.Name)
			b = append(b, name...)
			b = append(b, ':')
			b = appendJSONValue(b, a.Field(k), i)
		}
		return append(b, '}')
	}
	v, err := json.Marshal(arr.GetOneForMarshal(i))
	if err != nil {
		v, _ = json.Marshal(arr.ValueStr(i))
	}
	return append(b, v...)
}

// appendFloat appends f with the fewest digits that read back as the same
// value of its size.
func appendFloat(b []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(b, `"Infinity"`...)
	case math.IsInf(f, -1):
		return append(b, `"-Infinity"`...)
	}
	return strconv.AppendFloat(b, f, 'g', -1, bits)
}
