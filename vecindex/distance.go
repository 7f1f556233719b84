package vecindex

import (
	"math"
	"math/bits"
)

// Distance returns the exact distance of a and b under m, as Lance reports
// it in `_distance`. For Hamming each element is taken as a uint8 (its
// integer part, low 8 bits). It returns NaN when the lengths differ or m is
// not a known metric.
func Distance(m Metric, a, b []float32) float32 {
	if len(a) != len(b) {
		return float32(math.NaN())
	}
	switch m {
	case L2:
		return l2sq(a, b)
	case Cosine:
		return cosineFromDot(dot(a, b), dot(a, a), dot(b, b))
	case Dot:
		return -dot(a, b)
	case Hamming:
		n := 0
		for i := range a {
			n += bits.OnesCount8(toByte(a[i]) ^ toByte(b[i]))
		}
		return float32(n)
	}
	return float32(math.NaN())
}
