package vecindex

import (
	"context"
	"reflect"
	"testing"
)

// TestIVFFlatMatchesExact checks that IVF_FLAT probing every partition
// returns exactly what brute force does: same ids, order and distances.
func TestIVFFlatMatchesExact(t *testing.T) {
	vs := clustered(3, 4000, 40, 20)
	qs := queriesNear(vs, 4, 20)
	for _, m := range []Metric{L2, Cosine, Dot} {
		ix, err := Build(context.Background(), Params{Kind: IVFFlat, Metric: m, NumPartitions: 16, Seed: 1}, vs)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range []SearchOptions{{K: 10, Nprobes: 16}, {K: 10, Candidates: 60, Nprobes: 16}} {
			for i, q := range qs {
				got := ix.Search(q, o)
				want := ExactSearch(m, vs, q, max(o.K, o.Candidates), nil)
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%v query %d %+v: IVF_FLAT differs from exact search", m, i, o)
				}
			}
		}
	}
}

func TestIVFFlatHammingMatchesExact(t *testing.T) {
	vs := randomBytes(5, 3000, 16)
	qs := randomBytes(6, 10, 16)
	ix, err := BuildBytes(context.Background(), Params{Kind: IVFFlat, Metric: Hamming, NumPartitions: 12}, vs)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		q := qs.Data[i*16 : (i+1)*16]
		want := ExactSearchBytes(vs, q, 10, nil)
		if got := ix.SearchBytes(q, SearchOptions{K: 10, Nprobes: 12}); !reflect.DeepEqual(got, want) {
			t.Fatalf("query %d: SearchBytes differs from exact search", i)
		}
		qf := make([]float32, 16)
		for j, b := range q {
			qf[j] = float32(b)
		}
		if got := ix.Search(qf, SearchOptions{K: 10, Nprobes: 12}); !reflect.DeepEqual(got, want) {
			t.Fatalf("query %d: Search with a float query differs from exact search", i)
		}
	}
	if got := ix.SearchBytes(make([]byte, 3), SearchOptions{}); got != nil {
		t.Errorf("wrong dimension: got %v, want nil", got)
	}
}
