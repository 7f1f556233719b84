package vecindex

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestParseMetric(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Metric
		ok   bool
	}{
		{"l2", L2, true},
		{"L2", L2, true},
		{"euclidean", L2, true},
		{"Cosine", Cosine, true},
		{"DOT", Dot, true},
		{"inner_product", Dot, true},
		{" hamming ", Hamming, true},
		{"", 0, false},
		{"manhattan", 0, false},
	} {
		got, err := ParseMetric(tc.in)
		if (err == nil) != tc.ok || (tc.ok && got != tc.want) {
			t.Errorf("ParseMetric(%q) = %v, %v; want %v, ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
		if tc.ok {
			if back, _ := ParseMetric(got.String()); back != got {
				t.Errorf("ParseMetric(%q.String()) = %v", got, back)
			}
		}
	}
}

func TestParseKind(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Kind
		ok   bool
	}{
		{"IVF_FLAT", IVFFlat, true},
		{"ivf_pq", IVFPQ, true},
		{"Ivf_Sq", IVFSQ, true},
		{"IVF_HNSW_SQ", IVFHNSWSQ, true},
		{"ivf_hnsw_pq", IVFHNSWPQ, true},
		{"IVF_HNSW_FLAT", 0, false},
		{"", 0, false},
	} {
		got, err := ParseKind(tc.in)
		if (err == nil) != tc.ok || (tc.ok && got != tc.want) {
			t.Errorf("ParseKind(%q) = %v, %v; want %v, ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestDistance(t *testing.T) {
	nan := float32(math.NaN())
	for _, tc := range []struct {
		name string
		m    Metric
		a, b []float32
		want float32
	}{
		{"l2", L2, []float32{1, 2, 3}, []float32{4, 6, 3}, 25},
		{"l2 long", L2, []float32{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, make([]float32, 18), 18},
		{"cosine orthogonal", Cosine, []float32{1, 0}, []float32{0, 1}, 1},
		{"cosine parallel", Cosine, []float32{1, 1}, []float32{2, 2}, 0},
		{"cosine opposite", Cosine, []float32{1, 0}, []float32{-3, 0}, 2},
		{"cosine zero vector", Cosine, []float32{0, 0}, []float32{1, 2}, 1},
		{"dot", Dot, []float32{1, 2, 3}, []float32{4, 5, 6}, -32},
		{"hamming", Hamming, []float32{255, 0}, []float32{0, 0}, 8},
		{"hamming partial", Hamming, []float32{1, 3}, []float32{2, 3}, 2},
		{"length mismatch", L2, []float32{1}, []float32{1, 2}, nan},
		{"unknown metric", Metric(9), []float32{1}, []float32{1}, nan},
	} {
		got := Distance(tc.m, tc.a, tc.b)
		if got != tc.want && !(got != got && tc.want != tc.want) {
			t.Errorf("%s: Distance = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestHamming checks the hamming kernel on whole words and a tail.
func TestHamming(t *testing.T) {
	long := make([]byte, 19)
	long[0], long[9], long[18] = 0xff, 0x0f, 0x01
	for _, tc := range []struct {
		name string
		a, b []byte
		want int
	}{
		{"equal", []byte{1, 2, 3}, []byte{1, 2, 3}, 0},
		{"one byte", []byte{0xf0}, []byte{0x0f}, 8},
		{"words and tail", long, make([]byte, 19), 13},
	} {
		if got := hamming(tc.a, tc.b); got != tc.want {
			t.Errorf("%s: hamming = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestL2Bounded checks that early abandoning never changes a distance that
// stays within the limit, and that abandoned ones exceed it.
func TestL2Bounded(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for _, dim := range []int{1, 7, 16, 37, 100} {
		for range 200 {
			a, b := make([]float32, dim), make([]float32, dim)
			for i := range a {
				a[i], b[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
			}
			full := l2sq(a, b)
			limit := full * float32(rng.Float64()*2)
			got := l2Bounded(a, b, limit)
			if (got <= limit && got != full) || (full > limit && got <= limit) {
				t.Fatalf("dim %d: l2Bounded(limit %v) = %v, full %v", dim, limit, got, full)
			}
		}
	}
}
