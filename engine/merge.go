package engine

import (
	"context"
	"encoding/binary"
	"slices"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancens/lancens/expr"
	"github.com/lancens/lancens/lance/table"
	"github.com/lancens/lancens/store"
)

// mergePlan is a merge_insert checked against the target's schema.
type mergePlan struct {
	m store.Merge
	// keys are the top-level indices of the key columns (in the target's
	// schema, which the conformed source shares).
	keys         []int
	updateFilter *expr.Program
	deleteFilter *filter
}

// planMerge checks merge m against the target schema s. It returns
// TableColumnNotFound (12) for a key the table lacks, InvalidInput (13)
// for a key given twice, TableSchemaValidationError (20) for source rows
// that do not fit or lack a key, and the filters' errors.
func planMerge(s *arrow.Schema, m store.Merge) (*mergePlan, error) {
	p := &mergePlan{m: m}
	for _, on := range m.On {
		c, ok := lookupColumn(s, on)
		if !ok || len(c.path) > 0 {
			return nil, store.Errorf(store.CodeTableColumnNotFound, "key column %s not found", on)
		}
		if _, isStruct := c.field.Type.(*arrow.StructType); isStruct {
			return nil, store.Errorf(store.CodeTableColumnNotFound, "key column %s not found", on)
		}
		if !m.Data.Schema.HasField(c.field.Name) {
			return nil, store.Errorf(store.CodeTableSchemaValidationError, "the source rows have no key column %s", on)
		}
		if slices.Contains(p.keys, c.top) {
			return nil, store.Errorf(store.CodeInvalidInput, "merge_insert key column %s is given twice in on", on)
		}
		p.keys = append(p.keys, c.top)
	}
	if f := m.WhenMatchedUpdateFilter; f != "" {
		e, err := expr.Parse(f)
		if err != nil {
			return nil, err
		}
		if p.updateFilter, err = expr.PlanFilter(e, expr.MergeBinder(s, s)); err != nil {
			return nil, err
		}
	}
	var err error
	if p.deleteFilter, err = planFilter(s, m.WhenNotMatchedBySourceDeleteFilter); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *mergePlan) updates() bool { return p.m.WhenMatchedUpdateAll || p.updateFilter != nil }
func (p *mergePlan) deletes() bool { return p.m.WhenNotMatchedBySourceDelete || p.deleteFilter != nil }

// MergeInsert implements store.ManagedData: the source rows are matched
// with the target's live rows on the key columns (null keys match
// nothing); matched rows the merge updates are deleted from their
// fragments and written again, from the source, as new fragments with
// the source rows it inserts, and the target rows it deletes get deletion
// files; all in one version (Lance's merge_insert). A target row that
// matches more than one source row is InvalidInput (13). A merge that
// changes nothing makes no version. A table declared without data is
// created from the source rows.
func (e *Engine) MergeInsert(ctx context.Context, id []string, m store.Merge) (store.WriteResult, error) {
	if err := m.CheckKeys(); err != nil {
		return store.WriteResult{}, err
	}
	r, err := e.find(ctx, id)
	if err != nil {
		return store.WriteResult{}, err
	}
	if r.t.Declared {
		if err := e.refuseDeclaredBranch(r); err != nil {
			return store.WriteResult{}, err
		}
		_, res, err := e.CreateTable(ctx, id, store.NewTable{Mode: store.ModeCreate, Data: m.Data})
		return res, err
	}
	// The source rows are read (and checked) before the table's write lock
	// is taken: a client's upload must not hold up the table's other
	// writers. They are all needed before any can be matched.
	s, err := e.open(ctx, r, nil)
	if err != nil {
		return store.WriteResult{}, err
	}
	conf, err := newConformer(s.arrow, m.Data.Schema)
	if err != nil {
		return store.WriteResult{}, err
	}
	if _, err := planMerge(s.arrow, m); err != nil {
		return store.WriteResult{}, err
	}
	source, release, err := readSource(conf, m.Data)
	if err != nil {
		return store.WriteResult{}, err
	}
	defer release()
	defer source.Release()
	res, err := retryConflicts(ctx, func() (store.WriteResult, error) {
		r, s, unlock, err := e.writeTarget(ctx, id)
		if err != nil {
			return store.WriteResult{}, err
		}
		defer unlock()
		if !source.Schema().Equal(s.arrow) {
			// The table's schema changed since the source was read.
			return store.WriteResult{}, store.Errorf(store.CodeConcurrentModification, "the schema of table %s changed during the merge; retry it", displayID(id))
		}
		plan, err := planMerge(s.arrow, m)
		if err != nil {
			return store.WriteResult{}, err
		}
		return e.merge(ctx, r, s, plan, source)
	})
	return res, dataError(id, err)
}

// readSource reads the source rows of a merge, conformed to the target's
// schema, into one batch. It keeps the batches of d's stream until the
// function it returns is called (the merge's end): the rows are held that
// long, and the decode budget the batches count against with them.
func readSource(conf *conformer, d store.Data) (arrow.RecordBatch, func(), error) {
	var held, parts []arrow.RecordBatch
	release := func() {
		for _, b := range held {
			b.Release()
		}
	}
	defer func() {
		for _, b := range parts {
			b.Release()
		}
	}()
	for b, err := range batchesOf(d) {
		if err != nil {
			release()
			return nil, nil, err
		}
		b.Retain()
		held = append(held, b)
		rec, err := conf.conform(memory.DefaultAllocator, b)
		if err != nil {
			release()
			return nil, nil, err
		}
		parts = append(parts, rec)
	}
	if len(parts) == 0 {
		cols := make([]arrow.Array, conf.table.NumFields())
		for i, f := range conf.table.Fields() {
			cols[i] = array.MakeArrayOfNull(memory.DefaultAllocator, f.Type, 0)
			defer cols[i].Release()
		}
		return array.NewRecordBatch(conf.table, cols, 0), release, nil
	}
	source, err := concatBatches(conf.table, parts)
	if err != nil {
		release()
		return nil, nil, err
	}
	return source, release, nil
}

// keyOf returns the key of row i of the key columns cols, and false when a
// key is null (it matches nothing).
func keyOf(cols []arrow.Array, i int, buf []byte) ([]byte, bool) {
	buf = buf[:0]
	for _, c := range cols {
		if c.IsNull(i) {
			return nil, false
		}
		var v []byte
		switch a := c.(type) {
		case *array.String:
			v = []byte(a.Value(i))
		case *array.LargeString:
			v = []byte(a.Value(i))
		case *array.Binary:
			v = a.Value(i)
		case *array.LargeBinary:
			v = a.Value(i)
		case *array.Boolean:
			v = []byte{0}
			if a.Value(i) {
				v[0] = 1
			}
		default:
			if fw, ok := c.DataType().(arrow.FixedWidthDataType); ok && fw.BitWidth()%8 == 0 && len(c.Data().Buffers()) == 2 {
				w := fw.BitWidth() / 8
				off := (c.Data().Offset() + i) * w
				v = c.Data().Buffers()[1].Bytes()[off : off+w]
			} else {
				v = []byte(c.ValueStr(i))
			}
		}
		buf = binary.AppendUvarint(buf, uint64(len(v)))
		buf = append(buf, v...)
	}
	return buf, true
}

// targetMatch is a live target row the merge looked at: its offset in its
// fragment and the source row it matches (-1 for none).
type targetMatch struct {
	offset int
	source int
}

// merge applies plan, with the source rows source, to snapshot s of r.
func (e *Engine) merge(ctx context.Context, r *tableRef, s *snapshot, plan *mergePlan, source arrow.RecordBatch) (store.WriteResult, error) {
	id := r.id
	srcKeys := make([]arrow.Array, len(plan.keys))
	for k, i := range plan.keys {
		srcKeys[k] = source.Column(i)
	}
	bySource := map[string][]int{}
	var buf []byte
	for i := range int(source.NumRows()) {
		if key, ok := keyOf(srcKeys, i, buf); ok {
			bySource[string(key)] = append(bySource[string(key)], i)
			buf = key
		}
	}
	rd := e.reader(r, s)
	keyCols := newBinder(s.arrow)
	for _, i := range plan.keys {
		keyCols.position(i)
	}
	matchedSource := make([]bool, source.NumRows())
	var res store.WriteResult
	removed := map[uint64]*roaring.Bitmap{}
	remove := func(frag uint64, off int) {
		if removed[frag] == nil {
			removed[frag] = roaring.New()
		}
		removed[frag].Add(uint32(off))
	}
	type update struct {
		frag   *table.Fragment
		source []int // the source rows replacing the fragment's updated rows, in their order
	}
	var updates []update
	var ambiguous int
	for _, frag := range s.ds.Manifest().Fragments {
		live, err := rd.selected(ctx, frag, nil)
		if err != nil {
			return res, dataError(id, err)
		}
		if len(live) == 0 {
			continue
		}
		kb, err := rd.batch(ctx, frag, keyCols, live)
		if err != nil {
			return res, dataError(id, err)
		}
		var matches []targetMatch
		var unmatched []int
		for k, off := range live {
			key, ok := keyOf(kb.Columns(), k, buf)
			var src []int
			if ok {
				src, buf = bySource[string(key)], key
			}
			switch len(src) {
			case 0:
				unmatched = append(unmatched, off)
			case 1:
				matches = append(matches, targetMatch{offset: off, source: src[0]})
				matchedSource[src[0]] = true
			default:
				ambiguous++
			}
		}
		kb.Release()
		if ambiguous > 0 {
			continue
		}
		if plan.updates() && len(matches) > 0 {
			kept, err := rd.mergeUpdates(ctx, frag, plan, source, matches)
			if err != nil {
				return res, err
			}
			u := update{frag: frag}
			for _, m := range kept {
				remove(frag.ID, m.offset)
				u.source = append(u.source, m.source)
			}
			if len(u.source) > 0 {
				updates = append(updates, u)
				res.Updated += int64(len(u.source))
			}
		}
		if plan.deletes() && len(unmatched) > 0 {
			gone := unmatched
			if plan.deleteFilter != nil {
				if gone, err = rd.filterRows(ctx, frag, plan.deleteFilter, unmatched); err != nil {
					return res, err
				}
			}
			for _, off := range gone {
				remove(frag.ID, off)
			}
			res.Deleted += int64(len(gone))
		}
	}
	if ambiguous > 0 {
		return res, store.Errorf(store.CodeInvalidInput, "%d target rows match more than one source row on the key columns", ambiguous)
	}
	var inserts []int
	if plan.m.WhenNotMatchedInsertAll {
		for i, matched := range matchedSource {
			if !matched {
				inserts = append(inserts, i)
			}
		}
		res.Inserted = int64(len(inserts))
	}
	if res.Inserted == 0 && res.Updated == 0 && res.Deleted == 0 {
		res.Version = int64(s.ds.Version())
		return res, nil
	}
	// New rows first, then the updated ones in the target's order.
	rows := inserts
	for _, u := range updates {
		rows = append(rows, u.source...)
	}
	newRows := func(yield func(arrow.RecordBatch, error) bool) {
		for chunk := range slices.Chunk(rows, rewriteBatchRows) {
			b := takeBatch(source, chunk)
			more := yield(b, nil)
			b.Release()
			if !more {
				return
			}
		}
	}
	var frags []*table.Fragment
	if len(rows) > 0 {
		var err error
		if frags, err = e.writeFragments(ctx, id, s.ds.Store(), s.ds.Manifest().Schema, e.fileOptions(s.ds.Manifest()), newRows); err != nil {
			return res, err
		}
	}
	c := &committer{e: e, ref: r}
	ds, err := s.ds.WithOptions(e.writeOptions(r, c)).Update(ctx, removed, frags)
	if err != nil {
		return res, dataError(id, err)
	}
	res.Version, res.TransactionID = int64(ds.Version()), c.txID
	return res, nil
}

// mergeUpdates returns the matches of frag's rows the merge updates: all of
// them, or those where the update filter holds over the target row and
// the source row.
func (rd *reader) mergeUpdates(ctx context.Context, frag *table.Fragment, plan *mergePlan, source arrow.RecordBatch, matches []targetMatch) ([]targetMatch, error) {
	if plan.updateFilter == nil {
		return matches, nil
	}
	offsets := make([]int, len(matches))
	srcRows := make([]int, len(matches))
	for k, m := range matches {
		offsets[k], srcRows[k] = m.offset, m.source
	}
	target, err := rd.rows(ctx, frag, offsets)
	if err != nil {
		return nil, dataError(rd.ref.id, err)
	}
	defer target.Release()
	src := takeBatch(source, srcRows)
	defer src.Release()
	words, err := plan.updateFilter.Filter(target, src)
	if err != nil {
		return nil, err
	}
	var kept []targetMatch
	for k, m := range matches {
		if words[k/64]>>(k%64)&1 != 0 {
			kept = append(kept, m)
		}
	}
	return kept, nil
}

// filterRows returns the offsets among rows (of frag) whose rows f keeps.
func (rd *reader) filterRows(ctx context.Context, frag *table.Fragment, f *filter, rows []int) ([]int, error) {
	b, err := rd.batch(ctx, frag, f.cols, rows)
	if err != nil {
		return nil, dataError(rd.ref.id, err)
	}
	defer b.Release()
	words, err := f.prog.Filter(b)
	if err != nil {
		return nil, err
	}
	var out []int
	for k, off := range rows {
		if words[k/64]>>(k%64)&1 != 0 {
			out = append(out, off)
		}
	}
	return out, nil
}
