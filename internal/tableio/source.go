package tableio

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
)

// Format is a file format rows are read from and written to.
type Format string

// The formats.
const (
	CSV     Format = "csv"
	JSONL   Format = "jsonl"
	Parquet Format = "parquet"
)

// ParseFormat reads a format's name: csv, jsonl (also json, ndjson) or
// parquet.
func ParseFormat(s string) (Format, error) {
	switch strings.ToLower(s) {
	case "csv":
		return CSV, nil
	case "jsonl", "json", "ndjson":
		return JSONL, nil
	case "parquet", "pq":
		return Parquet, nil
	}
	return "", fmt.Errorf("unknown format %q: csv, jsonl or parquet", s)
}

// FormatOf returns the format a file's extension names (.csv, .jsonl,
// .ndjson, .json, .parquet), or an error.
func FormatOf(path string) (Format, error) {
	ext := strings.TrimPrefix(filepath.Ext(path), ".")
	f, err := ParseFormat(ext)
	if err != nil {
		return "", fmt.Errorf("cannot tell the format of %q from its extension: name it with --format csv, jsonl or parquet", path)
	}
	return f, nil
}

// Options say how a file is read.
type Options struct {
	// Table is the schema of the table the rows go into, when it exists:
	// a column of the file that the table has gets the table's field.
	Table *arrow.Schema
	// Overrides give columns of the file their types (--schema), over the
	// table's and the inferred ones. Each must name a column of the file.
	Overrides []arrow.Field
	// InferRows is how many rows of a CSV or JSON-lines file are read to
	// infer the column types (default 1000).
	InferRows int
	// BatchRows is the most rows of one record batch (default 16384).
	BatchRows int
	// Comma separates the fields of a CSV file (default ',').
	Comma rune
}

// Defaults of Options.
const (
	DefaultInferRows = 1000
	DefaultBatchRows = 16384
)

func (o *Options) defaults() {
	if o.InferRows <= 0 {
		o.InferRows = DefaultInferRows
	}
	if o.BatchRows <= 0 {
		o.BatchRows = DefaultBatchRows
	}
	if o.Comma == 0 {
		o.Comma = ','
	}
}

// Source yields the rows of a file as record batches of one schema, read
// as they are asked for: one batch is in memory at a time.
type Source interface {
	// Schema is the schema of every batch.
	Schema() *arrow.Schema
	// Next returns the next batch, which the caller releases, or io.EOF
	// after the last. A row that does not fit the schema is an error
	// naming its line (or row) and column.
	Next() (arrow.RecordBatch, error)
	// Progress says how far the file has been read: done of total units,
	// which are rows (Parquet) or bytes (CSV, JSON lines; total is -1 for
	// a stream of unknown length).
	Progress() (done, total int64, unit string)
	// Close releases the file.
	Close() error
}

// Open opens the file at path (for CSV and JSON lines, "-" is standard
// input) in format f and reads enough of it to fix the schema. Returns an
// error when the file cannot be read, or its columns and the overrides
// disagree.
func Open(path string, f Format, opts Options) (Source, error) {
	opts.defaults()
	if f == Parquet {
		if path == "-" {
			return nil, errors.New("a Parquet file cannot be read from standard input: give its path")
		}
		return openParquet(path, opts)
	}
	var (
		in    io.ReadCloser = os.Stdin
		total int64         = -1
	)
	if path != "-" {
		file, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		if st, err := file.Stat(); err == nil && st.Mode().IsRegular() {
			total = st.Size()
		}
		in = file
	}
	cr := &countingReader{r: in, total: total}
	var (
		src Source
		err error
	)
	switch f {
	case CSV:
		src, err = openCSV(cr, in, opts)
	case JSONL:
		src, err = openJSONL(cr, in, opts)
	default:
		err = fmt.Errorf("unknown format %q", f)
	}
	if err != nil {
		in.Close()
		return nil, err
	}
	return src, nil
}

// countingReader counts the bytes read through it, for progress.
type countingReader struct {
	r     io.Reader
	n     atomic.Int64
	total int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

func (c *countingReader) progress() (int64, int64, string) {
	return c.n.Load(), c.total, "bytes"
}

// resolveFields gives each column of a file (named by names, with the
// types inferred for them) its field: the override's type, else the
// table's field, else the inferred type. Returns an error for an override
// naming no column of the file.
func resolveFields(names []string, inferred []arrow.DataType, opts Options) ([]arrow.Field, error) {
	overrides := map[string]arrow.DataType{}
	for _, o := range opts.Overrides {
		overrides[o.Name] = o.Type
	}
	fields := make([]arrow.Field, len(names))
	seen := map[string]bool{}
	for i, name := range names {
		if seen[name] {
			return nil, fmt.Errorf("the file names column %q twice", name)
		}
		seen[name] = true
		fields[i] = arrow.Field{Name: name, Type: inferred[i], Nullable: true}
		if opts.Table != nil {
			if j := opts.Table.FieldIndices(name); len(j) > 0 {
				fields[i] = opts.Table.Field(j[0])
			}
		}
		if t, ok := overrides[name]; ok {
			fields[i].Type = t
		}
	}
	for _, o := range opts.Overrides {
		if !seen[o.Name] {
			return nil, fmt.Errorf("--schema names column %q, which the file does not have (its columns: %s)", o.Name, strings.Join(names, ", "))
		}
	}
	return fields, nil
}

// RowError is a value of the file that does not fit its column's type.
type RowError struct {
	// Line is the line of the file (CSV, JSON lines; the header is line
	// 1 of a CSV file) or the row (Parquet, from 1).
	Line   int64
	Unit   string // "line" or "row"
	Column string
	Err    error
}

func (e *RowError) Error() string {
	if e.Column == "" {
		return fmt.Sprintf("%s %d: %v", e.Unit, e.Line, e.Err)
	}
	return fmt.Sprintf("%s %d, column %s: %v (give the column another type with --schema)", e.Unit, e.Line, e.Column, e.Err)
}

func (e *RowError) Unwrap() error { return e.Err }

var (
	errNotObject = errors.New("not a JSON object")
	errTrailing  = errors.New("more than one JSON value on the line")
)

// memberError is an object naming one member twice.
type memberError struct{ name string }

func (e *memberError) Error() string { return fmt.Sprintf("member %q appears twice", e.name) }
