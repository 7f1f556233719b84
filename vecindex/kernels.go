package vecindex

import (
	"encoding/binary"
	"math"
	"math/bits"
)

// inf is +Inf as a float32.
var inf = float32(math.Inf(1))

// dot returns a·b over the first len(a) values; b must be at least as long.
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	for len(a) >= 4 && len(b) >= 4 {
		s0 += a[0] * b[0]
		s1 += a[1] * b[1]
		s2 += a[2] * b[2]
		s3 += a[3] * b[3]
		a, b = a[4:], b[4:]
	}
	for i := range a {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// dot4 returns x·a, x·b, x·c and x·d over len(x) values.
func dot4(x, a, b, c, d []float32) (s0, s1, s2, s3 float32) {
	a, b, c, d = a[:len(x)], b[:len(x)], c[:len(x)], d[:len(x)]
	for i, v := range x {
		s0 += v * a[i]
		s1 += v * b[i]
		s2 += v * c[i]
		s3 += v * d[i]
	}
	return s0, s1, s2, s3
}

// l2sq returns the squared euclidean distance of a and b over len(a) values.
func l2sq(a, b []float32) float32 {
	return l2Bounded(a, b, inf)
}

// l2Bounded returns the squared euclidean distance of a and b over len(a)
// values, or some partial sum greater than limit as soon as the distance is
// known to exceed limit. The full sum is computed in the same order whatever
// the limit, so results that do not exceed it are bit-identical to l2sq's.
// It runs the assembly kernel where there is one (simd.L2Bounded, which
// computes the same sums in the same order), l2BoundedGo otherwise. It
// panics when b is shorter than a.
func l2Bounded(a, b []float32, limit float32) float32 {
	b = b[:len(a)]
	if d, ok := l2BoundedAsm(a, b, limit); ok {
		return d
	}
	return l2BoundedGo(a, b, limit)
}

// l2BoundedGo is l2Bounded in Go: four sums, s_k over the values k, k+4,
// ..., compared with limit after each 16 values, the last len(a)%4 values
// added to s0, and the result (s0+s1)+(s2+s3). b holds at least len(a)
// values.
func l2BoundedGo(a, b []float32, limit float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	for len(a) >= 16 && len(b) >= 16 {
		for j := 0; j < 16; j += 4 {
			d0, d1, d2, d3 := a[j]-b[j], a[j+1]-b[j+1], a[j+2]-b[j+2], a[j+3]-b[j+3]
			s0 += d0 * d0
			s1 += d1 * d1
			s2 += d2 * d2
			s3 += d3 * d3
		}
		if (s0+s1)+(s2+s3) > limit {
			return (s0 + s1) + (s2 + s3)
		}
		a, b = a[16:], b[16:]
	}
	for len(a) >= 4 && len(b) >= 4 {
		d0, d1, d2, d3 := a[0]-b[0], a[1]-b[1], a[2]-b[2], a[3]-b[3]
		s0 += d0 * d0
		s1 += d1 * d1
		s2 += d2 * d2
		s3 += d3 * d3
		a, b = a[4:], b[4:]
	}
	for i := range a {
		d := a[i] - b[i]
		s0 += d * d
	}
	return (s0 + s1) + (s2 + s3)
}

// cosineFromDot returns the cosine distance of two vectors given their dot
// product and squared norms, clamped to [0, 2]. A zero vector is at
// distance 1 from everything.
func cosineFromDot(d, na, nb float32) float32 {
	if na == 0 || nb == 0 {
		return 1
	}
	r := 1 - d/float32(math.Sqrt(float64(na)*float64(nb)))
	return min(max(r, 0), 2)
}

// normalizeInto writes v scaled to unit length into dst (len(v) values) and
// returns dst; a zero vector is copied unchanged.
func normalizeInto(dst, v []float32) []float32 {
	dst = dst[:len(v)]
	n := dot(v, v)
	if n == 0 {
		copy(dst, v)
		return dst
	}
	inv := float32(1 / math.Sqrt(float64(n)))
	for i, x := range v {
		dst[i] = x * inv
	}
	return dst
}

// hamming returns the number of differing bits of a and b over len(a)
// bytes; b must be at least as long.
func hamming(a, b []byte) int {
	b = b[:len(a)]
	n := 0
	for len(a) >= 8 && len(b) >= 8 {
		n += bits.OnesCount64(binary.LittleEndian.Uint64(a) ^ binary.LittleEndian.Uint64(b))
		a, b = a[8:], b[8:]
	}
	for i := range a {
		n += bits.OnesCount8(a[i] ^ b[i])
	}
	return n
}

// toByte returns x as a uint8 element of a hamming vector: its integer part,
// keeping the low 8 bits.
func toByte(x float32) byte {
	return byte(int64(x))
}

// bytesOf converts a float vector of uint8 values into dst and returns it.
func bytesOf(dst []byte, v []float32) []byte {
	dst = dst[:0]
	for _, x := range v {
		dst = append(dst, toByte(x))
	}
	return dst
}
