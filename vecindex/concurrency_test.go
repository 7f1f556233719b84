package vecindex

import (
	"context"
	"reflect"
	"sync"
	"testing"
)

// TestConcurrentSearch runs searches from several goroutines while rows are
// removed, and checks that results of untouched queries stay identical.
func TestConcurrentSearch(t *testing.T) {
	vs := clustered(61, 3000, 16, 10)
	qs := queriesNear(vs, 62, 8)
	for _, p := range []Params{{Kind: IVFPQ, NumPartitions: 8, NumSubVectors: 4}, {Kind: IVFHNSWSQ, NumPartitions: 2}} {
		ix, err := Build(context.Background(), p, vs)
		if err != nil {
			t.Fatal(err)
		}
		want := make([][]Candidate, len(qs))
		for i, q := range qs {
			want[i] = ix.Search(q, SearchOptions{K: 10, Candidates: 30, Ef: 50})
		}
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Go(func() {
				for r := range 20 {
					i := (g + r) % len(qs)
					got := ix.Search(qs[i], SearchOptions{K: 10, Candidates: 30, Ef: 50})
					if !reflect.DeepEqual(got, want[i]) {
						t.Errorf("%v: concurrent search %d differs", p.Kind, i)
						return
					}
					ix.Search(qs[i], SearchOptions{K: 5, Allow: onePercent})
				}
			})
		}
		wg.Go(func() {
			for id := range int64(50) {
				ix.Remove(map[int64]bool{1_000_000 + id: true}) // absent ids: results unchanged
			}
		})
		wg.Wait()
	}
}
