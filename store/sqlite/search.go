package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/vecindex"
)

// hit is one search result: a row and its distance or score.
type hit struct {
	id    int64
	value float32
	query int // query_index of a batch search
}

// vectorColumn picks the searched column: the one named, or the only
// vector column of the schema. Returns TableColumnNotFound (12) or
// InvalidInput (13).
func vectorColumn(ts *tableSchema, name string) (arrow.Field, *fieldLayout, error) {
	if name != "" {
		f, fl, ok := ts.lookup(splitPath(name))
		if !ok {
			return f, nil, store.Errorf(store.CodeTableColumnNotFound, "vector column %s not found", name)
		}
		if !store.IsVectorType(f.Type) {
			return f, nil, store.Errorf(store.CodeInvalidInput, "column %s is %s, not a vector column", name, f.Type)
		}
		return f, fl, nil
	}
	var found []int
	for i, f := range ts.arrow.Fields() {
		if store.IsVectorType(f.Type) {
			found = append(found, i)
		}
	}
	switch len(found) {
	case 0:
		return arrow.Field{}, nil, store.Errorf(store.CodeInvalidInput, "the table has no vector column to search")
	case 1:
		return ts.arrow.Field(found[0]), ts.fields[found[0]], nil
	}
	var names []string
	for _, i := range found {
		names = append(names, ts.arrow.Field(i).Name)
	}
	return arrow.Field{}, nil, store.Errorf(store.CodeInvalidInput, "the table has several vector columns (%s); name one in vector_column", strings.Join(names, ", "))
}

// searchVectors runs the vector search of q on table t.
func (db *DB) searchVectors(ctx context.Context, tx *Tx, t *tableRow, q store.Query) (*store.Result, error) {
	vs := q.Vector
	v, ts, err := schemaAt(ctx, tx, t, q.Version)
	if err != nil {
		return nil, err
	}
	field, fl, err := vectorColumn(ts, vs.Column)
	if err != nil {
		return nil, err
	}
	idx, err := db.usableIndex(ctx, tx, t, fl.Column, v, vs)
	if err != nil {
		return nil, err
	}
	metric := vecindex.L2
	switch {
	case vs.Metric != "":
		if metric, err = vecindex.ParseMetric(vs.Metric); err != nil {
			return nil, store.Errorf(store.CodeInvalidInput, "unknown distance_type %q", vs.Metric)
		}
	case idx != nil:
		metric = idx.ix.Params().Metric
	}
	if idx != nil && idx.ix.Params().Metric != metric {
		idx = nil // the index answers another metric: search exactly
	}
	val, err := db.cache.get(ctx, cacheKey{table: t.cacheID(), name: "vectors/" + fl.Column, version: v}, func() (cached, error) {
		return loadVectors(ctx, tx, t, field, fl.Column, v)
	})
	if err != nil {
		return nil, err
	}
	set := val.(*vectorSet)
	if metric == vecindex.Hamming && set.bytes == nil {
		return nil, store.Errorf(store.CodeInvalidInput, "hamming distance needs a vector column of uint8")
	}
	for _, qv := range vs.Vectors {
		if len(qv) != set.dim {
			return nil, store.Errorf(store.CodeInvalidInput, "the query vector has %d dimensions, column %s has %d", len(qv), field.Name, set.dim)
		}
	}
	var allowed rowSet
	if q.Filter != "" && !vs.Postfilter {
		if allowed, err = db.filterRows(ctx, tx, t, ts, v, q.Filter); err != nil {
			return nil, err
		}
	}
	k := int(q.Limit)
	if k <= 0 {
		k = store.DefaultSearchK
	}
	k = min(k, max(1, len(set.ids()))) // "unlimited" k from the SDK is i64::MAX
	if err := q.CheckSearchRows(int64(k)*int64(len(vs.Vectors)), "k × query vectors"); err != nil {
		return nil, err
	}
	var hits []hit
	for qi, qv := range vs.Vectors {
		found := nearest(set, idx, metric, qv, k, vs, allowed)
		if vs.Postfilter && q.Filter != "" {
			if found, err = db.postfilter(ctx, tx, t, ts, v, q.Filter, found); err != nil {
				return nil, err
			}
		}
		found = inBounds(found, vs.LowerBound, vs.UpperBound)
		if off := int(q.Offset); off > 0 {
			found = found[min(off, len(found)):]
		}
		for i := range found {
			found[i].query = qi
		}
		hits = append(hits, found...)
	}
	return fetchHits(ctx, tx, t, ts, q, v, hits, "_distance", vs.Multi)
}

// nearest finds the k rows nearest to q: with the index (and the exact
// tail it does not cover) or exactly over the whole set.
func nearest(set *vectorSet, idx *vectorIndex, metric vecindex.Metric, q []float32, k int, vs *store.VectorSearch, allowed rowSet) []hit {
	allow := set.has
	if allowed != nil {
		allow = func(id int64) bool { return set.has(id) && allowed.has(id) }
	}
	var cands []vecindex.Candidate
	exactTail := func(after int64) []vecindex.Candidate {
		f, b := set.tail(after)
		if metric == vecindex.Hamming {
			return vecindex.ExactSearchBytes(b, bytesOf(q), k, allow)
		}
		return vecindex.ExactSearch(metric, f, q, k, allow)
	}
	if idx == nil || vs.BypassIndex {
		cands = exactTail(math.MinInt64)
	} else {
		n := k
		if vs.RefineFactor > 1 {
			n = k * vs.RefineFactor
		}
		opts := vecindex.SearchOptions{K: k, Candidates: n, Nprobes: vs.Nprobes, Ef: vs.Ef, Allow: allow}
		if metric == vecindex.Hamming {
			cands = idx.ix.SearchBytes(bytesOf(q), opts)
		} else {
			cands = idx.ix.Search(q, opts)
		}
		if vs.RefineFactor > 0 && metric != vecindex.Hamming {
			for i := range cands {
				cands[i].Distance = vecindex.Distance(metric, set.vector(set.position(cands[i].ID)), q)
			}
		}
		if !vs.FastSearch {
			cands = append(cands, exactTail(idx.maxRowID)...)
		}
		slices.SortFunc(cands, func(a, b vecindex.Candidate) int {
			if a.Distance != b.Distance {
				if a.Distance < b.Distance {
					return -1
				}
				return 1
			}
			return int(a.ID - b.ID)
		})
	}
	if len(cands) > k {
		cands = cands[:k]
	}
	out := make([]hit, len(cands))
	for i, c := range cands {
		out[i] = hit{id: c.ID, value: c.Distance}
	}
	return out
}

func bytesOf(q []float32) []byte {
	b := make([]byte, len(q))
	for i, x := range q {
		b[i] = byte(int(x))
	}
	return b
}

// inBounds keeps the hits with lower ≤ distance < upper.
func inBounds(hits []hit, lower, upper *float32) []hit {
	if lower == nil && upper == nil {
		return hits
	}
	out := hits[:0]
	for _, h := range hits {
		if (lower == nil || h.value >= *lower) && (upper == nil || h.value < *upper) {
			out = append(out, h)
		}
	}
	return out
}

// postfilter keeps the hits whose rows match filter.
func (db *DB) postfilter(ctx context.Context, tx *Tx, t *tableRow, ts *tableSchema, v int64, filter string, hits []hit) ([]hit, error) {
	ok, err := db.filterRows(ctx, tx, t, ts, v, filter)
	if err != nil {
		return nil, err
	}
	out := hits[:0]
	for _, h := range hits {
		if ok.has(h.id) {
			out = append(out, h)
		}
	}
	return out, nil
}

// fetchHits reads the projected columns of the hit rows and returns them in
// hit order with the score column (_distance or _score), then _rowid when
// asked, then query_index for a batch search.
func fetchHits(ctx context.Context, tx *Tx, t *tableRow, ts *tableSchema, q store.Query, v int64, hits []hit, score string, multi bool) (*store.Result, error) {
	p, err := buildProjection(ts, q)
	if err != nil {
		return nil, err
	}
	ids := make([]int64, len(hits))
	for i, h := range hits {
		ids[i] = h.id
	}
	values := map[int64][]any{}
	if len(p.cols) > 0 && len(ids) > 0 {
		idJSON, _ := json.Marshal(ids)
		rows, err := tx.Query(ctx, fmt.Sprintf("SELECT _rowid, %s FROM %s WHERE _rowid IN (SELECT value FROM json_each(?))",
			strings.Join(p.cols, ", "), dataTable(t)), append(p.args, string(idJSON))...)
		if err != nil {
			return nil, queryError(ctx, err)
		}
		defer rows.Close()
		for rows.Next() {
			vals := make([]any, len(p.cols)+1)
			ptrs := make([]any, len(vals))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				return nil, internal("fetch rows", err)
			}
			values[vals[0].(int64)] = vals[1:]
		}
		if err := rows.Err(); err != nil {
			return nil, queryError(ctx, err)
		}
	}
	readers := p.readers()
	for _, id := range ids {
		vals := values[id]
		off := 0
		for _, r := range readers {
			if err := r.read(r.builder, vals[off:off+r.width]); err != nil {
				return nil, internal("fetch rows", err)
			}
			off += r.width
		}
	}
	fields := p.fields
	cols := make([]arrow.Array, 0, len(readers)+3)
	for _, r := range readers {
		cols = append(cols, r.builder.NewArray())
	}
	scoreB := array.NewFloat32Builder(memory.DefaultAllocator)
	for _, h := range hits {
		scoreB.Append(h.value)
	}
	fields = append(fields, arrow.Field{Name: score, Type: arrow.PrimitiveTypes.Float32, Nullable: true})
	cols = append(cols, scoreB.NewArray())
	if q.WithRowID {
		b := array.NewUint64Builder(memory.DefaultAllocator)
		for _, id := range ids {
			b.Append(uint64(id))
		}
		fields = append(fields, arrow.Field{Name: "_rowid", Type: arrow.PrimitiveTypes.Uint64})
		cols = append(cols, b.NewArray())
	}
	if multi {
		b := array.NewInt32Builder(memory.DefaultAllocator)
		for _, h := range hits {
			b.Append(int32(h.query))
		}
		fields = append(fields, arrow.Field{Name: "query_index", Type: arrow.PrimitiveTypes.Int32})
		cols = append(cols, b.NewArray())
	}
	md := ts.arrow.Metadata()
	schema := arrow.NewSchema(fields, &md)
	return &store.Result{Schema: schema, Batches: []arrow.RecordBatch{array.NewRecordBatch(schema, cols, int64(len(hits)))}, Version: v}, nil
}
