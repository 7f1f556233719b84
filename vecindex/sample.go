package vecindex

import (
	"math/rand/v2"
	"slices"
)

// Random streams, so that each training step draws independent numbers
// from the build seed.
const (
	streamIVF uint64 = iota + 1
	streamPQSample
	streamAnchors
	streamPQ             // + sub-vector number
	streamHNSW = 1 << 32 // + partition number
)

// newRand returns a generator determined by seed and stream.
func newRand(seed int64, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), stream))
}

// sampleRows returns m distinct row numbers below n, ascending, chosen by
// rng; all n rows when m >= n.
func sampleRows(rng *rand.Rand, n, m int) []int {
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	if m >= n {
		return all
	}
	for i := range m {
		j := i + rng.IntN(n-i)
		all[i], all[j] = all[j], all[i]
	}
	out := all[:m]
	slices.Sort(out)
	return out
}

// gatherRows returns the listed rows of the row-major matrix data, of dim
// values each, as a new matrix.
func gatherRows(data []float32, dim int, rows []int) []float32 {
	out := make([]float32, 0, len(rows)*dim)
	for _, r := range rows {
		out = append(out, data[r*dim:(r+1)*dim]...)
	}
	return out
}
