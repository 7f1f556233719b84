package table

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"iter"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancens/lancens/lance/blob"
	"github.com/lancens/lancens/lance/file"
	"github.com/lancens/lancens/lance/schema"
)

// DefaultMaxRowsPerFile is the most rows WriteFragments puts in one data
// file (and so one fragment), Lance's default.
const DefaultMaxRowsPerFile = 1 << 20

// NewDataFileName returns a fresh data file name as Lance makes them: the
// bits of a random UUID's first three bytes, then its other thirteen in
// hex, then ".lance" (a prefix that spreads files over an object store's
// partitions).
func NewDataFileName() string {
	var u [16]byte
	_, _ = rand.Read(u[:])
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	var b strings.Builder
	for _, x := range u[:3] {
		fmt.Fprintf(&b, "%08b", x)
	}
	b.WriteString(hex.EncodeToString(u[3:]))
	b.WriteString(".lance")
	return b.String()
}

// WriteOptions configure how WriteFragments writes data files.
type WriteOptions struct {
	// MaxRowsPerFile starts a new fragment after this many rows; 0 is
	// DefaultMaxRowsPerFile.
	MaxRowsPerFile uint64
	// File are the data file writer's options (the format version: 2.0).
	File file.WriteOptions
}

// WriteFragments writes the rows of batches (whose columns are matched to
// sch's top-level fields by name) into new data files under data/ of
// store, a new fragment every MaxRowsPerFile rows, and returns the
// fragments (ids unassigned) for Create, Append or Overwrite. sch must
// carry the dataset's field ids. Nothing refers to the files until a
// commit does; on error the file being written is discarded and those
// already written stay unreferenced (Cleanup removes them). It returns
// the errors of batches, of lance/file's writer (ErrInvalid-like schema
// mismatches wrap schema.ErrInvalid) and of the store.
func WriteFragments(ctx context.Context, store blob.Store, sch *schema.Schema, batches iter.Seq2[arrow.RecordBatch, error], opts WriteOptions) ([]*Fragment, error) {
	limit := opts.MaxRowsPerFile
	if limit == 0 {
		limit = DefaultMaxRowsPerFile
	}
	var out []*Fragment
	var w *file.Writer
	var name string
	var rows uint64
	finish := func() error {
		written, err := w.Close()
		w = nil
		if err != nil {
			return err
		}
		out = append(out, &Fragment{PhysicalRows: written.Rows, Files: []DataFile{{
			Path: name, Fields: written.FieldIDs, ColumnIndices: written.ColumnIndices,
			MajorVersion: uint32(written.Version.Major), MinorVersion: uint32(written.Version.Minor), Size: uint64(written.Size),
		}}})
		rows = 0
		return nil
	}
	fail := func(err error) ([]*Fragment, error) {
		if w != nil {
			err = errors.Join(err, w.Abort())
		}
		return nil, err
	}
	for rec, err := range batches {
		if err != nil {
			return fail(err)
		}
		for off := int64(0); off < rec.NumRows(); {
			if w == nil {
				name = NewDataFileName()
				if w, err = file.Create(ctx, store, "data/"+name, sch, &opts.File); err != nil {
					return fail(err)
				}
			}
			n := min(rec.NumRows()-off, int64(limit-rows))
			part := rec
			if off > 0 || n < rec.NumRows() {
				part = rec.NewSlice(off, off+n)
			}
			err := w.Write(part)
			if part != rec {
				part.Release()
			}
			if err != nil {
				return fail(err)
			}
			off += n
			rows += uint64(n)
			if rows == limit {
				if err := finish(); err != nil {
					return fail(err)
				}
			}
		}
	}
	if w != nil && rows > 0 {
		if err := finish(); err != nil {
			return fail(err)
		}
	} else if w != nil {
		if err := w.Abort(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Batches returns an iterator over recs, for WriteFragments.
func Batches(recs ...arrow.RecordBatch) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		for _, r := range recs {
			if !yield(r, nil) {
				return
			}
		}
	}
}

// WriteDataFile writes the rows of batches into one new data file under
// data/ of store, holding the fields of sch (with their dataset ids), and
// returns it with its number of rows: a ColumnWriter's file for
// AddColumns, say. It returns the errors of WriteFragments.
func WriteDataFile(ctx context.Context, store blob.Store, sch *schema.Schema, batches iter.Seq2[arrow.RecordBatch, error], opts file.WriteOptions) (DataFile, uint64, error) {
	name := NewDataFileName()
	w, err := file.Create(ctx, store, "data/"+name, sch, &opts)
	if err != nil {
		return DataFile{}, 0, err
	}
	for rec, err := range batches {
		if err == nil {
			err = w.Write(rec)
		}
		if err != nil {
			return DataFile{}, 0, errors.Join(err, w.Abort())
		}
	}
	written, err := w.Close()
	if err != nil {
		return DataFile{}, 0, err
	}
	return DataFile{
		Path: name, Fields: written.FieldIDs, ColumnIndices: written.ColumnIndices,
		MajorVersion: uint32(written.Version.Major), MinorVersion: uint32(written.Version.Minor), Size: uint64(written.Size),
	}, written.Rows, nil
}
