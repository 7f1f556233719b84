package vecindex

import "context"

// productQuantizer splits vectors into m sub-vectors of subDim values and
// codes each as the nearest of 2^bits codewords trained for its position.
// Codes take a byte each at 8 bits; at 4 bits two share a byte, the even
// sub-vector in the low nibble.
type productQuantizer struct {
	m, bits, subDim int
	// codebook holds m × 2^bits codewords of subDim values.
	codebook []float32
	// panels holds each sub-vector's codewords laid out for encode; set by
	// trainPQ.
	panels []*panels
}

func (pq *productQuantizer) codewords() int { return 1 << pq.bits }

// codeLen returns the bytes per encoded vector.
func (pq *productQuantizer) codeLen() int {
	if pq.bits == 8 {
		return pq.m
	}
	return (pq.m + 1) / 2
}

// book returns the codewords of sub-vector s.
func (pq *productQuantizer) book(s int) []float32 {
	size := pq.codewords() * pq.subDim
	return pq.codebook[s*size : (s+1)*size]
}

// trainPQ trains the codewords of each of m sub-vector positions with
// k-means over the rows of data (dim values each), in parallel across
// positions, seeding position s's k-means from (seed, streamPQ+s). It
// returns ctx.Err() when ctx is cancelled.
func trainPQ(ctx context.Context, data []float32, dim, m, bits, maxIter int, seed int64, nw int) (*productQuantizer, error) {
	pq := &productQuantizer{m: m, bits: bits, subDim: dim / m}
	n, sub, k := len(data)/dim, pq.subDim, pq.codewords()
	pq.codebook = make([]float32, m*k*sub)
	inner := 1
	if m < nw {
		inner = nw
	}
	err := parallelFor(ctx, nw, m, 1, func(_, lo, hi int) {
		for s := lo; s < hi; s++ {
			cols := make([]float32, n*sub)
			for i := range n {
				copy(cols[i*sub:(i+1)*sub], data[i*dim+s*sub:])
			}
			c, err := trainKMeans(ctx, cols, sub, k, maxIter, false, newRand(seed, streamPQ+uint64(s)), inner)
			if err != nil {
				return
			}
			copy(pq.book(s), c)
		}
	})
	if err != nil {
		return nil, err
	}
	pq.panels = make([]*panels, m)
	for s := range m {
		pq.panels[s] = newPanels(pq.book(s), sub)
	}
	return pq, nil
}

// encode writes the code of x (dim values) into dst (codeLen bytes): the
// nearest codeword of each sub-vector, the lowest on ties. It needs the
// panels of a quantizer trainPQ returned.
func (pq *productQuantizer) encode(x []float32, dst []byte) {
	clear(dst)
	for s, ps := range pq.panels {
		c, _, _ := ps.nearest(x[s*pq.subDim : (s+1)*pq.subDim])
		if pq.bits == 8 {
			dst[s] = byte(c)
		} else {
			dst[s/2] |= byte(c) << (4 * (s % 2))
		}
	}
}

// decode writes the vector code stands for into dst (dim values).
func (pq *productQuantizer) decode(code []byte, dst []float32) {
	for s := range pq.m {
		var c int
		if pq.bits == 8 {
			c = int(code[s])
		} else {
			c = int(code[s/2]>>(4*(s%2))) & 15
		}
		copy(dst[s*pq.subDim:(s+1)*pq.subDim], pq.book(s)[c*pq.subDim:])
	}
}

// fillTable sets tab (codeLen rows) so that adc(tab, code) is scale times
// the dot product of q with the vector code stands for. At 4 bits each row
// covers the two codes of a byte; tmp is scratch of m×16 values.
func (pq *productQuantizer) fillTable(q []float32, scale float32, tab [][256]float32, tmp []float32) {
	sub := pq.subDim
	if pq.bits == 8 {
		for s := range pq.m {
			codewordDots(q[s*sub:(s+1)*sub], pq.book(s), scale, tab[s][:])
		}
		return
	}
	for s := range pq.m {
		codewordDots(q[s*sub:(s+1)*sub], pq.book(s), scale, tmp[s*16:(s+1)*16])
	}
	var zero [16]float32
	for j := range tab {
		lo, hi := tmp[2*j*16:(2*j+1)*16], zero[:]
		if 2*j+1 < pq.m {
			hi = tmp[(2*j+1)*16 : (2*j+2)*16]
		}
		for b := range 256 {
			tab[j][b] = lo[b&15] + hi[b>>4]
		}
	}
}

// codewordDots sets out[c] to scale × (x · codeword c) for the len(out)
// codewords of len(x) values in book.
func codewordDots(x, book []float32, scale float32, out []float32) {
	dim := len(x)
	c := 0
	for ; c+4 <= len(out); c += 4 {
		b := book[c*dim:]
		d0, d1, d2, d3 := dot4(x, b, b[dim:], b[2*dim:], b[3*dim:])
		out[c], out[c+1], out[c+2], out[c+3] = scale*d0, scale*d1, scale*d2, scale*d3
	}
	for ; c < len(out); c++ {
		out[c] = scale * dot(x, book[c*dim:])
	}
}

// adc sums the table entries code selects: one row of tab per code byte.
func adc(tab [][256]float32, code []byte) float32 {
	tab = tab[:len(code)]
	var s0, s1 float32
	for len(code) >= 2 && len(tab) >= 2 {
		s0 += tab[0][code[0]]
		s1 += tab[1][code[1]]
		code, tab = code[2:], tab[2:]
	}
	if len(code) > 0 && len(tab) > 0 {
		s0 += tab[0][code[0]]
	}
	return s0 + s1
}
