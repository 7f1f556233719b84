package table

import (
	"context"
	"fmt"
	"iter"
	"slices"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancens/lancens/lance/file"
	"github.com/lancens/lancens/lance/schema"
)

// FragmentReader reads the rows of one fragment: the fields of a
// projection gathered from the fragment's data files (each field from the
// file that holds it, or nulls when none does, as for a column added
// without values), with or without its deleted rows. Its methods are safe
// for concurrent use.
type FragmentReader struct {
	f       *Fragment
	proj    *schema.Schema
	arrow   *arrow.Schema
	deleted *roaring.Bitmap
	// parts are the data files read, each with the projected fields it
	// supplies; fields no file supplies are nulls.
	parts  []fragmentPart
	source []int // per projected top-level field: its part, or -1
	mem    memory.Allocator
}

type fragmentPart struct {
	path string
	r    *file.Reader
	proj *schema.Schema
}

// OpenFragment opens fragment f of d for reading the fields of proj (a
// projection of d's schema, such as Schema.Project returns; nil for the
// whole schema). It reads the fragment's deletion file and the metadata of
// the data files that hold projected fields. It returns an error wrapping
// ErrInvalid when proj names fields the schema lacks, ErrUnsupported when
// a field's values are split over several data files, and the errors of
// opening the files (lance/file's ErrCorrupt and ErrUnsupported among
// them) and of Deletions.
func (d *Dataset) OpenFragment(ctx context.Context, f *Fragment, proj *schema.Schema, opts *file.ReadOptions) (*FragmentReader, error) {
	if proj == nil {
		proj = d.m.Schema
	}
	as, err := proj.ToArrow()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	deleted, err := d.Deletions(ctx, f)
	if err != nil {
		return nil, err
	}
	fr := &FragmentReader{f: f, proj: proj, arrow: as, deleted: deleted, source: make([]int, len(proj.Fields)), mem: memory.DefaultAllocator}
	if opts != nil && opts.Mem != nil {
		fr.mem = opts.Mem
	}
	for i, top := range proj.Fields {
		if d.m.Schema.FieldByID(top.ID) == nil {
			return nil, invalidf("field %s (id %d) is not in the schema of version %d", top.Name, top.ID, d.m.Version)
		}
		fr.source[i] = -1
		for j := len(f.Files) - 1; j >= 0; j-- { // a later file supersedes an earlier one
			df := &f.Files[j]
			holds := holdsField(df, top)
			if holds == 0 {
				continue
			}
			if holds < 0 {
				return nil, unsupportedf("fragment %d: data file %s holds part of field %s", f.ID, df.Path, top.Name)
			}
			k := slices.IndexFunc(fr.parts, func(p fragmentPart) bool { return p.path == df.Path })
			if k < 0 {
				s, p, err := d.DataFile(ctx, df)
				if err != nil {
					return nil, err
				}
				ro := file.ReadOptions{Size: int64(df.Size)}
				if opts != nil {
					ro = *opts
					ro.Size = int64(df.Size)
				}
				r, err := file.Open(ctx, s, p, &ro)
				if err != nil {
					return nil, fmt.Errorf("fragment %d: %w", f.ID, err)
				}
				if r.NumRows() != f.PhysicalRows {
					return nil, corruptf("fragment %d has %d rows, its data file %s %d", f.ID, f.PhysicalRows, df.Path, r.NumRows())
				}
				fr.parts = append(fr.parts, fragmentPart{path: df.Path, r: r, proj: &schema.Schema{}})
				k = len(fr.parts) - 1
			}
			fr.parts[k].proj.Fields = append(fr.parts[k].proj.Fields, top)
			fr.source[i] = k
			break
		}
	}
	return fr, nil
}

// FileHolding returns the data file of f that holds the values of top, a
// top-level field of the schema (with its children), or nil when no file
// does (a column added without values reads as nulls). A later file
// supersedes an earlier one. It returns an error wrapping ErrUnsupported
// when a file holds only part of the field.
func (f *Fragment) FileHolding(top *schema.Field) (*DataFile, error) {
	for j := len(f.Files) - 1; j >= 0; j-- {
		df := &f.Files[j]
		switch holdsField(df, top) {
		case 1:
			return df, nil
		case -1:
			return nil, unsupportedf("fragment %d: data file %s holds part of field %s", f.ID, df.Path, top.Name)
		}
	}
	return nil, nil
}

// holdsField reports whether df holds all of top's values (1), none (0)
// or some (-1): a file lists the ids of the fields it has columns for.
func holdsField(df *DataFile, top *schema.Field) int {
	total, held := 0, 0
	for f := range (&schema.Schema{Fields: []*schema.Field{top}}).All() {
		total++
		if slices.Contains(df.Fields, f.ID) {
			held++
		}
	}
	switch {
	case held == 0:
		return 0
	case held == total || fieldOwnsColumns(top, df):
		return 1
	}
	return -1
}

// fieldOwnsColumns reports whether every field of top that df lacks is a
// parent (a list or struct), which owns no column of its own in format 2.
func fieldOwnsColumns(top *schema.Field, df *DataFile) bool {
	for f := range (&schema.Schema{Fields: []*schema.Field{top}}).All() {
		if !slices.Contains(df.Fields, f.ID) && f.IsLeaf() {
			return false
		}
	}
	return true
}

// Fragment returns the fragment being read.
func (fr *FragmentReader) Fragment() *Fragment { return fr.f }

// Deleted returns the offsets of the fragment's deleted rows; the caller
// must not change it.
func (fr *FragmentReader) Deleted() *roaring.Bitmap { return fr.deleted }

// ReadRange returns the fragment's rows at physical offsets [start, end),
// deleted ones included. It returns the errors of lance/file's ReadRange
// and ErrInvalid for a range outside the fragment.
func (fr *FragmentReader) ReadRange(ctx context.Context, start, end uint64) (arrow.RecordBatch, error) {
	if start > end || end > fr.f.PhysicalRows {
		return nil, invalidf("rows [%d, %d) of a fragment of %d", start, end, fr.f.PhysicalRows)
	}
	return fr.assemble(int64(end-start), func(p fragmentPart) (arrow.RecordBatch, error) {
		return p.r.ReadRange(ctx, p.proj, start, end)
	})
}

// Take returns the fragment's rows at the given physical offsets, in that
// order. It returns the errors of lance/file's Take and ErrInvalid for an
// offset outside the fragment.
func (fr *FragmentReader) Take(ctx context.Context, offsets []uint64) (arrow.RecordBatch, error) {
	for _, o := range offsets {
		if o >= fr.f.PhysicalRows {
			return nil, invalidf("row %d of a fragment of %d", o, fr.f.PhysicalRows)
		}
	}
	return fr.assemble(int64(len(offsets)), func(p fragmentPart) (arrow.RecordBatch, error) {
		return p.r.Take(ctx, p.proj, offsets)
	})
}

// Scan yields the fragment's rows that are not deleted, in order, in
// batches of up to batchRows physical rows (8192 when batchRows <= 0);
// with each batch comes the physical offset of each of its rows. An error
// ends the sequence.
func (fr *FragmentReader) Scan(ctx context.Context, batchRows int) iter.Seq2[ScanBatch, error] {
	if batchRows <= 0 {
		batchRows = 8192
	}
	return func(yield func(ScanBatch, error) bool) {
		for start := uint64(0); start < fr.f.PhysicalRows; start += uint64(batchRows) {
			end := min(start+uint64(batchRows), fr.f.PhysicalRows)
			var live []uint64
			gone := fr.deleted.CardinalityInRange(start, end)
			if gone == end-start {
				continue
			}
			var rec arrow.RecordBatch
			var err error
			if gone == 0 {
				rec, err = fr.ReadRange(ctx, start, end)
				live = make([]uint64, 0, end-start)
				for o := start; o < end; o++ {
					live = append(live, o)
				}
			} else {
				for o := start; o < end; o++ {
					if !fr.deleted.Contains(uint32(o)) {
						live = append(live, o)
					}
				}
				rec, err = fr.Take(ctx, live)
			}
			if !yield(ScanBatch{Rows: rec, Offsets: live}, err) || err != nil {
				return
			}
		}
	}
}

// ScanBatch is a batch of a fragment's rows and their physical offsets in
// it (which Dataset.Delete takes).
type ScanBatch struct {
	Rows    arrow.RecordBatch
	Offsets []uint64
}

// assemble reads each part with read and returns the projected columns
// in order, nulls for fields no file holds, as one batch of n rows.
func (fr *FragmentReader) assemble(n int64, read func(fragmentPart) (arrow.RecordBatch, error)) (arrow.RecordBatch, error) {
	recs := make([]arrow.RecordBatch, len(fr.parts))
	defer func() {
		for _, r := range recs {
			if r != nil {
				r.Release()
			}
		}
	}()
	for i, p := range fr.parts {
		rec, err := read(p)
		if err != nil {
			return nil, err
		}
		if rec.NumRows() != n {
			rec.Release()
			return nil, corruptf("fragment %d: data file %s gave %d rows, not %d", fr.f.ID, p.path, rec.NumRows(), n)
		}
		recs[i] = rec
	}
	cols := make([]arrow.Array, len(fr.proj.Fields))
	for i, top := range fr.proj.Fields {
		k := fr.source[i]
		if k < 0 {
			cols[i] = array.MakeArrayOfNull(fr.mem, fr.arrow.Field(i).Type, int(n))
			continue
		}
		j := slices.Index(fr.parts[k].proj.Fields, top)
		cols[i] = recs[k].Column(j)
		cols[i].Retain()
	}
	rec := array.NewRecordBatch(fr.arrow, cols, n)
	for _, c := range cols {
		c.Release()
	}
	return rec, nil
}
