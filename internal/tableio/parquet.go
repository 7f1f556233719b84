package tableio

import (
	"context"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// A Parquet file's columns keep the Arrow types it records (files written
// by Arrow carry their Arrow schema), with one exception: a column of lists
// of floating-point numbers whose first batch has one length N in every
// row is a vector column, vector[N], as LanceDB treats such lists (name
// the column with --schema to keep the lists). Parquet files are read a
// batch at a time, row group after row group.

// parquetSource reads a Parquet file through pqarrow.
type parquetSource struct {
	f      *file.Reader
	rr     pqarrow.RecordReader
	schema *arrow.Schema
	// first is a batch read to fix the schema, not yet returned.
	first arrow.RecordBatch
	// rows counts the rows returned so far; Progress reads it from
	// another goroutine.
	rows  atomic.Int64
	total int64
}

func openParquet(path string, opts Options) (Source, error) {
	f, err := file.OpenParquetFile(path, false)
	if err != nil {
		return nil, fmt.Errorf("open Parquet file %s: %w", path, err)
	}
	s := &parquetSource{f: f, total: f.NumRows()}
	if err := s.open(opts); err != nil {
		f.Close()
		return nil, err
	}
	return s, nil
}

func (s *parquetSource) open(opts Options) error {
	fr, err := pqarrow.NewFileReader(s.f, pqarrow.ArrowReadProperties{BatchSize: int64(opts.BatchRows)}, memory.DefaultAllocator)
	if err != nil {
		return fmt.Errorf("read Parquet schema: %w", err)
	}
	fileSchema, err := fr.Schema()
	if err != nil {
		return fmt.Errorf("read Parquet schema: %w", err)
	}
	if s.rr, err = fr.GetRecordReader(context.Background(), nil, nil); err != nil {
		return fmt.Errorf("read Parquet file: %w", err)
	}
	if s.rr.Next() {
		s.first = s.rr.RecordBatch()
		s.first.Retain()
	} else if err := s.rr.Err(); err != nil && err != io.EOF {
		return fmt.Errorf("read Parquet file: %w", err)
	}
	names := make([]string, fileSchema.NumFields())
	inferred := make([]arrow.DataType, len(names))
	for i, f := range fileSchema.Fields() {
		names[i] = f.Name
		inferred[i] = f.Type
		if s.first != nil {
			if n := uniformFloatLists(s.first.Column(i)); n > 0 {
				inferred[i] = arrow.FixedSizeListOf(int32(n), arrow.PrimitiveTypes.Float32)
			}
		}
	}
	fields, err := resolveFields(names, inferred, opts)
	if err != nil {
		return err
	}
	s.schema = arrow.NewSchema(fields, nil)
	return nil
}

// uniformFloatLists returns N when arr is a list of floating-point
// numbers with N > 0 values in each of its lists, else 0.
func uniformFloatLists(arr arrow.Array) int64 {
	list, ok := arr.(array.ListLike)
	if !ok || arr.DataType().ID() == arrow.FIXED_SIZE_LIST {
		return 0
	}
	switch list.ListValues().DataType().ID() {
	case arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64:
	default:
		return 0
	}
	n := int64(-1)
	for i := 0; i < list.Len(); i++ {
		if list.IsNull(i) {
			continue
		}
		start, end := list.ValueOffsets(i)
		if n >= 0 && end-start != n {
			return 0
		}
		n = end - start
	}
	return max(n, 0)
}

func (s *parquetSource) Schema() *arrow.Schema { return s.schema }

func (s *parquetSource) Progress() (int64, int64, string) { return s.rows.Load(), s.total, "rows" }

func (s *parquetSource) Close() error {
	if s.first != nil {
		s.first.Release()
		s.first = nil
	}
	if s.rr != nil {
		s.rr.Release()
	}
	return s.f.Close()
}

func (s *parquetSource) Next() (arrow.RecordBatch, error) {
	rec := s.first
	s.first = nil
	if rec == nil {
		if !s.rr.Next() {
			if err := s.rr.Err(); err != nil && err != io.EOF {
				return nil, &RowError{Line: s.rows.Load() + 1, Unit: "row", Err: err}
			}
			return nil, io.EOF
		}
		rec = s.rr.RecordBatch()
		rec.Retain()
	}
	defer rec.Release()
	out, err := conformBatch(rec, s.schema, s.rows.Load()+1)
	if err != nil {
		return nil, err
	}
	s.rows.Add(rec.NumRows())
	return out, nil
}
