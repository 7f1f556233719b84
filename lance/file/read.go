package file

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lancens/lancens/lance/file/internal/encoding"
	"github.com/lancens/lancens/lance/schema"
)

// plan is a projection resolved against the file: one decode request per
// top-level field, without rows.
type plan struct {
	arrow    *arrow.Schema
	requests []encoding.Request
}

// plan resolves proj against the file's schema. proj is nil for every
// field, or a schema whose fields carry the file's field ids (from
// Schema().Project or ProjectIDs, or a dataset schema projected to the
// fields this file holds): structure and logical types must match the
// file's; names, nullability and metadata are taken from proj. It returns
// an error wrapping schema.ErrFieldNotFound for an id the file lacks,
// ErrUnsupported for a type mismatch, or schema errors for a malformed
// projection.
func (r *Reader) plan(proj *schema.Schema) (*plan, error) {
	if proj == nil {
		proj = r.schema
	}
	as, err := proj.ToArrow()
	if err != nil {
		return nil, err
	}
	p := &plan{arrow: as}
	for i, f := range proj.Fields {
		top := r.topField(f.ID)
		if top == nil {
			return nil, fmt.Errorf("%w: the file has no top-level field with id %d (%s)", schema.ErrFieldNotFound, f.ID, f.Name)
		}
		cols := map[int32]*encoding.Column{}
		if err := r.matchField(f, top, cols); err != nil {
			return nil, err
		}
		p.requests = append(p.requests, encoding.Request{
			Field:         f,
			Type:          as.Field(i).Type,
			Columns:       cols,
			Rows:          r.rows,
			GlobalBuffers: r.globals,
			Mem:           r.opts.Mem,
		})
	}
	return p, nil
}

func (r *Reader) topField(id int32) *schema.Field {
	for _, f := range r.schema.Fields {
		if f.ID == id {
			return f
		}
	}
	return nil
}

// matchField checks that want is a projection of got (the file's field
// with the same id) and collects the columns of want's fields.
func (r *Reader) matchField(want, got *schema.Field, cols map[int32]*encoding.Column) error {
	if want.LogicalType != got.LogicalType {
		return encoding.Unsupportedf("field %d (%s) is %s in the file, not %s", want.ID, want.Name, got.LogicalType, want.LogicalType)
	}
	if i, ok := r.columnOf[want.ID]; ok {
		c, err := r.column(i)
		if err != nil {
			return err
		}
		cols[want.ID] = c
	}
	for _, wc := range want.Children {
		var gc *schema.Field
		for _, c := range got.Children {
			if c.ID == wc.ID {
				gc = c
				break
			}
		}
		if gc == nil {
			return fmt.Errorf("%w: field %d (%s) has no child with id %d (%s) in the file", schema.ErrFieldNotFound, got.ID, got.Name, wc.ID, wc.Name)
		}
		if err := r.matchField(wc, gc, cols); err != nil {
			return err
		}
	}
	if want.IsList() && len(want.Children) != 1 {
		return fmt.Errorf("%w: list field %s is projected without its item", schema.ErrInvalid, want.Name)
	}
	return nil
}

// ReadRange returns rows [start, end) of the fields of proj (nil for all;
// see Project), reading only the pages, and within pages only the bytes,
// that hold them. It returns an error wrapping ErrCorrupt, ErrUnsupported,
// ErrBudget, schema.ErrFieldNotFound (a projected field the file lacks) or
// the store's error, or a plain error for a range outside the file.
func (r *Reader) ReadRange(ctx context.Context, proj *schema.Schema, start, end uint64) (arrow.RecordBatch, error) {
	if start > end || end > r.rows {
		return nil, fmt.Errorf("lance file %s: rows [%d, %d) are not within its %d rows", r.path, start, end, r.rows)
	}
	p, err := r.plan(proj)
	if err != nil {
		return nil, fmt.Errorf("lance file %s: %w", r.path, err)
	}
	var ranges []encoding.RowRange
	if start < end {
		ranges = []encoding.RowRange{{Start: start, End: end}}
	}
	return r.read(ctx, p, ranges)
}

// Take returns the rows at the given offsets, in the order given (an
// offset may repeat), reading only what holds them. It returns the errors
// ReadRange does, and a plain error for an offset past the last row.
func (r *Reader) Take(ctx context.Context, proj *schema.Schema, rows []uint64) (arrow.RecordBatch, error) {
	for _, row := range rows {
		if row >= r.rows {
			return nil, fmt.Errorf("lance file %s: row %d is not within its %d rows", r.path, row, r.rows)
		}
	}
	p, err := r.plan(proj)
	if err != nil {
		return nil, fmt.Errorf("lance file %s: %w", r.path, err)
	}
	sorted := slices.Clone(rows)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	var ranges []encoding.RowRange
	for _, row := range sorted {
		if n := len(ranges); n > 0 && ranges[n-1].End == row {
			ranges[n-1].End++
		} else {
			ranges = append(ranges, encoding.RowRange{Start: row, End: row + 1})
		}
	}
	rec, err := r.read(ctx, p, ranges)
	if err != nil || slices.Equal(sorted, rows) {
		return rec, err
	}
	defer rec.Release()
	return reorder(rec, sorted, rows, r)
}

// Scan yields the rows of the fields of proj (nil for all) in batches of
// batchRows rows (8192 when batchRows <= 0), in order. An error ends the
// sequence; it is one ReadRange returns.
func (r *Reader) Scan(ctx context.Context, proj *schema.Schema, batchRows int) iter.Seq2[arrow.RecordBatch, error] {
	if batchRows <= 0 {
		batchRows = 8192
	}
	return func(yield func(arrow.RecordBatch, error) bool) {
		p, err := r.plan(proj)
		if err != nil {
			yield(nil, fmt.Errorf("lance file %s: %w", r.path, err))
			return
		}
		for start := uint64(0); start < r.rows; start += uint64(batchRows) {
			end := min(start+uint64(batchRows), r.rows)
			rec, err := r.read(ctx, p, []encoding.RowRange{{Start: start, End: end}})
			if !yield(rec, err) || err != nil {
				return
			}
		}
	}
}

// maxParallelFields bounds how many fields of one read decode at once:
// their page reads then overlap, which matters most on object storage.
const maxParallelFields = 8

// read decodes ranges of every field of p, in parallel, into one record
// batch.
func (r *Reader) read(ctx context.Context, p *plan, ranges []encoding.RowRange) (arrow.RecordBatch, error) {
	var n uint64
	for _, rg := range ranges {
		n += rg.End - rg.Start
	}
	budget := encoding.NewBudget(uint64(r.opts.MaxReadBytes))
	io := &fileIO{r: r, budget: budget}
	cols := make([]arrow.Array, len(p.requests))
	errs := make([]error, len(p.requests))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sem := make(chan struct{}, maxParallelFields)
	var wg sync.WaitGroup
	for i := range p.requests {
		req := p.requests[i]
		if n == 0 {
			cols[i] = array.MakeArrayOfNull(r.opts.Mem, req.Type, 0)
			continue
		}
		req.Ranges, req.File, req.Budget = ranges, io, budget
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			arr, err := r.dec.Decode(ctx, &req)
			if err == nil && (!arrow.TypeEqual(arr.DataType(), req.Type) || uint64(arr.Len()) != n) {
				err = fmt.Errorf("the decoder returned %d rows of %s, not %d of %s (a bug)", arr.Len(), arr.DataType(), n, req.Type)
				arr.Release()
			}
			if err != nil {
				errs[i] = fmt.Errorf("lance file %s: field %s: %w", r.path, req.Field.Name, err)
				cancel()
				return
			}
			cols[i] = arr
		}()
	}
	wg.Wait()
	release := func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}
	for _, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			release()
			return nil, err
		}
	}
	for _, err := range errs {
		if err != nil {
			release()
			return nil, err
		}
	}
	rec := array.NewRecordBatch(p.arrow, cols, int64(n))
	release()
	return rec, nil
}

// reorder returns the rows of rec (which holds the rows sorted, in order)
// in the order of rows.
func reorder(rec arrow.RecordBatch, sorted, rows []uint64, r *Reader) (arrow.RecordBatch, error) {
	// Runs of consecutive positions in rec become one slice each.
	type run struct{ from, n int64 }
	var runs []run
	for _, row := range rows {
		pos, _ := slices.BinarySearchFunc(sorted, row, cmp.Compare[uint64])
		if k := len(runs); k > 0 && runs[k-1].from+runs[k-1].n == int64(pos) {
			runs[k-1].n++
		} else {
			runs = append(runs, run{int64(pos), 1})
		}
	}
	cols := make([]arrow.Array, rec.NumCols())
	for c := range cols {
		parts := make([]arrow.Array, len(runs))
		for i, rn := range runs {
			parts[i] = array.NewSlice(rec.Column(c), rn.from, rn.from+rn.n)
		}
		arr, err := array.Concatenate(parts, r.opts.Mem)
		for _, p := range parts {
			p.Release()
		}
		if err != nil {
			for _, a := range cols[:c] {
				a.Release()
			}
			return nil, fmt.Errorf("lance file %s: reordering taken rows: %w", r.path, err)
		}
		cols[c] = arr
	}
	out := array.NewRecordBatch(rec.Schema(), cols, int64(len(rows)))
	for _, a := range cols {
		a.Release()
	}
	return out, nil
}
