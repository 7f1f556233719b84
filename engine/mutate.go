package engine

import (
	"context"
	"slices"
	"strings"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancens/lancens/expr"
	"github.com/lancens/lancens/lance/table"
	"github.com/lancens/lancens/store"
)

// rewriteBatchRows is how many rows a rewrite (update, merge) gathers into
// one batch for the data file writer.
const rewriteBatchRows = 8192

// writeTarget returns the table a read-modify-write acts on, its write
// lock taken (release it with the function returned), and its newest
// version.
func (e *Engine) writeTarget(ctx context.Context, id []string) (*tableRef, *snapshot, func(), error) {
	r, err := e.findData(ctx, id)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := e.refuseView(ctx, r); err != nil {
		return nil, nil, nil, err
	}
	unlock := e.writers.lock(r.t.UUID)
	s, err := e.open(ctx, r, nil)
	if err != nil {
		unlock()
		return nil, nil, nil, err
	}
	return r, s, unlock, nil
}

// Delete implements store.ManagedData: the rows matching predicate get
// deleted in their fragments' deletion files; a delete that matches no
// row makes no version.
func (e *Engine) Delete(ctx context.Context, id []string, predicate string) (store.WriteResult, error) {
	if strings.TrimSpace(predicate) == "" {
		return store.WriteResult{}, store.Errorf(store.CodeInvalidInput, "a predicate is required (use 'true' to delete every row)")
	}
	res, err := retryConflicts(ctx, func() (store.WriteResult, error) {
		r, s, unlock, err := e.writeTarget(ctx, id)
		if err != nil {
			return store.WriteResult{}, err
		}
		defer unlock()
		f, err := planFilter(s.arrow, predicate)
		if err != nil {
			return store.WriteResult{}, err
		}
		rd := e.reader(r, s)
		rows := map[uint64]*roaring.Bitmap{}
		var n int64
		for _, frag := range s.ds.Manifest().Fragments {
			live, err := rd.selected(ctx, frag, f)
			if err != nil {
				return store.WriteResult{}, dataError(id, err)
			}
			if len(live) > 0 {
				rows[frag.ID] = offsetsBitmap(live)
				n += int64(len(live))
			}
		}
		if n == 0 {
			return store.WriteResult{Version: int64(s.ds.Version())}, nil
		}
		c := &committer{e: e, ref: r}
		ds, err := s.ds.WithOptions(e.writeOptions(r, c)).Delete(ctx, rows, predicate)
		if err != nil {
			return store.WriteResult{}, dataError(id, err)
		}
		return store.WriteResult{Version: int64(ds.Version()), TransactionID: c.txID, Deleted: n}, nil
	})
	return res, dataError(id, err)
}

func offsetsBitmap(rows []int) *roaring.Bitmap {
	b := roaring.New()
	for _, r := range rows {
		b.Add(uint32(r))
	}
	return b
}

// columnUpdate is one column an update sets: its top-level index, the
// child indices down to it for a field inside a struct, its type, and the
// program computing its new value.
type columnUpdate struct {
	field int
	path  []int
	dt    arrow.DataType
	value *expr.Program
}

// planUpdates compiles the new values of an update against schema s. It
// returns TableColumnNotFound (12) for an unknown column, InvalidInput
// (13) for a column set twice, a struct, a value of the wrong type or a
// bad expression, and Unsupported (0) for a field inside a struct.
func planUpdates(s *arrow.Schema, updates []store.ColumnUpdate, b *colBinder) ([]columnUpdate, error) {
	if len(updates) == 0 {
		return nil, store.Errorf(store.CodeInvalidInput, "at least one column must be updated")
	}
	var out []columnUpdate
	for _, u := range updates {
		c, ok := lookupColumn(s, u.Path)
		if u.Path == "" || !ok {
			return nil, store.Errorf(store.CodeTableColumnNotFound, "column %s not found", u.Path)
		}
		if _, isStruct := c.field.Type.(*arrow.StructType); isStruct {
			return nil, store.Errorf(store.CodeInvalidInput, "column %s is a struct; update its fields one by one", u.Path)
		}
		if slices.ContainsFunc(out, func(x columnUpdate) bool { return x.field == c.top && slices.Equal(x.path, c.path) }) {
			return nil, store.Errorf(store.CodeInvalidInput, "column %s is updated twice", u.Path)
		}
		e, err := expr.Parse(u.Expr)
		if err != nil {
			return nil, err
		}
		p, err := expr.PlanValue(e, b)
		if err != nil {
			return nil, err
		}
		if err := expr.CheckAssignable(u.Path, c.field, p.Type()); err != nil {
			return nil, err
		}
		out = append(out, columnUpdate{field: c.top, path: c.path, dt: c.field.Type, value: p})
	}
	return out, nil
}

// Update implements store.ManagedData: the rows matching predicate are
// deleted from their fragments and written again, with the new values,
// as new fragments (Lance's update by rewriting rows); an update that
// matches no row makes no version.
func (e *Engine) Update(ctx context.Context, id []string, updates []store.ColumnUpdate, predicate string) (store.WriteResult, error) {
	res, err := retryConflicts(ctx, func() (store.WriteResult, error) {
		r, s, unlock, err := e.writeTarget(ctx, id)
		if err != nil {
			return store.WriteResult{}, err
		}
		defer unlock()
		values := newBinder(s.arrow)
		ups, err := planUpdates(s.arrow, updates, values)
		if err != nil {
			return store.WriteResult{}, err
		}
		f, err := planFilter(s.arrow, predicate)
		if err != nil {
			return store.WriteResult{}, err
		}
		rd := e.reader(r, s)
		matched := map[*table.Fragment][]int{}
		rows := map[uint64]*roaring.Bitmap{}
		var n int64
		for _, frag := range s.ds.Manifest().Fragments {
			live, err := rd.selected(ctx, frag, f)
			if err != nil {
				return store.WriteResult{}, dataError(id, err)
			}
			if len(live) > 0 {
				matched[frag], rows[frag.ID] = live, offsetsBitmap(live)
				n += int64(len(live))
			}
		}
		if n == 0 {
			return store.WriteResult{Version: int64(s.ds.Version())}, nil
		}
		updated := func(yield func(arrow.RecordBatch, error) bool) {
			for _, frag := range s.ds.Manifest().Fragments {
				for chunk := range slices.Chunk(matched[frag], rewriteBatchRows) {
					b, err := rd.updatedRows(ctx, frag, chunk, ups, values)
					more := yield(b, err)
					if b != nil {
						b.Release()
					}
					if !more || err != nil {
						return
					}
				}
			}
		}
		frags, err := e.writeFragments(ctx, id, s.ds.Store(), s.ds.Manifest().Schema, e.fileOptions(s.ds.Manifest()), updated)
		if err != nil {
			return store.WriteResult{}, err
		}
		c := &committer{e: e, ref: r}
		ds, err := s.ds.WithOptions(e.writeOptions(r, c)).Update(ctx, rows, frags)
		if err != nil {
			return store.WriteResult{}, dataError(id, err)
		}
		return store.WriteResult{Version: int64(ds.Version()), TransactionID: c.txID, Updated: n}, nil
	})
	return res, dataError(id, err)
}

// rows returns every column of the table for the rows of frag at offsets
// rows, as a batch of the snapshot's schema.
func (rd *reader) rows(ctx context.Context, frag *table.Fragment, rows []int) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, rd.s.arrow.NumFields())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for i := range cols {
		c, err := rd.gather(ctx, frag, i, rows)
		if err != nil {
			return nil, err
		}
		cols[i] = c
	}
	return array.NewRecordBatch(rd.s.arrow, cols, int64(len(rows))), nil
}

// updatedRows returns the rows of frag at offsets rows with the updates
// applied.
func (rd *reader) updatedRows(ctx context.Context, frag *table.Fragment, rows []int, ups []columnUpdate, values *colBinder) (arrow.RecordBatch, error) {
	b, err := rd.rows(ctx, frag, rows)
	if err != nil {
		return nil, err
	}
	defer b.Release()
	in, err := rd.batch(ctx, frag, values, rows)
	if err != nil {
		return nil, err
	}
	defer in.Release()
	cols := slices.Clone(b.Columns())
	for _, u := range ups {
		f := rd.s.arrow.Field(u.field)
		v, err := valueAs(u.value, u.dt, in)
		if err != nil {
			return nil, err
		}
		defer v.Release()
		if len(u.path) == 0 && !f.Nullable && v.NullN() > 0 {
			return nil, store.Errorf(store.CodeInvalidInput, "column %s is not nullable", f.Name)
		}
		if len(u.path) > 0 {
			v = withChild(cols[u.field], u.path, v)
			defer v.Release()
		}
		cols[u.field] = v
	}
	return array.NewRecordBatch(rd.s.arrow, cols, b.NumRows()), nil
}

// withChild returns a copy of struct array a whose field at path (child
// indices) holds v, an array of a's length; the structs' nulls stay.
func withChild(a arrow.Array, path []int, v arrow.Array) arrow.Array {
	if a.Data().Offset() != 0 {
		// A struct's validity is read at its offset: start from a copy
		// at offset 0, whose children are its fields.
		idx := make([]int, a.Len())
		for i := range idx {
			idx[i] = i
		}
		a = take(memory.DefaultAllocator, a, idx)
		defer a.Release()
	}
	st := a.(*array.Struct)
	children := make([]arrow.ArrayData, st.NumField())
	for j := range children {
		var c arrow.Array
		switch {
		case j != path[0]:
			c = st.Field(j)
			c.Retain()
		case len(path) == 1:
			c = v
			c.Retain()
		default:
			c = withChild(st.Field(j), path[1:], v)
		}
		children[j] = c.Data()
		children[j].Retain()
		c.Release()
	}
	validity := st.Data().Buffers()[0]
	if validity != nil {
		validity.Retain()
	}
	return fromData(ownedData(st.DataType(), st.Len(), []*memory.Buffer{validity}, children, st.NullN(), 0))
}

// Restore implements store.ManagedData: the content and schema of version
// become the table's newest version.
func (e *Engine) Restore(ctx context.Context, id []string, version int64) (store.WriteResult, error) {
	r, s, unlock, err := e.writeTarget(ctx, id)
	if err != nil {
		return store.WriteResult{}, err
	}
	defer unlock()
	old, err := e.open(ctx, r, &version)
	if err != nil {
		return store.WriteResult{}, err
	}
	c := &committer{e: e, ref: r}
	ds, err := s.ds.WithOptions(e.writeOptions(r, c)).Restore(ctx, uint64(version))
	if err != nil {
		return store.WriteResult{}, dataError(id, err)
	}
	if e.branch == "" {
		e.rebuildUncovered(ctx, r)
	}
	return store.WriteResult{Version: int64(ds.Version()), TransactionID: c.txID,
		Inserted: int64(old.ds.Manifest().Rows()), Deleted: int64(s.ds.Manifest().Rows())}, nil
}

// valueAs evaluates p over in and stores its value as an array of dt (see
// narrow).
func valueAs(p *expr.Program, dt arrow.DataType, in arrow.RecordBatch) (arrow.Array, error) {
	v, err := p.Value(memory.DefaultAllocator, in)
	if err != nil {
		return nil, err
	}
	defer v.Release()
	return narrow(memory.DefaultAllocator, v, dt)
}
