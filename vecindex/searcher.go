package vecindex

import "slices"

// searcher is the scratch state of one search, pooled per index.
type searcher struct {
	ids   []int64
	del   *deletions
	allow func(int64) bool

	top   topK
	qn    []float32  // the query at unit length (cosine)
	probe []float32  // the query's distance to every centroid
	order []nodeDist // partitions ranked so far, nearest first
	heap  maxHeap    // partition selection
	seen  []bool     // partitions ranked, for rankRest
	tab   [][256]float32
	tmp   []float32 // 4-bit PQ table scratch
	w     []int64   // SQ weights
	unit  float32   // the value of one unit of sqDot
	// anchorBase holds each anchor\'s distance term (see codeDist).
	anchorBase [maxAnchors]float32

	visited []uint32
	stamp   uint32
	cand    minHeap
	res     maxHeap
}

// searcher returns pooled scratch for a search filtered by allow.
func (ix *Index) searcher(allow func(int64) bool) *searcher {
	s, _ := ix.pool.Get().(*searcher)
	if s == nil {
		parts := len(ix.offsets) - 1
		s = &searcher{ids: ix.ids, probe: make([]float32, parts), seen: make([]bool, parts)}
		if ix.params.Metric == Cosine {
			s.qn = make([]float32, ix.dim)
		}
		if ix.pq != nil {
			s.tab = make([][256]float32, ix.codeLen)
			s.tmp = make([]float32, ix.pq.m*16)
		}
		if ix.sq != nil {
			s.w = make([]int64, ix.dim)
		}
		if ix.graphs != nil {
			s.visited = make([]uint32, ix.maxPart)
		}
	}
	s.del, s.allow = ix.deleted.Load(), allow
	return s
}

// release returns s to the pool.
func (ix *Index) release(s *searcher) {
	s.del, s.allow = nil, nil
	ix.pool.Put(s)
}

// accept reports whether row may be returned: not deleted and allowed.
func (s *searcher) accept(row int) bool {
	return (s.del == nil || !s.del.has(row)) && (s.allow == nil || s.allow(s.ids[row]))
}

// nextVisit starts a new graph search and returns the visited marks, which
// equal s.stamp for nodes visited by it.
func (s *searcher) nextVisit() []uint32 {
	s.stamp++
	if s.stamp == 0 {
		clear(s.visited)
		s.stamp = 1
	}
	return s.visited
}

// rankNearest sets s.order to the n partitions nearest to the query by
// s.probe, nearest first.
func (s *searcher) rankNearest(n int) {
	h := s.heap[:0]
	for p, d := range s.probe {
		h.push(nodeDist{d, int32(p)})
		if len(h) > n {
			h.pop()
		}
	}
	s.order = h.drainSorted(s.order)
	s.heap = h
}

// rankRest appends the partitions not yet in s.order to it, nearest first.
func (s *searcher) rankRest() {
	clear(s.seen)
	for _, x := range s.order {
		s.seen[x.n] = true
	}
	start := len(s.order)
	for p, d := range s.probe {
		if !s.seen[p] {
			s.order = append(s.order, nodeDist{d, int32(p)})
		}
	}
	slices.SortFunc(s.order[start:], compareNodeDist)
}
