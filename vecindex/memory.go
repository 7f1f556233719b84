package vecindex

import "unsafe"

// MemoryBytes returns the bytes of memory the index holds: every array it
// keeps (by capacity), its graphs and deletion marks, and the scratch one
// search allocates (searches keep their scratch in a pool).
func (ix *Index) MemoryBytes() int64 {
	n := int64(unsafe.Sizeof(*ix))
	n += capBytes(ix.offsets) + capBytes(ix.ids) + capBytes(ix.centroids) + capBytes(ix.bcentroids) +
		capBytes(ix.vecs) + capBytes(ix.norms) + capBytes(ix.bvecs) + capBytes(ix.codes) + capBytes(ix.bias) +
		capBytes(ix.anchors) + capBytes(ix.anchorOf)
	if ix.pq != nil {
		n += int64(unsafe.Sizeof(*ix.pq)) + capBytes(ix.pq.codebook)
	}
	if ix.sq != nil {
		n += int64(unsafe.Sizeof(*ix.sq)) + capBytes(ix.sq.lo) + capBytes(ix.sq.step)
	}
	n += capBytes(ix.graphs)
	for _, g := range ix.graphs {
		n += capBytes(g.levels)
		for _, lv := range g.levels {
			n += capBytes(lv.offsets) + capBytes(lv.links)
		}
	}
	if d := ix.deleted.Load(); d != nil {
		n += int64(unsafe.Sizeof(*d)) + capBytes(d.bits)
	}
	return n + ix.searcherBytes()
}

// searcherBytes is the scratch a searcher allocates up front (see
// Index.searcher).
func (ix *Index) searcherBytes() int64 {
	parts := int64(max(len(ix.offsets)-1, 0))
	n := int64(unsafe.Sizeof(searcher{})) + parts*(4+1) // probe, seen
	if ix.params.Metric == Cosine {
		n += 4 * int64(ix.dim)
	}
	if ix.pq != nil {
		n += int64(ix.codeLen)*256*4 + int64(ix.pq.m)*16*4
	}
	if ix.sq != nil {
		n += 8 * int64(ix.dim)
	}
	if ix.graphs != nil {
		n += 4 * int64(ix.maxPart)
	}
	return n
}

// capBytes is the memory behind a slice: its capacity times the element
// size.
func capBytes[T any](s []T) int64 {
	var zero T
	return int64(cap(s)) * int64(unsafe.Sizeof(zero))
}
