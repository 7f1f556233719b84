package vecindex

import (
	"math/bits"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// naiveSearch is the reference top-k: every distance, sorted.
func naiveSearch(n int, id func(i int) int64, dist func(i int) float32, k int, allow func(int64) bool) []Candidate {
	var all []Candidate
	for i := range n {
		if allow == nil || allow(id(i)) {
			all = append(all, Candidate{ID: id(i), Distance: dist(i)})
		}
	}
	slices.SortFunc(all, compareCandidates)
	return all[:min(k, len(all))]
}

func randomVectors(seed uint64, n, dim int, integers bool) *Vectors {
	rng := rand.New(rand.NewPCG(seed, 9))
	vs := &Vectors{Dim: dim, Data: make([]float32, n*dim), IDs: make([]int64, n)}
	for i := range vs.Data {
		if integers {
			vs.Data[i] = float32(rng.IntN(256))
		} else {
			vs.Data[i] = float32(rng.NormFloat64())
		}
	}
	for i := range vs.IDs {
		vs.IDs[i] = int64(n - i) // descending, so id order differs from row order
	}
	return vs
}

func TestExactSearchMatchesNaive(t *testing.T) {
	thirds := func(id int64) bool { return id%3 == 0 }
	for _, tc := range []struct {
		name   string
		m      Metric
		n, dim int
	}{
		{"l2", L2, 2000, 37},
		{"cosine", Cosine, 2000, 24},
		{"dot", Dot, 2000, 16},
		{"hamming", Hamming, 2000, 8},
		{"l2 parallel", L2, 40000, 64},
	} {
		vs := randomVectors(1, tc.n, tc.dim, tc.m == Hamming)
		qs := randomVectors(2, 3, tc.dim, tc.m == Hamming)
		for qi := range 3 {
			q := qs.Data[qi*tc.dim : (qi+1)*tc.dim]
			for _, k := range []int{1, 10, tc.n + 5} {
				for _, allow := range []func(int64) bool{nil, thirds} {
					got := ExactSearch(tc.m, vs, q, k, allow)
					want := naiveSearch(tc.n, func(i int) int64 { return vs.IDs[i] },
						func(i int) float32 { return Distance(tc.m, q, vs.Data[i*tc.dim:(i+1)*tc.dim]) }, k, allow)
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("%s k=%d filtered=%v: got %v…, want %v…", tc.name, k, allow != nil, got[:min(3, len(got))], want[:min(3, len(want))])
					}
				}
			}
		}
	}
}

func TestExactSearchBytesMatchesNaive(t *testing.T) {
	vs := randomBytes(3, 3000, 12)
	q := randomBytes(4, 1, 12).Data
	for _, k := range []int{1, 25, 4000} {
		got := ExactSearchBytes(vs, q, k, nil)
		want := naiveSearch(3000, func(i int) int64 { return vs.IDs[i] },
			func(i int) float32 { return naiveHamming(q, vs.Data[i*12:(i+1)*12]) }, k, nil)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("k=%d: results differ from the reference", k)
		}
	}
}

func TestExactSearchDegenerate(t *testing.T) {
	vs := randomVectors(1, 10, 4, false)
	for _, tc := range []struct {
		name string
		q    []float32
		k    int
	}{
		{"k zero", make([]float32, 4), 0},
		{"wrong dimension", make([]float32, 3), 5},
	} {
		if got := ExactSearch(L2, vs, tc.q, tc.k, nil); got != nil {
			t.Errorf("%s: got %v, want nil", tc.name, got)
		}
	}
	if got := ExactSearch(L2, &Vectors{Dim: 4}, make([]float32, 4), 3, nil); got != nil {
		t.Errorf("empty vectors: got %v, want nil", got)
	}
}

// naiveHamming counts the differing bits of a and b byte by byte.
func naiveHamming(a, b []byte) float32 {
	n := 0
	for i := range a {
		n += bits.OnesCount8(a[i] ^ b[i])
	}
	return float32(n)
}
