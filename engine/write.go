package engine

import (
	"context"
	"errors"
	"io"
	"iter"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancens/lancens/lance/blob"
	"github.com/lancens/lancens/lance/file"
	"github.com/lancens/lancens/lance/schema"
	"github.com/lancens/lancens/lance/table"
	"github.com/lancens/lancens/store"
)

// batchesOf yields the record batches of a write, in order, as its
// stream gives them; it is the one place that reads store.Data. The
// write owns each batch: it is released once the consumer has moved on
// (the consumer retains what it keeps longer), so that the decode budget
// the batch holds is returned as the write goes. An error of the stream
// ends the sequence unchanged.
func batchesOf(d store.Data) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		if d.Batches == nil {
			return
		}
		for {
			b, err := d.Batches.Next()
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				yield(nil, err)
				return
			}
			more := yield(b, nil)
			b.Release()
			if !more {
				return
			}
		}
	}
}

// conformed yields the batches of d as batches of the table's schema (see
// conformer), releasing each once the consumer has moved on, and counts
// their rows into *rows. An error ends the sequence: the stream's, or
// TableSchemaValidationError (20) for a batch that does not fit.
func conformed(c *conformer, d store.Data, rows *int64) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		for b, err := range batchesOf(d) {
			if err != nil {
				yield(nil, err)
				return
			}
			rec, err := c.conform(memory.DefaultAllocator, b)
			if err != nil {
				yield(nil, err)
				return
			}
			*rows += rec.NumRows()
			more := yield(rec, nil)
			rec.Release()
			if !more {
				return
			}
		}
	}
}

// writeFragments streams rows (of the table's schema sch, with its field
// ids) into new data files under st, the branch's store, and returns the
// fragments for a commit, with the file options fo. Nothing refers to
// the files until a commit does. It returns the errors of rows and of writing (dataError).
func (e *Engine) writeFragments(ctx context.Context, id []string, st blob.Store, sch *schema.Schema, fo file.WriteOptions, rows iter.Seq2[arrow.RecordBatch, error]) ([]*table.Fragment, error) {
	frags, err := table.WriteFragments(ctx, st, sch, rows, table.WriteOptions{MaxRowsPerFile: e.maxRows, File: fo})
	if err != nil {
		return nil, writeError(id, err)
	}
	return frags, nil
}

// writeError is dataError for the errors of writing rows: rows the data
// file writer refuses (schema.ErrInvalid: a null where none may be, say)
// are TableSchemaValidationError (20).
func writeError(id []string, err error) error {
	if se := schemaError(err); se != err {
		return se
	}
	return dataError(id, err)
}

// fileOptions returns the options of the data files a write adds to the
// version m: the engine's, in the format version of the dataset's files
// (a dataset keeps the version it was created with: Lance 12 creates 2.2,
// lancens 2.0 unless told otherwise).
func (e *Engine) fileOptions(m *table.Manifest) file.WriteOptions {
	o := e.fileOpts
	switch m.DataFormat.Version {
	case "2.0":
		o.Version = file.V2_0
	case "2.1":
		o.Version = file.V2_1
	case "2.2":
		o.Version = file.V2_2
	}
	return o
}
