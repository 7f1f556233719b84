package vecindex

import (
	"cmp"
	"context"
	"math"
	"math/rand/v2"
	"slices"
)

// Graph construction inserts nodes in batches: every node of a batch
// searches the graph as the previous batches left it, in parallel, then the
// reverse links are added per target node, in parallel across targets and
// in node order within one. The graph thus depends only on the vectors and
// levels, not on the number of workers. Batches grow with the graph, each
// at most 1/batchDivisor of the nodes already inserted and maxBatch nodes.
const (
	batchDivisor = 32
	maxBatch     = 1024
	maxLevel     = 15
)

// graphBuilder builds the HNSW graph of one partition.
type graphBuilder struct {
	vecs   []float32 // node i's vector is vecs[i*dim:(i+1)*dim]
	dim    int
	dot    bool // distance is −a·b rather than squared euclidean
	m, efc int
	levels []uint8 // per node, non-increasing
	// Per level l: the nodes present (counts[l]), the link capacity per node
	// (caps[l]), and each node's links, their distances and their number.
	counts []int
	caps   []int
	links  [][]int32
	dists  [][]float32
	sizes  [][]int32
}

// buildScratch is one worker's search state.
type buildScratch struct {
	visited []uint32
	stamp   uint32
	cand    minHeap
	res     maxHeap
	found   []nodeDist
	merge   []nodeDist
}

// linkRequest asks for node n, at distance d, to be added to the links of
// node t on level l.
type linkRequest struct {
	l    int
	t, n int32
	d    float32
}

// drawLevels returns a random HNSW level for each of n nodes, drawn from
// rng with the usual exponential distribution for m links per node.
func drawLevels(rng *rand.Rand, n, m int) []uint8 {
	ml := 1 / math.Log(float64(m))
	out := make([]uint8, n)
	for i := range out {
		out[i] = uint8(min(int(-math.Log(1-rng.Float64())*ml), maxLevel))
	}
	return out
}

// newGraphBuilder prepares the graph of the nodes whose vectors are the
// rows of vecs and whose levels (non-increasing) are levels.
func newGraphBuilder(vecs []float32, dim int, dotDist bool, m, efc int, levels []uint8) *graphBuilder {
	b := &graphBuilder{vecs: vecs, dim: dim, dot: dotDist, m: m, efc: max(efc, m), levels: levels}
	top := int(levels[0])
	for l := 0; l <= top; l++ {
		cnt := 0
		for cnt < len(levels) && int(levels[cnt]) >= l {
			cnt++
		}
		c := m
		if l == 0 {
			c = 2 * m
		}
		b.counts = append(b.counts, cnt)
		b.caps = append(b.caps, c)
		b.links = append(b.links, make([]int32, cnt*c))
		b.dists = append(b.dists, make([]float32, cnt*c))
		b.sizes = append(b.sizes, make([]int32, cnt))
	}
	return b
}

func (b *graphBuilder) vec(i int32) []float32 {
	return b.vecs[int(i)*b.dim : int(i+1)*b.dim]
}

// distTo returns the distance of q to node i, or for l2 possibly some
// value above limit once it is known to exceed limit.
func (b *graphBuilder) distTo(q []float32, i int32, limit float32) float32 {
	if b.dot {
		return -dot(q, b.vec(i))
	}
	return l2Bounded(q, b.vec(i), limit)
}

func (b *graphBuilder) neighbors(l int, i int32) []int32 {
	base := int(i) * b.caps[l]
	return b.links[l][base : base+int(b.sizes[l][i])]
}

// build links every node and returns the graph, or ctx.Err() when ctx is
// cancelled. It uses up to nw goroutines.
func (b *graphBuilder) build(ctx context.Context, nw int) (graph, error) {
	n := len(b.levels)
	scratch := make([]*buildScratch, max(nw, 1))
	get := func(w int) *buildScratch {
		if scratch[w] == nil {
			scratch[w] = &buildScratch{visited: make([]uint32, n)}
		}
		return scratch[w]
	}
	var reqs []linkRequest
	var groups []int
	for lo := 1; lo < n; {
		hi := min(lo+min(max(1, lo/batchDivisor), maxBatch), n)
		err := parallelFor(ctx, nw, hi-lo, 1, func(w, a, z int) {
			for i := a; i < z; i++ {
				b.insert(get(w), int32(lo+i))
			}
		})
		if err != nil {
			return graph{}, err
		}
		reqs, groups = b.reverseLinks(reqs[:0], groups[:0], lo, hi)
		err = parallelFor(ctx, nw, len(groups)-1, 16, func(w, a, z int) {
			s := get(w)
			for _, r := range reqs[groups[a]:groups[z]] {
				b.addLink(s, r)
			}
		})
		if err != nil {
			return graph{}, err
		}
		lo = hi
	}
	return b.compact(), nil
}

// insert sets the links of node q from a search of the current graph.
func (b *graphBuilder) insert(s *buildScratch, q int32) {
	vq := b.vec(q)
	ep := nodeDist{b.distTo(vq, 0, inf), 0}
	lq := int(b.levels[q])
	for l := len(b.counts) - 1; l > lq; l-- {
		for moved := true; moved; {
			moved = false
			for _, nb := range b.neighbors(l, ep.n) {
				if d := b.distTo(vq, nb, ep.d); d < ep.d {
					ep, moved = nodeDist{d, nb}, true
				}
			}
		}
	}
	for l := lq; l >= 0; l-- {
		found := b.searchLayer(s, vq, ep, l)
		ep = found[0]
		sel := b.selectNeighbors(found, b.m)
		base := int(q) * b.caps[l]
		for j, x := range sel {
			b.links[l][base+j] = x.n
			b.dists[l][base+j] = x.d
		}
		b.sizes[l][q] = int32(len(sel))
	}
}

// searchLayer returns the efc nodes of level l nearest to q found by
// best-first search from ep, nearest first, in s.found.
func (b *graphBuilder) searchLayer(s *buildScratch, q []float32, ep nodeDist, l int) []nodeDist {
	s.stamp++
	if s.stamp == 0 {
		clear(s.visited)
		s.stamp = 1
	}
	s.visited[ep.n] = s.stamp
	cand, res := s.cand[:0], s.res[:0]
	cand.push(ep)
	res.push(ep)
	for len(cand) > 0 {
		c := cand.pop()
		if len(res) >= b.efc && c.d > res[0].d {
			break
		}
		for _, nb := range b.neighbors(l, c.n) {
			if s.visited[nb] == s.stamp {
				continue
			}
			s.visited[nb] = s.stamp
			limit := inf
			if len(res) >= b.efc {
				limit = res[0].d
			}
			d := b.distTo(q, nb, limit)
			if d >= limit {
				continue
			}
			cand.push(nodeDist{d, nb})
			res.push(nodeDist{d, nb})
			if len(res) > b.efc {
				res.pop()
			}
		}
	}
	s.cand = cand
	s.found = res.drainSorted(s.found)
	s.res = res
	return s.found
}

// selectNeighbors keeps, from cands sorted nearest first, up to limit nodes
// that are each nearer to the base node than to any node kept before them
// (the HNSW heuristic), and returns them in cands' storage.
func (b *graphBuilder) selectNeighbors(cands []nodeDist, limit int) []nodeDist {
	out := cands[:0]
	for _, c := range cands {
		if len(out) == limit {
			break
		}
		vc := b.vec(c.n)
		keep := true
		for _, k := range out {
			if b.distTo(vc, k.n, c.d) < c.d {
				keep = false
				break
			}
		}
		if keep {
			out = append(out, c)
		}
	}
	return out
}

// reverseLinks returns the requests to link the targets of nodes lo..hi-1
// back to them, sorted by level, target and node, and the start of each
// (level, target) group followed by len(reqs).
func (b *graphBuilder) reverseLinks(reqs []linkRequest, groups []int, lo, hi int) ([]linkRequest, []int) {
	for q := lo; q < hi; q++ {
		for l := 0; l <= int(b.levels[q]); l++ {
			base := q * b.caps[l]
			for j, t := range b.neighbors(l, int32(q)) {
				reqs = append(reqs, linkRequest{l: l, t: t, n: int32(q), d: b.dists[l][base+j]})
			}
		}
	}
	slices.SortFunc(reqs, func(x, y linkRequest) int {
		if c := cmp.Compare(x.l, y.l); c != 0 {
			return c
		}
		if c := cmp.Compare(x.t, y.t); c != 0 {
			return c
		}
		return cmp.Compare(x.n, y.n)
	})
	for i, r := range reqs {
		if i == 0 || r.l != reqs[i-1].l || r.t != reqs[i-1].t {
			groups = append(groups, i)
		}
	}
	return reqs, append(groups, len(reqs))
}

// addLink adds r.n to the links of r.t, re-selecting them with the
// heuristic when full.
func (b *graphBuilder) addLink(s *buildScratch, r linkRequest) {
	c := b.caps[r.l]
	base := int(r.t) * c
	links, dists := b.links[r.l][base:base+c], b.dists[r.l][base:base+c]
	size := int(b.sizes[r.l][r.t])
	if size < c {
		links[size], dists[size] = r.n, r.d
		b.sizes[r.l][r.t]++
		return
	}
	m := s.merge[:0]
	for j := range c {
		m = append(m, nodeDist{dists[j], links[j]})
	}
	m = append(m, nodeDist{r.d, r.n})
	slices.SortFunc(m, compareNodeDist)
	m = b.selectNeighbors(m, c)
	for j, x := range m {
		links[j], dists[j] = x.n, x.d
	}
	b.sizes[r.l][r.t] = int32(len(m))
	s.merge = m
}

// compact returns the graph with its links in compressed rows.
func (b *graphBuilder) compact() graph {
	g := graph{levels: make([]graphLevel, len(b.counts))}
	for l, cnt := range b.counts {
		total := 0
		for _, sz := range b.sizes[l] {
			total += int(sz)
		}
		lv := graphLevel{offsets: make([]int32, cnt+1), links: make([]int32, 0, total)}
		for i := range cnt {
			lv.links = append(lv.links, b.neighbors(l, int32(i))...)
			lv.offsets[i+1] = int32(len(lv.links))
		}
		g.levels[l] = lv
	}
	return g
}
