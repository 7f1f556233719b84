package vecindex

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// nearestFuncs are the ways to find the nearest vector of panels: through
// the dispatch (the assembly kernel where the CPU runs it) and in Go.
var nearestFuncs = map[string]func(ps *panels, x []float32) (int32, float32, float32){
	"dispatched": (*panels).nearest,
	"go": func(ps *panels, x []float32) (int32, float32, float32) {
		var best [8]int32
		var first, second [8]float32
		l2NearestGo(x, ps.data, ps.blocks(), &best, &first, &second)
		return reduceLanes(&best, &first, &second)
	},
}

// TestPanelsNearest checks both kernels against float64 distances over the
// vectors in their row layout, for dimensions and counts that exercise
// every panel width and the padding.
func TestPanelsNearest(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, dim := range []int{1, 3, 8, 16, 17, 128, 130} {
		for _, k := range []int{1, 2, 7, 8, 9, 24, 63, 64, 65, 120, 250, 256} {
			t.Run(fmt.Sprintf("dim%d/k%d", dim, k), func(t *testing.T) {
				vecs := make([]float32, k*dim)
				for i := range vecs {
					vecs[i] = float32(rng.NormFloat64() * 3)
				}
				ps := newPanels(vecs, dim)
				for range 5 {
					x := make([]float32, dim)
					for i := range x {
						x[i] = float32(rng.NormFloat64() * 3)
					}
					want := make([]float64, k)
					for i := range k {
						for d := range dim {
							e := float64(x[d]) - float64(vecs[i*dim+d])
							want[i] += e * e
						}
					}
					sorted := slices.Sorted(slices.Values(want))
					second := math.Inf(1)
					if k > 1 {
						second = sorted[1]
					}
					close := func(got float32, want float64) bool {
						return math.Abs(float64(got)-want) <= 1e-5*want+1e-6
					}
					for name, nearest := range nearestFuncs {
						best, d1, d2 := nearest(ps, x)
						if best < 0 || int(best) >= k || !close(d1, sorted[0]) || !close(float32(want[best]), sorted[0]) ||
							(k > 1 && !close(d2, second)) || (k == 1 && !math.IsInf(float64(d2), 1)) {
							t.Errorf("%s: nearest = %d, %v, %v; want a vector at %v, second %v", name, best, d1, d2, sorted[0], second)
						}
					}
				}
			})
		}
	}
}

// TestPanelsNearestTies checks that the lowest index wins among vectors at
// the same distance, wherever their lanes and panels, and that the second
// distance then equals the first.
func TestPanelsNearestTies(t *testing.T) {
	const dim, k = 4, 80
	for _, tc := range []struct{ a, b int }{{3, 11}, {5, 70}, {9, 10}, {0, 64}, {66, 79}, {64, 72}} {
		vecs := make([]float32, k*dim)
		for i := range k {
			for d := range dim {
				vecs[i*dim+d] = float32(10 + i + d)
			}
		}
		x := []float32{-1, -2, -3, -4}
		copy(vecs[tc.a*dim:], x)
		copy(vecs[tc.b*dim:], x)
		ps := newPanels(vecs, dim)
		for name, nearest := range nearestFuncs {
			if best, d1, d2 := nearest(ps, x); best != int32(tc.a) || d1 != 0 || d2 != 0 {
				t.Errorf("%s: copies at %d and %d: nearest = %d, %v, %v; want %d, 0, 0", name, tc.a, tc.b, best, d1, d2, tc.a)
			}
		}
	}
}

// TestPanelsReuse checks that setting panels again over fewer vectors
// leaves none of the earlier vectors in reach.
func TestPanelsReuse(t *testing.T) {
	ps := newPanels(slices.Repeat([]float32{1, 1}, 20), 2)
	ps.set([]float32{5, 0, 0, 5}, 2)
	for name, nearest := range nearestFuncs {
		if best, d1, d2 := nearest(ps, []float32{1, 1}); best != 0 || d1 != 17 || d2 != 17 {
			t.Errorf("%s: nearest = %d, %v, %v; want 0, 17, 17", name, best, d1, d2)
		}
	}
}
