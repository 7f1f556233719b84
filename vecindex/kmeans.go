package vecindex

import (
	"context"
	"math"
	"math/rand/v2"

	"github.com/lancens/lancens/internal/progress"
)

// settled stops k-means once at most 1/settled of the rows change cluster
// in an iteration: past that point further iterations barely move the
// centroids (nor the recall of the indexes built on them).
const settled = 100

// trainKMeans clusters the rows of data (dim values each) into k centroids
// with Lloyd's algorithm under euclidean distance, starting from k distinct
// rows drawn by rng and running at most maxIter updates, or until the clusters
// settle. Hamerly's bounds let most rows skip the search for their
// nearest centroid once clusters settle. With spherical the centroids are
// kept at unit length. Clusters left empty take the row farthest from its
// centroid. Fewer rows than k are used as they are, repeated. It returns
// the k×dim centroids, or ctx.Err() when ctx is cancelled.
func trainKMeans(ctx context.Context, data []float32, dim, k, maxIter int, spherical bool, rng *rand.Rand, nw int) ([]float32, error) {
	n := len(data) / dim
	cent := make([]float32, k*dim)
	if n <= k {
		for c := range k {
			copy(cent[c*dim:(c+1)*dim], data[(c%n)*dim:])
		}
		finishCentroids(cent, dim, spherical)
		return cent, ctx.Err()
	}
	for c, r := range sampleRows(rng, n, k) {
		copy(cent[c*dim:(c+1)*dim], data[r*dim:])
	}
	finishCentroids(cent, dim, spherical)
	km := &kmeans{data: data, dim: dim, k: k, cent: cent, panels: newPanels(cent, dim),
		assign: make([]int32, n), upper: make([]float32, n), lower: make([]float32, n),
		half: make([]float32, k), shift: make([]float32, k), old: make([]float32, k*dim),
		sums: make([]float64, k*dim), counts: make([]int, k)}
	for i := range km.assign {
		km.assign[i] = -1
		km.upper[i] = inf
	}
	for range maxIter {
		changed, err := km.assignRows(ctx, nw)
		if err != nil {
			return nil, err
		}
		if changed <= n/settled {
			break
		}
		km.update(spherical)
	}
	return cent, nil
}

// kmeans is the state of one k-means training. For each row i, upper[i]
// bounds from above its distance to its centroid assign[i] and lower[i]
// from below its distance to every other centroid (true distances, not
// squared).
type kmeans struct {
	data         []float32
	dim, k       int
	cent         []float32
	panels       *panels // cent laid out for finding the nearest
	assign       []int32
	upper, lower []float32
	half         []float32 // half the distance from each centroid to the nearest other
	shift        []float32 // how far each centroid moved in the last update
	old          []float32
	sums         []float64
	counts       []int
}

// assignRows moves every row to its nearest centroid, in parallel, skipping
// the rows whose bounds prove it unchanged. It returns how many rows
// changed cluster, or ctx.Err().
func (km *kmeans) assignRows(ctx context.Context, nw int) (int, error) {
	dim := km.dim
	km.halfGaps()
	changed := make([]int, max(nw, 1))
	err := parallelFor(ctx, nw, len(km.assign), 256, func(w, lo, hi int) {
		for i := lo; i < hi; i++ {
			a := km.assign[i]
			bound := km.lower[i]
			if a >= 0 {
				bound = max(bound, km.half[a])
			}
			if km.upper[i] <= bound {
				continue
			}
			x := km.data[i*dim : (i+1)*dim]
			if a >= 0 {
				km.upper[i] = sqrt32(l2sq(x, km.cent[int(a)*dim:int(a+1)*dim]))
				if km.upper[i] <= bound {
					continue
				}
			}
			best, d1, d2 := km.panels.nearest(x)
			km.upper[i], km.lower[i] = sqrt32(d1), sqrt32(d2)
			if best != a {
				km.assign[i] = best
				changed[w]++
			}
		}
	})
	total := 0
	for _, c := range changed {
		total += c
	}
	return total, err
}

// halfGaps sets km.half from the current centroids.
func (km *kmeans) halfGaps() {
	dim := km.dim
	for c := range km.half {
		km.half[c] = inf
	}
	for a := range km.k {
		ca := km.cent[a*dim : (a+1)*dim]
		for b := a + 1; b < km.k; b++ {
			d := l2sq(ca, km.cent[b*dim:(b+1)*dim])
			km.half[a], km.half[b] = min(km.half[a], d), min(km.half[b], d)
		}
	}
	for c, d := range km.half {
		km.half[c] = sqrt32(d) / 2
	}
}

// update moves every centroid to the mean of its rows, refills empty
// clusters, and loosens the bounds by how far the centroids moved.
func (km *kmeans) update(spherical bool) {
	dim := km.dim
	copy(km.old, km.cent)
	clear(km.sums)
	clear(km.counts)
	for i, c := range km.assign {
		km.counts[c]++
		s := km.sums[int(c)*dim : int(c+1)*dim]
		for j, x := range km.data[i*dim : (i+1)*dim] {
			s[j] += float64(x)
		}
	}
	for c, cnt := range km.counts {
		if cnt == 0 {
			continue
		}
		inv := 1 / float64(cnt)
		for j, s := range km.sums[c*dim : (c+1)*dim] {
			km.cent[c*dim+j] = float32(s * inv)
		}
	}
	km.refillEmpty()
	finishCentroids(km.cent, dim, spherical)
	km.panels.set(km.cent, dim)
	far, farC, next := float32(0), -1, float32(0)
	for c := range km.k {
		s := sqrt32(l2sq(km.old[c*dim:(c+1)*dim], km.cent[c*dim:(c+1)*dim]))
		km.shift[c] = s
		if s > far {
			far, farC, next = s, c, far
		} else if s > next {
			next = s
		}
	}
	for i, a := range km.assign {
		km.upper[i] += km.shift[a]
		if int(a) == farC {
			km.lower[i] -= next
		} else {
			km.lower[i] -= far
		}
	}
}

// refillEmpty gives each empty cluster the row farthest (by its upper
// bound) from its centroid, taken from a cluster of two or more rows.
func (km *kmeans) refillEmpty() {
	dim := km.dim
	for c, cnt := range km.counts {
		if cnt != 0 {
			continue
		}
		far := -1
		for i, u := range km.upper {
			if km.counts[km.assign[i]] > 1 && (far < 0 || u > km.upper[far]) {
				far = i
			}
		}
		if far < 0 {
			return
		}
		copy(km.cent[c*dim:(c+1)*dim], km.data[far*dim:])
		km.counts[km.assign[far]]--
		km.counts[c] = 1
		km.assign[far] = int32(c)
		km.upper[far], km.lower[far] = inf, 0
	}
}

// finishCentroids scales every centroid to unit length when spherical.
func finishCentroids(cent []float32, dim int, spherical bool) {
	if !spherical {
		return
	}
	for c := 0; c < len(cent); c += dim {
		normalizeInto(cent[c:c+dim], cent[c:c+dim])
	}
}

// assignAll sets assign[i] to the centroid nearest to row i of data in
// euclidean distance (lowest index on ties), in parallel, counting the rows
// done in done (may be nil). It returns ctx.Err() when ctx is cancelled.
func assignAll(ctx context.Context, data []float32, dim int, cent []float32, assign []int32, nw int, done *progress.Counter) error {
	ps := newPanels(cent, dim)
	return parallelFor(ctx, nw, len(assign), 256, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			assign[i], _, _ = ps.nearest(data[i*dim : (i+1)*dim])
		}
		done.Add(int64(hi - lo))
	})
}

func sqrt32(x float32) float32 { return float32(math.Sqrt(float64(max(x, 0)))) }
