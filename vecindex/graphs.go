package vecindex

import (
	"cmp"
	"context"
	"slices"

	"github.com/lancens/lancens/internal/progress"
)

// orderByLevel draws an HNSW level for every row, per partition p from
// (Seed, streamHNSW+p), reorders each partition's rows in order by level,
// highest first (stable), and returns the levels in the new order.
func (ix *Index) orderByLevel(order []int) []uint8 {
	levels := make([]uint8, len(order))
	for p := range len(ix.offsets) - 1 {
		lo, hi := ix.offsets[p], ix.offsets[p+1]
		lv := drawLevels(newRand(ix.params.Seed, streamHNSW+uint64(p)), hi-lo, ix.params.M)
		idx := make([]int, hi-lo)
		for i := range idx {
			idx[i] = i
		}
		slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(lv[b], lv[a]) })
		rows := slices.Clone(order[lo:hi])
		for i, j := range idx {
			order[lo+i], levels[lo+i] = rows[j], lv[j]
		}
	}
	return levels
}

// buildGraphs builds the HNSW graph of every partition from the rows of
// space (the build vectors) listed in stored order by order, with levels
// from orderByLevel: partitions in parallel when there are many, else one
// after another with each build parallel. It returns ctx.Err() when ctx is
// cancelled.
func (ix *Index) buildGraphs(ctx context.Context, space []float32, order []int, levels []uint8, nw int) error {
	parts := len(ix.offsets) - 1
	ix.graphs = make([]graph, parts)
	outer, inner := 1, nw
	if parts >= 2*nw {
		outer, inner = nw, 1
	}
	done := progress.NewCounter(ctx, "graph", int64(len(order)))
	return parallelFor(ctx, outer, parts, 1, func(_, lo, hi int) {
		for p := lo; p < hi; p++ {
			a, z := ix.offsets[p], ix.offsets[p+1]
			if a == z {
				continue
			}
			vecs := gatherRows(space, ix.dim, order[a:z])
			b := newGraphBuilder(vecs, ix.dim, ix.params.Metric == Dot, ix.params.M, ix.params.EfConstruction, levels[a:z])
			g, err := b.build(ctx, inner)
			if err != nil {
				return
			}
			ix.graphs[p] = g
			done.Add(int64(z - a))
		}
	})
}
