package vecindex

import (
	"context"
	"math/rand/v2"
)

// trainBinaryKMeans clusters the rows of data (dim bytes each) into k
// centroids under hamming distance: each iteration assigns every row to its
// nearest centroid and sets each centroid bit to the majority bit of its
// rows. It starts from k distinct rows drawn by rng and runs at most maxIter
// iterations, stopping early once no assignment changes. Clusters left
// empty take the row farthest from its centroid; fewer rows than k are used
// as they are, repeated. It returns the k×dim centroids, or ctx.Err() when
// ctx is cancelled.
func trainBinaryKMeans(ctx context.Context, data []byte, dim, k, maxIter int, rng *rand.Rand, nw int) ([]byte, error) {
	n := len(data) / dim
	cent := make([]byte, k*dim)
	if n <= k {
		for c := range k {
			copy(cent[c*dim:(c+1)*dim], data[(c%n)*dim:])
		}
		return cent, ctx.Err()
	}
	for c, r := range sampleRows(rng, n, k) {
		copy(cent[c*dim:(c+1)*dim], data[r*dim:])
	}
	assign := make([]int32, n)
	for i := range assign {
		assign[i] = -1
	}
	dists := make([]int32, n)
	ones := make([]int32, k*dim*8)
	counts := make([]int32, k)
	for range maxIter {
		changed, err := assignNearestBytes(ctx, data, dim, cent, assign, dists, nw)
		if err != nil {
			return nil, err
		}
		if changed == 0 {
			break
		}
		clear(ones)
		clear(counts)
		for i, c := range assign {
			counts[c]++
			o := ones[int(c)*dim*8 : int(c+1)*dim*8]
			for j, b := range data[i*dim : (i+1)*dim] {
				for bit := range 8 {
					o[j*8+bit] += int32(b>>bit) & 1
				}
			}
		}
		for c, cnt := range counts {
			if cnt == 0 {
				continue
			}
			o := ones[c*dim*8 : (c+1)*dim*8]
			for j := range dim {
				var b byte
				for bit := range 8 {
					if 2*o[j*8+bit] > cnt {
						b |= 1 << bit
					}
				}
				cent[c*dim+j] = b
			}
		}
		for c, cnt := range counts {
			if cnt != 0 {
				continue
			}
			far := -1
			for i, d := range dists {
				if counts[assign[i]] > 1 && (far < 0 || d > dists[far]) {
					far = i
				}
			}
			if far < 0 {
				break
			}
			copy(cent[c*dim:(c+1)*dim], data[far*dim:])
			counts[assign[far]]--
			counts[c] = 1
			assign[far] = int32(c)
			dists[far] = 0
		}
	}
	return cent, nil
}

// assignNearestBytes sets assign[i] to the centroid nearest to row i of
// data in hamming distance (lowest index on ties) and dists[i] to that
// distance, in parallel. It returns how many assignments changed, or
// ctx.Err().
func assignNearestBytes(ctx context.Context, data []byte, dim int, cent []byte, assign, dists []int32, nw int) (int, error) {
	changed := make([]int, max(nw, 1))
	err := parallelFor(ctx, nw, len(assign), 256, func(w, lo, hi int) {
		for i := lo; i < hi; i++ {
			c, d := nearestByteCentroid(data[i*dim:(i+1)*dim], cent)
			if assign[i] != c {
				assign[i] = c
				changed[w]++
			}
			dists[i] = d
		}
	})
	total := 0
	for _, c := range changed {
		total += c
	}
	return total, err
}

// nearestByteCentroid returns the index of the centroid (len(x)-byte rows
// of cent) nearest to x in hamming distance, lowest on ties, and the
// distance.
func nearestByteCentroid(x, cent []byte) (int32, int32) {
	dim := len(x)
	best, bestD := int32(0), int32(dim*8+1)
	for c := 0; c+dim <= len(cent); c += dim {
		if d := int32(hamming(x, cent[c:c+dim])); d < bestD {
			best, bestD = int32(c/dim), d
		}
	}
	return best, bestD
}
