package engine

import (
	"context"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancens/lancens/expr"
	"github.com/lancens/lancens/lance/table"
	"github.com/lancens/lancens/store"
)

// Query implements store.ManagedData: a scan (narrowed by scalar indexes),
// a vector search or a full-text search (through indexes, see index.go).
func (e *Engine) Query(ctx context.Context, id []string, q store.Query) (*store.Result, error) {
	switch {
	case len(q.OrderBy) > 0 && (q.Vector != nil || q.Text != nil):
		return nil, store.Errorf(store.CodeInvalidInput, "order_by sorts plain queries; searches are ordered by _distance or _score")
	case q.Vector != nil && q.Text != nil:
		return nil, store.Errorf(store.CodeInvalidInput, "a query cannot be both a vector and a full-text search; run them separately (hybrid search fuses the two)")
	}
	r, err := e.findData(ctx, id)
	if err != nil {
		return nil, err
	}
	s, err := e.open(ctx, r, q.Version)
	if err != nil {
		return nil, err
	}
	rd := e.reader(r, s)
	switch {
	case q.Vector != nil:
		res, err := rd.searchVectors(ctx, q, nil)
		return res, dataError(id, err)
	case q.Text != nil:
		res, err := rd.searchText(ctx, q, nil)
		return res, dataError(id, err)
	}
	plan, err := rd.planScan(q)
	if err != nil {
		return nil, err
	}
	if err := rd.narrowFilter(ctx, q.Filter); err != nil {
		return nil, err
	}
	res, err := rd.scan(ctx, plan, nil)
	return res, dataError(id, err)
}

// scanPlan is a scan compiled against one snapshot.
type scanPlan struct {
	q       store.Query
	filter  *filter
	order   *expr.Order
	ocols   *colBinder
	proj    *projection
	outSchm *arrow.Schema
}

// planScan compiles scan q. It returns the errors of planFilter,
// planProjection and planOrder.
func (rd *reader) planScan(q store.Query) (*scanPlan, error) {
	p := &scanPlan{q: q}
	var err error
	if p.proj, err = planProjection(rd.s.arrow, q); err != nil {
		return nil, err
	}
	if p.filter, err = planFilter(rd.s.arrow, q.Filter); err != nil {
		return nil, err
	}
	if p.order, p.ocols, err = planOrder(rd.s.arrow, q.OrderBy); err != nil {
		return nil, err
	}
	p.outSchm = p.proj.schema(rd.s.arrow.Metadata())
	return p, nil
}

// scanStats counts what a scan did, for analyze_plan.
type scanStats struct {
	fragments, rowsScanned, rowsMatched int64
}

// batch returns the columns b binds for the rows of frag at offsets rows
// (nil: every physical row), as a batch of b.batchSchema().
func (rd *reader) batch(ctx context.Context, frag *table.Fragment, b *colBinder, rows []int) (arrow.RecordBatch, error) {
	sch := b.batchSchema()
	cols := make([]arrow.Array, len(b.used))
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	n := int(frag.PhysicalRows)
	if rows != nil {
		n = len(rows)
	}
	for k, i := range b.used {
		if i == rowIDField {
			cols[k] = rowAddresses(frag.ID, rows, n)
			continue
		}
		col, err := rd.gather(ctx, frag, i, rows)
		if err != nil {
			return nil, err
		}
		cols[k] = col
	}
	return array.NewRecordBatch(sch, cols, int64(n)), nil
}

// gather returns the values of top-level field i of the snapshot's schema
// for the rows of frag at offsets rows (nil: every physical row). A
// column already cached is taken from memory; one that is not is read
// whole into the cache, unless the rows are few enough that reading just
// them from the data file costs less (filter, then take): on local disk,
// and, on object storage, for a column too wide to hold whole (vectors).
func (rd *reader) gather(ctx context.Context, frag *table.Fragment, i int, rows []int) (arrow.Array, error) {
	lf := rd.s.ds.Manifest().Schema.Fields[i]
	dt := rd.s.arrow.Field(i).Type
	few := rows != nil && len(rows)*takeFraction < int(frag.PhysicalRows)
	if few && (rd.ref.local || estimatedBytes(dt, int(frag.PhysicalRows)) > maxRemoteColumnBytes) && !rd.cached(frag, lf) {
		return rd.takeFromFile(ctx, frag, i, rows)
	}
	col, err := rd.column(ctx, frag, lf, dt)
	if err != nil {
		return nil, err
	}
	if rows == nil {
		col.Retain()
		return col, nil
	}
	if contiguous(rows) {
		return array.NewSlice(col, int64(rows[0]), int64(rows[0]+len(rows))), nil
	}
	return take(memory.DefaultAllocator, col, rows), nil
}

// takeFraction: a scan reads the rows it needs from a column not cached
// when they are fewer than one in takeFraction of the fragment's.
const takeFraction = 16

// maxRemoteColumnBytes is the size of a fragment's column on object
// storage above which a scan that needs few of its rows takes them from
// the file rather than caching the column whole; below it, the column
// is cached, and the next query needs no request.
const maxRemoteColumnBytes = 64 << 20

// estimatedBytes estimates the decoded size of n values of type dt:
// fixed-width types by their width, others at 64 bytes a value.
func estimatedBytes(dt arrow.DataType, n int) int {
	switch t := dt.(type) {
	case *arrow.FixedSizeListType:
		return int(t.Len()) * estimatedBytes(t.Elem(), n)
	case *arrow.StructType:
		size := 0
		for _, f := range t.Fields() {
			size += estimatedBytes(f.Type, n)
		}
		return size
	case arrow.FixedWidthDataType:
		return max(1, t.BitWidth()/8) * n
	}
	return 64 * n
}

// contiguous reports whether rows is a run of consecutive offsets.
func contiguous(rows []int) bool {
	return len(rows) > 0 && rows[len(rows)-1]-rows[0] == len(rows)-1
}

// rowAddresses returns the addresses of the rows of fragment frag at
// offsets rows (nil: the first n).
func rowAddresses(frag uint64, rows []int, n int) arrow.Array {
	b := array.NewUint64Builder(memory.DefaultAllocator)
	defer b.Release()
	b.Reserve(n)
	for k := range n {
		off := k
		if rows != nil {
			off = rows[k]
		}
		b.UnsafeAppend(rowAddress(frag, off))
	}
	return b.NewArray()
}

// output computes the projection's columns for the rows of frag at
// offsets rows, as a batch of the output schema.
func (rd *reader) output(ctx context.Context, frag *table.Fragment, p *projection, out *arrow.Schema, rows []int) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, 0, out.NumFields())
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	var values arrow.RecordBatch
	if slices.ContainsFunc(p.cols, func(c outputColumn) bool { return c.value != nil }) {
		var err error
		if values, err = rd.batch(ctx, frag, p.values, rows); err != nil {
			return nil, err
		}
		defer values.Release()
	}
	stored := map[int]arrow.Array{}
	defer func() {
		for _, a := range stored {
			a.Release()
		}
	}()
	for _, c := range p.cols {
		if c.value != nil {
			v, err := c.value.Value(memory.DefaultAllocator, values)
			if err != nil {
				return nil, err
			}
			cols = append(cols, v)
			continue
		}
		a, ok := stored[c.top]
		if !ok {
			var err error
			if a, err = rd.gather(ctx, frag, c.top, rows); err != nil {
				return nil, err
			}
			stored[c.top] = a
		}
		cols = append(cols, structChild(a, c.path))
	}
	if p.rowID {
		cols = append(cols, rowAddresses(frag.ID, rows, len(rows)))
	}
	return array.NewRecordBatch(out, cols, int64(len(rows))), nil
}

// structChild returns the field of a struct array at path (child
// indices), null wherever a struct above it is; a itself for an empty
// path.
func structChild(a arrow.Array, path []int) arrow.Array {
	if len(path) == 0 {
		a.Retain()
		return a
	}
	st := a.(*array.Struct)
	child := st.Field(path[0])
	if st.NullN() == 0 || child.DataType().ID() == arrow.NULL {
		return structChild(child, path[1:])
	}
	masked := withParentNulls(child, st)
	defer masked.Release()
	return structChild(masked, path[1:])
}

// withParentNulls returns a copy of child that is also null where parent,
// an array of the same length, is.
func withParentNulls(child, parent arrow.Array) arrow.Array {
	n := child.Len()
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	c := take(memory.DefaultAllocator, child, idx)
	defer c.Release()
	bitmap := memory.NewResizableBuffer(memory.DefaultAllocator)
	defer bitmap.Release()
	bitmap.Resize(int(bitutil.BytesForBits(int64(n))))
	bits := bitmap.Bytes()
	clear(bits)
	nulls := 0
	for i := range n {
		if parent.IsValid(i) && c.IsValid(i) {
			bitutil.SetBit(bits, i)
		} else {
			nulls++
		}
	}
	d := c.Data()
	bufs := append([]*memory.Buffer{bitmap}, d.Buffers()[1:]...)
	return fromData(array.NewData(d.DataType(), n, bufs, d.Children(), nulls, 0))
}

// scan runs plan over the snapshot's fragments; stats, when not nil,
// counts what it did. Rows come in row address order, or in the order's.
func (rd *reader) scan(ctx context.Context, p *scanPlan, stats *scanStats) (*store.Result, error) {
	if stats == nil {
		stats = &scanStats{}
	}
	if p.order != nil {
		return rd.sortedScan(ctx, p, stats)
	}
	res := &store.Result{Schema: p.outSchm, Version: int64(rd.s.ds.Version())}
	skip, limit := int(p.q.Offset), int(p.q.Limit)
	for _, frag := range rd.s.ds.Manifest().Fragments {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		stats.fragments++
		// The rows the page needs, chunk by chunk: a scan with a limit
		// stops evaluating its filter once it has them.
		var live []int
		size := chunkRows(int(frag.PhysicalRows))
		if limit > 0 {
			size = filterChunkRows // stop soon after the page is there
		}
		err := rd.filterChunks(ctx, frag, p.filter, false, size, func(c chunk) bool {
			stats.rowsScanned += int64(c.size)
			stats.rowsMatched += int64(len(c.rows))
			rows := c.rows
			if skip >= len(rows) {
				skip -= len(rows)
				return true
			}
			rows, skip = rows[skip:], 0
			if limit > 0 && len(live)+len(rows) >= limit {
				live = append(live, rows[:limit-len(live)]...)
				return false
			}
			live = append(live, rows...)
			return true
		})
		if err != nil {
			return nil, err
		}
		if len(live) == 0 {
			continue
		}
		b, err := rd.output(ctx, frag, p.proj, p.outSchm, live)
		if err != nil {
			return nil, err
		}
		res.Batches = append(res.Batches, b)
		if limit > 0 {
			if limit -= len(live); limit == 0 {
				break
			}
		}
	}
	return res, nil
}

// sortedRun is the rows of one fragment a sorted scan selected, with their
// sort keys.
type sortedRun struct {
	frag *table.Fragment
	rows []int
	keys *expr.SortKeys
}

// sortedScan runs a scan with an order: every selected row's keys are
// computed, the rows sorted (ties in row address order), and only the
// page asked for is read in full.
func (rd *reader) sortedScan(ctx context.Context, p *scanPlan, stats *scanStats) (*store.Result, error) {
	var runs []sortedRun
	type ref struct{ run, row int }
	var order []ref
	for _, frag := range rd.s.ds.Manifest().Fragments {
		stats.fragments++
		stats.rowsScanned += int64(frag.PhysicalRows)
		live, err := rd.selected(ctx, frag, p.filter)
		if err != nil {
			return nil, err
		}
		stats.rowsMatched += int64(len(live))
		if len(live) == 0 {
			continue
		}
		b, err := rd.batch(ctx, frag, p.ocols, live)
		if err != nil {
			return nil, err
		}
		keys, err := p.order.Keys(b)
		b.Release()
		if err != nil {
			return nil, err
		}
		for i := range live {
			order = append(order, ref{len(runs), i})
		}
		runs = append(runs, sortedRun{frag: frag, rows: live, keys: keys})
	}
	slices.SortStableFunc(order, func(a, b ref) int {
		return expr.CompareRows(runs[a.run].keys, a.row, runs[b.run].keys, b.row)
	})
	skip := min(int(p.q.Offset), len(order))
	order = order[skip:]
	if p.q.Limit > 0 && len(order) > int(p.q.Limit) {
		order = order[:p.q.Limit]
	}
	// Read the chosen rows fragment by fragment, then put them in order.
	res := &store.Result{Schema: p.outSchm, Version: int64(rd.s.ds.Version())}
	if len(order) == 0 {
		return res, nil
	}
	picked := make([][]int, len(runs))
	for _, o := range order {
		picked[o.run] = append(picked[o.run], o.row)
	}
	var parts []arrow.RecordBatch
	defer func() {
		for _, b := range parts {
			b.Release()
		}
	}()
	base := make([]int, len(runs))
	at := map[ref]int{}
	total := 0
	for i, rows := range picked {
		if len(rows) == 0 {
			continue
		}
		slices.Sort(rows)
		offsets := make([]int, len(rows))
		for k, r := range rows {
			offsets[k] = runs[i].rows[r]
			at[ref{i, r}] = total + k
		}
		b, err := rd.output(ctx, runs[i].frag, p.proj, p.outSchm, offsets)
		if err != nil {
			return nil, err
		}
		parts = append(parts, b)
		base[i] = total
		total += len(rows)
	}
	all, err := concatBatches(p.outSchm, parts)
	if err != nil {
		return nil, err
	}
	defer all.Release()
	perm := make([]int, len(order))
	for k, o := range order {
		perm[k] = at[o]
	}
	res.Batches = []arrow.RecordBatch{takeBatch(all, perm)}
	return res, nil
}

// concatBatches returns the rows of batches of schema s as one batch.
func concatBatches(s *arrow.Schema, batches []arrow.RecordBatch) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, s.NumFields())
	var n int64
	for _, b := range batches {
		n += b.NumRows()
	}
	for j := range cols {
		parts := make([]arrow.Array, len(batches))
		for i, b := range batches {
			parts[i] = b.Column(j)
		}
		c, err := array.Concatenate(parts, memory.DefaultAllocator)
		if err != nil {
			return nil, err
		}
		cols[j] = c
		defer c.Release()
	}
	return array.NewRecordBatch(s, cols, n), nil
}

// takeBatch returns the rows of b at positions idx, in that order.
func takeBatch(b arrow.RecordBatch, idx []int) arrow.RecordBatch {
	cols := make([]arrow.Array, b.NumCols())
	for j := range cols {
		cols[j] = take(memory.DefaultAllocator, b.Column(j), idx)
		defer cols[j].Release()
	}
	return array.NewRecordBatch(b.Schema(), cols, int64(len(idx)))
}

// CountRows implements store.ManagedData.
func (e *Engine) CountRows(ctx context.Context, id []string, version *int64, predicate string) (int64, int64, error) {
	r, err := e.findData(ctx, id)
	if err != nil {
		return 0, 0, err
	}
	s, err := e.open(ctx, r, version)
	if err != nil {
		return 0, 0, err
	}
	v := int64(s.ds.Version())
	f, err := planFilter(s.arrow, predicate)
	if err != nil {
		return 0, 0, err
	}
	if f == nil {
		return int64(s.ds.Manifest().Rows()), v, nil
	}
	rd := e.reader(r, s)
	if err := rd.narrowFilter(ctx, predicate); err != nil {
		return 0, 0, err
	}
	var n int64
	for _, frag := range s.ds.Manifest().Fragments {
		k, err := rd.count(ctx, frag, f)
		if err != nil {
			return 0, 0, dataError(id, err)
		}
		n += int64(k)
	}
	return n, v, nil
}
