package engine

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancens/lancens/internal/memcache"
	"github.com/lancens/lancens/lance/table"
	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/vecindex"
)

// vectorField picks the searched column: the one named, or the only
// vector column of the schema. It returns its index, TableColumnNotFound
// (12) or InvalidInput (13).
func vectorField(s *arrow.Schema, name string) (int, error) {
	if name != "" {
		idx := s.FieldIndices(name)
		if len(idx) == 0 {
			return 0, store.Errorf(store.CodeTableColumnNotFound, "vector column %s not found", name)
		}
		if f := s.Field(idx[0]); !store.IsVectorType(f.Type) {
			return 0, store.Errorf(store.CodeInvalidInput, "column %s is %s, not a vector column", name, f.Type)
		}
		return idx[0], nil
	}
	var found []int
	var names []string
	for i, f := range s.Fields() {
		if store.IsVectorType(f.Type) {
			found = append(found, i)
			names = append(names, f.Name)
		}
	}
	switch len(found) {
	case 0:
		return 0, store.Errorf(store.CodeInvalidInput, "the table has no vector column to search")
	case 1:
		return found[0], nil
	}
	return 0, store.Errorf(store.CodeInvalidInput, "the table has several vector columns (%s); name one in vector_column", strings.Join(names, ", "))
}

// vectorColumn is a vector field of one data file as the cache holds it:
// its values as float32s (and as bytes, for uint8 elements, which hamming
// distance compares), and the row address of each physical row.
type vectorColumn struct {
	vs    vecindex.Vectors
	bytes *vecindex.ByteVectors
	// null marks the rows without a vector; nil when none is null.
	null *roaring.Bitmap
}

// CacheBytes implements memcache.Value.
func (v *vectorColumn) CacheBytes() int64 {
	n := int64(len(v.vs.Data))*4 + int64(len(v.vs.IDs))*8 + 128
	if v.bytes != nil {
		n += int64(len(v.bytes.Data))
	}
	if v.null != nil {
		n += int64(v.null.GetSizeInBytes())
	}
	return n
}

// vectors returns the vectors of top-level field i of fragment frag, from
// the cache.
func (rd *reader) vectors(ctx context.Context, frag *table.Fragment, i int) (*vectorColumn, error) {
	lf := rd.s.ds.Manifest().Schema.Fields[i]
	dt := rd.s.arrow.Field(i).Type.(*arrow.FixedSizeListType)
	load := func() (memcache.Value, error) {
		col, err := rd.column(ctx, frag, lf, dt)
		if err != nil {
			return nil, err
		}
		return newVectorColumn(frag.ID, col.(*array.FixedSizeList), int(dt.Len())), nil
	}
	df, err := frag.FileHolding(lf)
	if err != nil {
		return nil, err
	}
	if df == nil {
		v, err := load()
		if err != nil {
			return nil, err
		}
		return v.(*vectorColumn), nil
	}
	val, err := rd.e.cache.Get(ctx, rd.ref.cacheKey()+"vec/"+rd.fileKey(df)+"/"+strconv.Itoa(int(lf.ID)), load)
	if err != nil {
		return nil, err
	}
	return val.(*vectorColumn), nil
}

// newVectorColumn converts a column of vectors of dimension dim to
// float32s.
func newVectorColumn(frag uint64, col *array.FixedSizeList, dim int) *vectorColumn {
	n := col.Len()
	v := &vectorColumn{vs: vecindex.Vectors{Dim: dim, Data: make([]float32, n*dim), IDs: make([]int64, n)}}
	for r := range n {
		v.vs.IDs[r] = int64(rowAddress(frag, r))
	}
	values := col.ListValues()
	if values.DataType().ID() == arrow.UINT8 {
		v.bytes = &vecindex.ByteVectors{Dim: dim, Data: make([]byte, n*dim), IDs: v.vs.IDs}
	}
	for r := range n {
		if col.IsNull(r) {
			if v.null == nil {
				v.null = roaring.New()
			}
			v.null.Add(uint32(r))
			continue
		}
		start, _ := col.ValueOffsets(r)
		out := v.vs.Data[r*dim : (r+1)*dim]
		for k := range dim {
			j := int(start) + k
			switch a := values.(type) {
			case *array.Float32:
				out[k] = a.Value(j)
			case *array.Float64:
				out[k] = float32(a.Value(j))
			case *array.Float16:
				out[k] = a.Value(j).Float32()
			case *array.Uint8:
				out[k] = float32(a.Value(j))
				v.bytes.Data[r*dim+k] = a.Value(j)
			case *array.Int8:
				out[k] = float32(a.Value(j))
			}
		}
	}
	return v
}

// hit is one search result: a row and its distance, and the query vector
// it answers.
type hit struct {
	addr     uint64
	distance float32
	query    int
}

// searchVectors runs the exact nearest-neighbour search of q: every live
// row's vector is compared with the query (the rows a prefilter keeps),
// fragment by fragment, and the k nearest of all answer, with their
// _distance. It returns TableColumnNotFound (12) and InvalidInput (13) for
// a bad column, metric, dimension or k, and the filter's errors.
func (rd *reader) searchVectors(ctx context.Context, q store.Query, stats *scanStats) (*store.Result, error) {
	vs := q.Vector
	fi, err := vectorField(rd.s.arrow, vs.Column)
	if err != nil {
		return nil, err
	}
	used, metric, err := rd.vectorIndexFor(ctx, vs, fi)
	if err != nil {
		return nil, err
	}
	field := rd.s.arrow.Field(fi)
	dt := field.Type.(*arrow.FixedSizeListType)
	if metric == vecindex.Hamming && dt.Elem().ID() != arrow.UINT8 {
		return nil, store.Errorf(store.CodeInvalidInput, "hamming distance needs a vector column of uint8")
	}
	for _, qv := range vs.Vectors {
		if len(qv) != int(dt.Len()) {
			return nil, store.Errorf(store.CodeInvalidInput, "the query vector has %d dimensions, column %s has %d", len(qv), field.Name, dt.Len())
		}
	}
	proj, err := planProjection(rd.s.arrow, store.Query{Projection: q.Projection})
	if err != nil {
		return nil, err
	}
	f, err := planFilter(rd.s.arrow, q.Filter)
	if err != nil {
		return nil, err
	}
	if f != nil && !vs.Postfilter {
		if err := rd.narrowFilter(ctx, q.Filter); err != nil {
			return nil, err
		}
	}
	live := int(rd.s.ds.Manifest().Rows())
	k := int(q.Limit)
	if k <= 0 {
		k = store.DefaultSearchK
	}
	k = min(k, max(1, live)) // the SDK's "no limit" is i64::MAX
	if err := q.CheckSearchRows(int64(k)*int64(len(vs.Vectors)), "k × query vectors"); err != nil {
		return nil, err
	}
	if stats == nil {
		stats = &scanStats{}
	}
	type fragVectors struct {
		frag    *table.Fragment
		vc      *vectorColumn // nil for a fragment the index covers
		allowed func(int64) bool
	}
	var frags []fragVectors
	// indexed are the fragments the index covers, searched through it
	// (see indexAllow).
	var indexed indexAllow
	for _, frag := range rd.s.ds.Manifest().Fragments {
		stats.fragments++
		covered := used.covers(frag)
		if !covered && used != nil && vs.FastSearch {
			continue // fast_search stays inside the index
		}
		var vc *vectorColumn
		if !covered {
			stats.rowsScanned += int64(frag.PhysicalRows)
			if vc, err = rd.vectors(ctx, frag, fi); err != nil {
				return nil, dataError(rd.ref.id, err)
			}
		}
		del, err := rd.deletions(ctx, frag)
		if err != nil {
			return nil, dataError(rd.ref.id, err)
		}
		var keep *roaring.Bitmap
		if f != nil && !vs.Postfilter {
			rows, err := rd.selected(ctx, frag, f)
			if err != nil {
				return nil, err
			}
			keep = roaring.New()
			for _, r := range rows {
				keep.Add(uint32(r))
			}
		}
		if covered {
			indexed.add(frag.ID, del, keep)
			continue
		}
		null := vc.null
		frags = append(frags, fragVectors{frag: frag, vc: vc, allowed: func(id int64) bool {
			off := uint32(id)
			return !del.Contains(off) && (null == nil || !null.Contains(off)) && (keep == nil || keep.Contains(off))
		}})
	}
	var hits []hit
	for qi, qv := range vs.Vectors {
		var cands []vecindex.Candidate
		if used != nil {
			if cands, err = rd.indexCandidates(ctx, used, fi, qv, k, vs, indexed.allow(used)); err != nil {
				return nil, err
			}
		}
		for _, f := range frags {
			if metric == vecindex.Hamming {
				qb := make([]byte, len(qv))
				for j, x := range qv {
					qb[j] = byte(int(x))
				}
				cands = append(cands, vecindex.ExactSearchBytes(f.vc.bytes, qb, k, f.allowed)...)
			} else {
				cands = append(cands, vecindex.ExactSearch(metric, &f.vc.vs, qv, k, f.allowed)...)
			}
		}
		slices.SortFunc(cands, func(a, b vecindex.Candidate) int {
			if c := cmp.Compare(a.Distance, b.Distance); c != 0 {
				return c
			}
			return cmp.Compare(a.ID, b.ID)
		})
		found := make([]hit, 0, min(k, len(cands)))
		for _, c := range cands[:min(k, len(cands))] {
			found = append(found, hit{addr: uint64(c.ID), distance: c.Distance, query: qi})
		}
		if f != nil && vs.Postfilter {
			if found, err = rd.postfilter(ctx, found, f); err != nil {
				return nil, err
			}
		}
		found = inBounds(found, vs.LowerBound, vs.UpperBound)
		if off := int(q.Offset); off > 0 {
			found = found[min(off, len(found)):]
		}
		hits = append(hits, found...)
	}
	stats.rowsMatched += int64(len(hits))
	return rd.fetchHits(ctx, proj, hits, "_distance", q.WithRowID, vs.Multi)
}

// inBounds keeps the hits with lower ≤ distance < upper.
func inBounds(hits []hit, lower, upper *float32) []hit {
	if lower == nil && upper == nil {
		return hits
	}
	out := hits[:0]
	for _, h := range hits {
		if (lower == nil || h.distance >= *lower) && (upper == nil || h.distance < *upper) {
			out = append(out, h)
		}
	}
	return out
}

// postfilter keeps the hits whose rows the filter keeps.
func (rd *reader) postfilter(ctx context.Context, hits []hit, f *filter) ([]hit, error) {
	out := hits[:0]
	for frag, group := range rd.byFragment(hits) {
		rows := make([]int, len(group))
		for k, h := range group {
			rows[k] = int(uint32(hits[h].addr))
		}
		b, err := rd.batch(ctx, frag, f.cols, rows)
		if err != nil {
			return nil, err
		}
		words, err := f.prog.Filter(b)
		b.Release()
		if err != nil {
			return nil, err
		}
		for k, h := range group {
			if words[k/64]>>(k%64)&1 == 0 {
				hits[h].addr = noRow
			}
		}
	}
	for _, h := range hits {
		if h.addr != noRow {
			out = append(out, h)
		}
	}
	return out, nil
}

// noRow marks a hit dropped by a postfilter.
const noRow = ^uint64(0)

// byFragment groups the positions of hits in hits by the fragment of their
// rows.
func (rd *reader) byFragment(hits []hit) map[*table.Fragment][]int {
	out := map[*table.Fragment][]int{}
	m := rd.s.ds.Manifest()
	for i, h := range hits {
		if f := m.Fragment(h.addr >> 32); f != nil {
			out[f] = append(out[f], i)
		}
	}
	return out
}

// fetchHits reads the projected columns of the hit rows and returns them
// in hit order, with the score column (_distance or _score), then _rowid
// when asked, then query_index for a batch of query vectors.
func (rd *reader) fetchHits(ctx context.Context, proj *projection, hits []hit, score string, withRowID, multi bool) (*store.Result, error) {
	out := proj.schema(rd.s.arrow.Metadata())
	var parts []arrow.RecordBatch
	defer func() {
		for _, b := range parts {
			b.Release()
		}
	}()
	pos := make([]int, len(hits))
	total := 0
	for frag, group := range rd.byFragment(hits) {
		rows := make([]int, len(group))
		for k, h := range group {
			rows[k] = int(uint32(hits[h].addr))
			pos[h] = total + k
		}
		b, err := rd.output(ctx, frag, proj, out, rows)
		if err != nil {
			return nil, err
		}
		parts = append(parts, b)
		total += len(rows)
	}
	var cols []arrow.Array
	if len(parts) > 0 {
		all, err := concatBatches(out, parts)
		if err != nil {
			return nil, err
		}
		ordered := takeBatch(all, pos)
		all.Release()
		defer ordered.Release()
		cols = ordered.Columns()
	} else {
		for _, f := range out.Fields() {
			c := array.MakeArrayOfNull(memory.DefaultAllocator, f.Type, 0)
			defer c.Release()
			cols = append(cols, c)
		}
	}
	fields := slices.Clone(out.Fields())
	cols = slices.Clone(cols)
	sb := array.NewFloat32Builder(memory.DefaultAllocator)
	rb := array.NewUint64Builder(memory.DefaultAllocator)
	qb := array.NewInt32Builder(memory.DefaultAllocator)
	for _, h := range hits {
		sb.Append(h.distance)
		rb.Append(h.addr)
		qb.Append(int32(h.query))
	}
	extra := []arrow.Array{sb.NewArray()}
	fields = append(fields, arrow.Field{Name: score, Type: arrow.PrimitiveTypes.Float32, Nullable: true})
	if withRowID {
		extra = append(extra, rb.NewArray())
		fields = append(fields, arrow.Field{Name: rowIDColumn, Type: arrow.PrimitiveTypes.Uint64})
	}
	if multi {
		extra = append(extra, qb.NewArray())
		fields = append(fields, arrow.Field{Name: "query_index", Type: arrow.PrimitiveTypes.Int32})
	}
	sb.Release()
	rb.Release()
	qb.Release()
	for _, c := range extra {
		defer c.Release()
	}
	md := rd.s.arrow.Metadata()
	sch := arrow.NewSchema(fields, &md)
	return &store.Result{Schema: sch, Version: int64(rd.s.ds.Version()),
		Batches: []arrow.RecordBatch{array.NewRecordBatch(sch, append(cols, extra...), int64(len(hits)))}}, nil
}
