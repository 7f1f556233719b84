package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancens/lancens/lance/blob"
	"github.com/lancens/lancens/lance/table"
	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/vecindex"
)

// vectorIndex is a loaded vector index: vecindex's structure, whose ids
// are row addresses.
type vectorIndex struct{ ix *vecindex.Index }

// CacheBytes implements memcache.Value.
func (v *vectorIndex) CacheBytes() int64 { return v.ix.MemoryBytes() + 64 }

func loadVectorIndex(data []byte) (*vectorIndex, error) {
	ix, err := vecindex.Load(data)
	if err != nil {
		return nil, err
	}
	return &vectorIndex{ix}, nil
}

// buildVectorIndex trains index ix over the vectors of column col in
// every fragment of rd's snapshot, deleted rows included (see index.go);
// rows without a vector are left out. It returns an error wrapping
// errBuild for data the index cannot be built from.
func (rd *reader) buildVectorIndex(ctx context.Context, col indexColumn, ix *indexRecord) (*vectorIndex, error) {
	kind, err := vecindex.ParseKind(ix.Type)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errBuild, err)
	}
	metric, err := vecindex.ParseMetric(ix.def.Metric)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errBuild, err)
	}
	vp := ix.def.Vector
	p := vecindex.Params{Kind: kind, Metric: metric, NumPartitions: vp.NumPartitions, TargetPartitionSize: vp.TargetPartitionSize,
		NumSubVectors: vp.NumSubVectors, NumBits: vp.NumBits, SampleRate: vp.SampleRate, MaxIterations: vp.MaxIterations,
		M: vp.M, EfConstruction: vp.EfConstruction, Seed: 1}
	dim := int(col.field.Type.(*arrow.FixedSizeListType).Len())
	var cols []*vectorColumn
	rows := 0
	for _, frag := range rd.s.ds.Manifest().Fragments {
		vc, err := rd.vectors(ctx, frag, col.top)
		if err != nil {
			return nil, err
		}
		cols = append(cols, vc)
		rows += len(vc.vs.IDs)
		if vc.null != nil {
			rows -= int(vc.null.GetCardinality())
		}
	}
	if rows == 0 {
		return nil, fmt.Errorf("%w: the column has no vectors to index", errBuild)
	}
	var built *vecindex.Index
	if metric == vecindex.Hamming {
		vs := &vecindex.ByteVectors{Dim: dim, Data: make([]byte, 0, rows*dim), IDs: make([]int64, 0, rows)}
		for _, vc := range cols {
			for r, id := range vc.vs.IDs {
				if vc.null == nil || !vc.null.Contains(uint32(r)) {
					vs.Data = append(vs.Data, vc.bytes.Data[r*dim:(r+1)*dim]...)
					vs.IDs = append(vs.IDs, id)
				}
			}
		}
		built, err = vecindex.BuildBytes(ctx, p, vs)
	} else {
		vs := &cols[0].vs
		if len(cols) > 1 || cols[0].null != nil {
			vs = &vecindex.Vectors{Dim: dim, Data: make([]float32, 0, rows*dim), IDs: make([]int64, 0, rows)}
			for _, vc := range cols {
				for r, id := range vc.vs.IDs {
					if vc.null == nil || !vc.null.Contains(uint32(r)) {
						vs.Data = append(vs.Data, vc.vs.Data[r*dim:(r+1)*dim]...)
						vs.IDs = append(vs.IDs, id)
					}
				}
			}
		}
		built, err = vecindex.Build(ctx, p, vs)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%w: %v", errBuild, err)
	}
	return &vectorIndex{built}, nil
}

// usedVectorIndex is the index a vector search goes through: the last
// build of an index of the searched column, and which fragments of the
// snapshot it covers.
type usedVectorIndex struct {
	rec *indexRecord
	vi  *vectorIndex
	cov coverage
}

// covers reports whether the index covers fragment frag (false for no
// index).
func (u *usedVectorIndex) covers(frag *table.Fragment) bool {
	if u == nil {
		return false
	}
	_, ok := u.cov.covered[frag.ID]
	return ok
}

// vectorIndexFor returns the index a search of vector field fi goes
// through, if any (nil when the search bypasses indexes, or none fits),
// and the metric of the search: the one asked for, else the index's,
// else l2. An index is used when it exists at the snapshot's version, its
// last build did not fail and it answers the search's metric; the newest
// such wins. It returns InvalidInput (13) for an unknown metric, and the
// errors of reading the index records and the index.
func (rd *reader) vectorIndexFor(ctx context.Context, vs *store.VectorSearch, fi int) (*usedVectorIndex, vecindex.Metric, error) {
	metric := vecindex.L2
	if vs.Metric != "" {
		var err error
		if metric, err = vecindex.ParseMetric(vs.Metric); err != nil {
			return nil, 0, store.Errorf(store.CodeInvalidInput, "unknown distance_type %q", vs.Metric)
		}
	}
	if vs.BypassIndex || rd.ref.branch != "" {
		return nil, metric, nil
	}
	recs, err := rd.indexRecords(ctx)
	if err != nil {
		return nil, 0, err
	}
	fieldID := rd.s.ds.Manifest().Schema.Fields[fi].ID
	var pick *indexRecord
	for _, ix := range recs {
		if store.IsVectorIndex(ix.Type) && ix.servesAt(rd.s.ds.Version()) && ix.def.FieldID == fieldID &&
			(pick == nil || ix.CreatedAt.After(pick.CreatedAt)) {
			pick = ix
		}
	}
	if pick == nil {
		return nil, metric, nil
	}
	if vs.Metric == "" {
		if metric, err = vecindex.ParseMetric(pick.def.Metric); err != nil {
			return nil, 0, err
		}
	}
	if pick.def.Metric != metric.String() {
		return nil, metric, nil // the index answers another metric: search exactly
	}
	col, ok := columnByID(rd.s, pick.def.FieldID)
	if !ok {
		return nil, metric, nil
	}
	cov, err := rd.coverageOf(pick.build, col)
	if err != nil {
		return nil, 0, dataError(rd.ref.id, err)
	}
	if len(cov.covered) == 0 {
		return nil, metric, nil
	}
	loaded, err := rd.e.loadIndex(ctx, rd.ref, pick)
	if errors.Is(err, blob.ErrNotFound) {
		return nil, metric, nil // rebuilt or dropped since the record was read
	}
	if err != nil {
		return nil, 0, dataError(rd.ref.id, err)
	}
	return &usedVectorIndex{rec: pick, vi: loaded.(*vectorIndex), cov: cov}, metric, nil
}

// indexCandidates returns the rows of the fragments u covers nearest to
// q, through the index: k of them, or k × refine_factor re-ranked by
// their exact distances (fi is the vector field) when the search asks
// for a refinement. allow, when not nil, keeps the rows a search may
// answer (live ones, through the prefilter).
func (rd *reader) indexCandidates(ctx context.Context, u *usedVectorIndex, fi int, q []float32, k int, vs *store.VectorSearch,
	allow func(int64) bool) ([]vecindex.Candidate, error) {
	n := k
	if vs.RefineFactor > 1 {
		n = k * vs.RefineFactor
	}
	cands := u.vi.ix.Search(q, vecindex.SearchOptions{K: k, Candidates: n, Nprobes: vs.Nprobes, Ef: vs.Ef, Allow: allow})
	metric := u.vi.ix.Params().Metric
	if vs.RefineFactor <= 0 || metric == vecindex.Hamming {
		return cands, nil
	}
	m := rd.s.ds.Manifest()
	byFrag := map[uint64]*vectorColumn{}
	for i := range cands {
		id := uint64(cands[i].ID) >> 32
		vc, ok := byFrag[id]
		if !ok {
			frag := m.Fragment(id)
			if frag == nil {
				continue
			}
			var err error
			if vc, err = rd.vectors(ctx, frag, fi); err != nil {
				return nil, dataError(rd.ref.id, err)
			}
			byFrag[id] = vc
		}
		off := int(uint32(cands[i].ID))
		cands[i].Distance = vecindex.Distance(metric, vc.vs.Data[off*vc.vs.Dim:(off+1)*vc.vs.Dim], q)
	}
	slices.SortFunc(cands, compareCandidates)
	return cands, nil
}

// compareCandidates orders candidates by distance, then id.
func compareCandidates(a, b vecindex.Candidate) int {
	switch {
	case a.Distance < b.Distance:
		return -1
	case a.Distance > b.Distance:
		return 1
	case a.ID < b.ID:
		return -1
	case a.ID > b.ID:
		return 1
	}
	return 0
}

// indexAllow is what a search through an index may answer of the
// fragments of the snapshot the index covers: their rows that the
// deletion files keep and the prefilter (when there is one) keeps. The
// index may also hold rows of fragments the snapshot does not have (gone
// since the build, or not yet at an older version), which it never
// answers.
type indexAllow struct {
	// frags holds the covered fragments by id (small ids, as Lance gives
	// them, index a slice), or byID when some id is too large for one.
	frags []*allowedRows
	byID  map[uint64]*allowedRows
	// all is set while every covered fragment answers all its rows.
	all   bool
	count int
}

type allowedRows struct{ del, keep *roaring.Bitmap }

// maxDenseFragment is the largest fragment id indexAllow keeps in a slice.
const maxDenseFragment = 1 << 16

// add adds covered fragment id, whose deleted rows are del and, with a
// prefilter, whose kept rows are keep (nil without one).
func (a *indexAllow) add(id uint64, del, keep *roaring.Bitmap) {
	if a.count == 0 {
		a.all = true
	}
	a.count++
	a.all = a.all && del.IsEmpty() && keep == nil
	rows := &allowedRows{del: del, keep: keep}
	if id < maxDenseFragment && a.byID == nil {
		for uint64(len(a.frags)) <= id {
			a.frags = append(a.frags, nil)
		}
		a.frags[id] = rows
		return
	}
	if a.byID == nil {
		a.byID = map[uint64]*allowedRows{}
		for i, r := range a.frags {
			if r != nil {
				a.byID[uint64(i)] = r
			}
		}
		a.frags = nil
	}
	a.byID[id] = rows
}

// allow returns the filter of the rows of index u a search may answer, or
// nil when it may answer every row the index holds (it covers exactly the
// fragments of its build, none deleting or filtering rows).
func (a *indexAllow) allow(u *usedVectorIndex) func(int64) bool {
	if a.all && a.count == len(u.rec.build.Fragments) {
		return nil
	}
	return func(id int64) bool {
		frag, off := uint64(id)>>32, uint32(id)
		var r *allowedRows
		if a.byID != nil {
			r = a.byID[frag]
		} else if frag < uint64(len(a.frags)) {
			r = a.frags[frag]
		}
		return r != nil && !r.del.Contains(off) && (r.keep == nil || r.keep.Contains(off))
	}
}
