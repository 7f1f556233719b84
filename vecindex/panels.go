package vecindex

// panels holds k vectors of dim values (centroids or codewords) laid out
// for finding the nearest of them to a vector with one multiply-add per 8
// of them and dimension (see simd.L2Nearest).
//
// The vectors are taken in blocks of 8, the last block padded with vectors
// of +Inf values (at distance +Inf from any finite vector), the blocks
// grouped into panels (see panelBlocks), and a panel of g blocks stores,
// for each dimension d in turn, the 8g values of dimension d of its
// vectors.
type panels struct {
	dim, k int
	data   []float32
}

// newPanels returns the rows of vecs (dim values each) as panels.
func newPanels(vecs []float32, dim int) *panels {
	ps := &panels{}
	ps.set(vecs, dim)
	return ps
}

// set lays out the rows of vecs (dim values each) into ps, reusing its
// memory.
func (ps *panels) set(vecs []float32, dim int) {
	k := len(vecs) / dim
	ps.dim, ps.k = dim, k
	size := ps.blocks() * 8 * dim
	if cap(ps.data) < size {
		ps.data = make([]float32, size)
	}
	ps.data = ps.data[:size]
	off, first := 0, 0
	for blocks := ps.blocks(); blocks > 0; {
		w := 8 * panelBlocks(blocks)
		p := ps.data[off : off+w*dim]
		for j := range w {
			if v := first + j; v < k {
				for d, x := range vecs[v*dim : (v+1)*dim] {
					p[d*w+j] = x
				}
			} else {
				for d := range dim {
					p[d*w+j] = inf
				}
			}
		}
		off, first, blocks = off+w*dim, first+w, blocks-w/8
	}
}

// blocks returns the number of blocks of 8 vectors.
func (ps *panels) blocks() int { return (ps.k + 7) / 8 }

// nearest returns the index of the vector nearest to x (dim finite values)
// in euclidean distance, the lowest on ties (0 when every distance is
// +Inf), its squared distance, and the squared distance of the second
// nearest (+Inf when there is one vector).
func (ps *panels) nearest(x []float32) (int32, float32, float32) {
	x = x[:ps.dim]
	var best [8]int32
	var first, second [8]float32
	if !l2NearestAsm(x, ps.data, ps.blocks(), &best, &first, &second) {
		l2NearestGo(x, ps.data, ps.blocks(), &best, &first, &second)
	}
	return reduceLanes(&best, &first, &second)
}

// reduceLanes returns the lowest index at the smallest distance of first
// (best holding each lane's index), that distance, and the second smallest
// of first and second together.
func reduceLanes(best *[8]int32, first, second *[8]float32) (int32, float32, float32) {
	b, d1, d2 := best[0], first[0], second[0]
	for l := 1; l < 8; l++ {
		switch v := first[l]; {
		case v < d1:
			b, d1, d2 = best[l], v, d1
		case v == d1:
			b, d2 = min(b, best[l]), v
		default:
			d2 = min(d2, v)
		}
		d2 = min(d2, second[l])
	}
	return b, d1, d2
}

// panelBlocks returns how many of the remaining blocks of 8 vectors the
// next panel takes: 8 while 8 or more remain, then 4, 2 and 1.
func panelBlocks(blocks int) int {
	switch {
	case blocks >= 8:
		return 8
	case blocks >= 4:
		return 4
	case blocks >= 2:
		return 2
	}
	return 1
}

// l2NearestGo is simd.L2Nearest in Go, with the whole answer in lane 0: it
// sets best[0] to the vector of the panels p (blocks blocks) nearest to x
// in squared euclidean distance, the lowest on ties (0 when every distance
// is +Inf), first[0] to its distance and second[0] to the second smallest,
// each distance summed in dimension order, and the other lanes to +Inf.
func l2NearestGo(x, p []float32, blocks int, best *[8]int32, first, second *[8]float32) {
	dim := len(x)
	b1, d1, d2 := int32(0), inf, inf
	for v := 0; blocks > 0; {
		w := 8 * panelBlocks(blocks)
		panel := p[:w*dim]
		// Four vectors at a time keep the sums in registers.
		for j := 0; j < w; j += 4 {
			var a0, a1, a2, a3 float32
			for d, xd := range x {
				c := panel[d*w+j : d*w+j+4]
				t0, t1, t2, t3 := xd-c[0], xd-c[1], xd-c[2], xd-c[3]
				a0 += t0 * t0
				a1 += t1 * t1
				a2 += t2 * t2
				a3 += t3 * t3
			}
			if min(a0, a1, a2, a3) >= d2 {
				continue
			}
			for i, d := range [4]float32{a0, a1, a2, a3} {
				if d < d1 {
					b1, d1, d2 = int32(v+j+i), d, d1
				} else if d < d2 {
					d2 = d
				}
			}
		}
		p, v, blocks = p[w*dim:], v+w, blocks-w/8
	}
	*best = [8]int32{b1}
	*first = [8]float32{d1, inf, inf, inf, inf, inf, inf, inf}
	*second = [8]float32{d2, inf, inf, inf, inf, inf, inf, inf}
}
