package tableio

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// A JSON-lines file holds one JSON object per line, a row whose members are
// its columns; blank lines are skipped. Columns are in the order their
// members first appear in the sample; a member a row lacks is null. A row
// with a member that is no column fails the import (the sample did not
// show it: name it with --schema), rather than losing the value. Vectors
// are arrays of numbers, timestamps strings such as 2024-01-31T12:00:00Z,
// binary values base64.

// jsonlSource reads a JSON-lines file: each line is split into members,
// and each column of a batch is decoded by Arrow's JSON decoding of the
// column's type.
type jsonlSource struct {
	in     io.Closer
	cr     *countingReader
	r      *bufio.Reader
	schema *arrow.Schema
	index  map[string]int
	batch  int
	// pending holds the sampled lines, not yet returned.
	pending []jsonLine
	line    int64 // lines read so far
	done    bool
}

// jsonLine is one row: its line number and members.
type jsonLine struct {
	line   int64
	names  []string
	values []json.RawMessage
}

func openJSONL(cr *countingReader, in io.Closer, opts Options) (Source, error) {
	s := &jsonlSource{in: in, cr: cr, r: bufio.NewReaderSize(cr, 1<<20), batch: opts.BatchRows}
	var names []string
	guesses := map[string]*guess{}
	for len(s.pending) < opts.InferRows {
		row, err := s.readLine()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		s.pending = append(s.pending, row)
		for i, name := range row.names {
			var v any
			dec := json.NewDecoder(bytes.NewReader(row.values[i]))
			dec.UseNumber()
			if err := dec.Decode(&v); err != nil {
				return nil, &RowError{Line: row.line, Unit: "line", Column: name, Err: err}
			}
			g, ok := guesses[name]
			if !ok {
				names = append(names, name)
				g = &guess{kind: kindNull}
			}
			guesses[name] = merge(g, guessJSON(v))
		}
	}
	if len(names) == 0 && len(opts.Overrides) == 0 {
		return nil, errors.New("the JSON-lines file has no rows to tell its columns from: give them with --schema")
	}
	// Columns only --schema names (the sample did not show them) come
	// last.
	for _, o := range opts.Overrides {
		if _, ok := guesses[o.Name]; !ok {
			names = append(names, o.Name)
			guesses[o.Name] = &guess{kind: kindNull}
		}
	}
	inferred := make([]arrow.DataType, len(names))
	for i, name := range names {
		inferred[i] = guesses[name].arrowType()
	}
	fields, err := resolveFields(names, inferred, opts)
	if err != nil {
		return nil, err
	}
	s.schema = arrow.NewSchema(fields, nil)
	s.index = map[string]int{}
	for i, f := range fields {
		s.index[f.Name] = i
	}
	return s, nil
}

// readLine returns the next row, skipping blank lines, or io.EOF.
func (s *jsonlSource) readLine() (jsonLine, error) {
	for {
		if s.done {
			return jsonLine{}, io.EOF
		}
		b, err := s.r.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			s.done = true
		} else if err != nil {
			return jsonLine{}, err
		}
		if len(b) > 0 {
			s.line++
		}
		b = bytes.TrimSpace(b)
		if len(b) == 0 {
			continue
		}
		names, values, err := orderedMembers(b)
		if err != nil {
			return jsonLine{}, &RowError{Line: s.line, Unit: "line", Err: fmt.Errorf("want one JSON object: %v", err)}
		}
		return jsonLine{line: s.line, names: names, values: values}, nil
	}
}

func (s *jsonlSource) Schema() *arrow.Schema { return s.schema }

func (s *jsonlSource) Progress() (int64, int64, string) { return s.cr.progress() }

func (s *jsonlSource) Close() error { return s.in.Close() }

func (s *jsonlSource) Next() (arrow.RecordBatch, error) {
	rows := make([]jsonLine, 0, s.batch)
	n := min(len(s.pending), s.batch)
	rows = append(rows, s.pending[:n]...)
	s.pending = s.pending[n:]
	for len(rows) < s.batch {
		row, err := s.readLine()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
	if len(rows) == 0 {
		return nil, io.EOF
	}
	columns := make([][]json.RawMessage, len(s.schema.Fields()))
	for i := range columns {
		columns[i] = make([]json.RawMessage, len(rows))
	}
	for r, row := range rows {
		for i, name := range row.names {
			c, ok := s.index[name]
			if !ok {
				return nil, &RowError{Line: row.line, Unit: "line", Err: fmt.Errorf(
					"member %q is not a column (the first rows did not have it: name its type with --schema, or read more rows to infer types from with --infer-rows)", name)}
			}
			if !bytes.Equal(row.values[i], null) {
				columns[c][r] = row.values[i]
			}
		}
	}
	arrs := make([]arrow.Array, len(columns))
	defer func() {
		for _, a := range arrs {
			if a != nil {
				a.Release()
			}
		}
	}()
	for i, values := range columns {
		f := s.schema.Field(i)
		arr, bad, err := arrayFromJSON(f.Type, values)
		if err != nil {
			return nil, &RowError{Line: rows[max(bad, 0)].line, Unit: "line", Column: f.Name, Err: err}
		}
		arrs[i] = arr
	}
	return array.NewRecordBatch(s.schema, arrs, int64(len(rows))), nil
}
