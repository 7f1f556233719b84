package vecindex

import "math"

// scalarQuantizer codes each value of a vector in 8 bits over the value
// range seen for its dimension in training: value ≈ lo + step·code.
type scalarQuantizer struct {
	lo, step []float32
}

// trainSQ returns the quantizer covering the rows of data (dim values
// each); rows(i, dst) must write row i into dst.
func trainSQ(n, dim int, rows func(i int, dst []float32)) *scalarQuantizer {
	lo := make([]float32, dim)
	hi := make([]float32, dim)
	row := make([]float32, dim)
	for i := range n {
		rows(i, row)
		for d, x := range row {
			if i == 0 || x < lo[d] {
				lo[d] = x
			}
			if i == 0 || x > hi[d] {
				hi[d] = x
			}
		}
	}
	step := make([]float32, dim)
	for d := range step {
		step[d] = (hi[d] - lo[d]) / 255
	}
	return &scalarQuantizer{lo: lo, step: step}
}

// encode writes the code of x into dst (one byte per value).
func (sq *scalarQuantizer) encode(x []float32, dst []byte) {
	for d, v := range x {
		if sq.step[d] == 0 {
			dst[d] = 0
			continue
		}
		c := math.Round(float64((v - sq.lo[d]) / sq.step[d]))
		dst[d] = byte(min(max(c, 0), 255))
	}
}

// decode writes the vector code stands for into dst.
func (sq *scalarQuantizer) decode(code []byte, dst []float32) {
	for d, c := range code {
		dst[d] = sq.lo[d] + sq.step[d]*float32(c)
	}
}

// weightBits is the magnitude, in bits, of the largest integer query
// weight: sums of up to 2^23 weighted codes then fit in an int64.
const weightBits = 32

// fillWeights sets the integer weights w and returns c0 and unit so that
// c0 + unit·sqDot(w, code) is scale times the dot product of q with the
// vector code stands for. Integer weights make the scan faster than float
// arithmetic and round each weight to a relative 2^-32 of the largest.
func (sq *scalarQuantizer) fillWeights(q []float32, scale float32, w []int64) (c0, unit float32) {
	big := 0.0
	for d, x := range q {
		big = max(big, math.Abs(float64(scale*x*sq.step[d])))
	}
	if big == 0 {
		clear(w)
		return scale * dot(q, sq.lo), 0
	}
	s := math.Ldexp(1, weightBits) / big
	for d, x := range q {
		w[d] = int64(math.Round(float64(scale*x*sq.step[d]) * s))
	}
	return scale * dot(q, sq.lo), float32(1 / s)
}

// sqDot returns Σ w[d]·code[d] over len(code) values.
func sqDot(w []int64, code []byte) int64 {
	w = w[:len(code)]
	var s0, s1, s2, s3 int64
	i := 0
	for ; i+4 <= len(code); i += 4 {
		c, v := code[i:i+4:i+4], w[i:i+4:i+4]
		s0 += v[0] * int64(c[0])
		s1 += v[1] * int64(c[1])
		s2 += v[2] * int64(c[2])
		s3 += v[3] * int64(c[3])
	}
	for ; i < len(code); i++ {
		s0 += w[i] * int64(code[i])
	}
	return (s0 + s1) + (s2 + s3)
}
