package tableio

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	arrowcsv "github.com/apache/arrow-go/v18/arrow/csv"
)

// A CSV file has a header line naming its columns. An empty cell is null
// (in a string column it is the empty string). Cells of list, vector and
// struct columns are JSON ([0.1, 0.2], {"a": 1}); binary cells are
// base64; timestamps are written as 2024-01-31 12:00:00 (with Z when the
// column has a zone).

// csvSource reads a CSV file. Arrow's CSV reader parses the columns it
// can; list and struct columns are read as text and decoded from JSON.
type csvSource struct {
	in     io.Closer
	cr     *countingReader
	r      csvRecordReader
	schema *arrow.Schema
	// text marks the columns read as text and decoded here.
	text []bool
	line int64 // the line of the next row (the header is line 1)
}

// csvRecordReader is what csvSource needs of Arrow's CSV reader.
type csvRecordReader interface {
	Next() bool
	RecordBatch() arrow.RecordBatch
	Err() error
	Release()
}

func openCSV(cr *countingReader, in io.Closer, opts Options) (Source, error) {
	// Read the header and a sample with encoding/csv, keeping the bytes
	// it consumed to give them to Arrow's reader after.
	var seen bytes.Buffer
	sample := csv.NewReader(io.TeeReader(cr, &seen))
	sample.Comma = opts.Comma
	sample.ReuseRecord = false
	header, err := sample.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("the CSV file is empty: it needs a header line naming its columns")
		}
		return nil, fmt.Errorf("CSV header: %w", err)
	}
	guesses := make([]*guess, len(header))
	for i := range guesses {
		guesses[i] = &guess{kind: kindNull}
	}
	for n := 0; n < opts.InferRows; n++ {
		rec, err := sample.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("CSV: %w", err)
		}
		for i, cell := range rec {
			guesses[i] = merge(guesses[i], guessText(cell))
		}
	}
	inferred := make([]arrow.DataType, len(header))
	for i, g := range guesses {
		inferred[i] = g.arrowType()
	}
	fields, err := resolveFields(header, inferred, opts)
	if err != nil {
		return nil, err
	}
	schema := arrow.NewSchema(fields, nil)
	readFields := make([]arrow.Field, len(fields))
	text := make([]bool, len(fields))
	for i, f := range fields {
		readFields[i] = f
		if !csvNative(f.Type) {
			readFields[i].Type = arrow.BinaryTypes.String
			text[i] = true
		}
	}
	rest := io.MultiReader(bytes.NewReader(seen.Bytes()), cr)
	r := newArrowCSVReader(rest, arrow.NewSchema(readFields, nil), opts)
	return &csvSource{in: in, cr: cr, r: r, schema: schema, text: text, line: 2}, nil
}

// csvNative reports whether Arrow's CSV reader reads type t from the text
// of a cell as this package writes it; cells of other types are decoded
// from JSON (lists and structs) or read as JSON strings.
func csvNative(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.BOOL, arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
		arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64, arrow.STRING, arrow.LARGE_STRING, arrow.BINARY, arrow.LARGE_BINARY,
		arrow.FIXED_SIZE_BINARY, arrow.TIMESTAMP, arrow.DATE32, arrow.DATE64, arrow.DECIMAL128, arrow.DECIMAL256:
		return true
	}
	return false
}

// csvJSON reports whether the cells of a column of type t are JSON text.
func csvJSON(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.LIST, arrow.LARGE_LIST, arrow.FIXED_SIZE_LIST, arrow.STRUCT, arrow.MAP:
		return true
	}
	return false
}

func (s *csvSource) Schema() *arrow.Schema { return s.schema }

func (s *csvSource) Progress() (int64, int64, string) { return s.cr.progress() }

func (s *csvSource) Close() error {
	s.r.Release()
	return s.in.Close()
}

func (s *csvSource) Next() (arrow.RecordBatch, error) {
	if !s.r.Next() {
		if err := s.r.Err(); err != nil {
			return nil, &RowError{Line: s.line, Unit: "line", Err: fmt.Errorf("at or after this line: %w", err)}
		}
		return nil, io.EOF
	}
	rec := s.r.RecordBatch()
	first := s.line
	s.line += rec.NumRows()
	if err := s.r.Err(); err != nil {
		// Arrow's reader records the first value it could not parse and
		// goes on; its message names the value but not the line.
		if rec.NumRows() > 1 {
			err = fmt.Errorf("in the %d lines from here: %w", rec.NumRows(), err)
		}
		return nil, &RowError{Line: first, Unit: "line", Err: err}
	}
	cols := make([]arrow.Array, rec.NumCols())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for i, col := range rec.Columns() {
		if !s.text[i] {
			col.Retain()
			cols[i] = col
			continue
		}
		f := s.schema.Field(i)
		strs := col.(*array.String)
		values := make([]json.RawMessage, strs.Len())
		for j := range values {
			switch v := strs.Value(j); {
			case !strs.IsValid(j) || v == "":
			case csvJSON(f.Type):
				values[j] = json.RawMessage(v)
			default:
				values[j], _ = json.Marshal(v)
			}
		}
		arr, bad, err := arrayFromJSON(f.Type, values)
		if err != nil {
			return nil, &RowError{Line: first + int64(max(bad, 0)), Unit: "line", Column: f.Name, Err: err}
		}
		cols[i] = arr
	}
	return array.NewRecordBatch(s.schema, cols, rec.NumRows()), nil
}

// newArrowCSVReader returns Arrow's CSV reader of r, whose header line it
// skips, with schema; only empty cells are null.
func newArrowCSVReader(r io.Reader, schema *arrow.Schema, opts Options) csvRecordReader {
	return arrowcsv.NewReader(r, schema, arrowcsv.WithHeader(true), arrowcsv.WithComma(opts.Comma),
		arrowcsv.WithChunk(opts.BatchRows), arrowcsv.WithNullReader(false, ""))
}
