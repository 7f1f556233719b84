package vecindex

import "slices"

// nodeDist is a graph node or partition number with its distance.
type nodeDist struct {
	d float32
	n int32
}

// before orders nodeDists by distance, then number.
func (a nodeDist) before(b nodeDist) bool {
	return a.d < b.d || (a.d == b.d && a.n < b.n)
}

// minHeap is a binary heap of nodeDists with the nearest at the root.
type minHeap []nodeDist

func (h *minHeap) push(x nodeDist) {
	s := append(*h, x)
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if !s[i].before(s[p]) {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
	*h = s
}

func (h *minHeap) pop() nodeDist {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s = s[:last]
	for i := 0; ; {
		l := 2*i + 1
		if l >= len(s) {
			break
		}
		if r := l + 1; r < len(s) && s[r].before(s[l]) {
			l = r
		}
		if !s[l].before(s[i]) {
			break
		}
		s[i], s[l] = s[l], s[i]
		i = l
	}
	*h = s
	return top
}

// maxHeap is a binary heap of nodeDists with the farthest at the root.
type maxHeap []nodeDist

func (h *maxHeap) push(x nodeDist) {
	s := append(*h, x)
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if !s[p].before(s[i]) {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
	*h = s
}

func (h *maxHeap) pop() nodeDist {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s = s[:last]
	for i := 0; ; {
		l := 2*i + 1
		if l >= len(s) {
			break
		}
		if r := l + 1; r < len(s) && s[l].before(s[r]) {
			l = r
		}
		if !s[i].before(s[l]) {
			break
		}
		s[i], s[l] = s[l], s[i]
		i = l
	}
	*h = s
	return top
}

// drainSorted empties h into dst (reusing its storage) nearest first and
// returns it.
func (h *maxHeap) drainSorted(dst []nodeDist) []nodeDist {
	n := len(*h)
	dst = slices.Grow(dst[:0], n)[:n]
	for i := n - 1; i >= 0; i-- {
		dst[i] = h.pop()
	}
	return dst
}

// compareNodeDist orders nodeDists by distance, then number.
func compareNodeDist(a, b nodeDist) int {
	if a.before(b) {
		return -1
	}
	if b.before(a) {
		return 1
	}
	return 0
}
