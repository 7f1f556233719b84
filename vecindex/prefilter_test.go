package vecindex

import (
	"context"
	"reflect"
	"slices"
	"testing"
)

// onePercent admits the ids 7i+3 of clustered data with i a multiple of
// 100.
func onePercent(id int64) bool { return (id/7)%100 == 0 }

// TestPrefilter checks that a 1% filter still yields K results, all
// allowed and ordered, for every index kind.
func TestPrefilter(t *testing.T) {
	vs := clustered(21, 10000, 32, 50)
	qs := queriesNear(vs, 22, 10)
	for _, p := range []Params{
		{Kind: IVFFlat, NumPartitions: 16},
		{Kind: IVFPQ, NumPartitions: 16, NumSubVectors: 4},
		{Kind: IVFSQ, Metric: Cosine, NumPartitions: 16},
		{Kind: IVFHNSWSQ, NumPartitions: 2},
		{Kind: IVFHNSWPQ, Metric: Dot, NumPartitions: 2, NumSubVectors: 4, NumBits: 4},
	} {
		ix, err := Build(context.Background(), p, vs)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range []SearchOptions{
			{K: 10, Nprobes: 1, Allow: onePercent},
			{K: 10, Candidates: 40, Nprobes: 1, Allow: onePercent},
			{K: 500, Allow: onePercent}, // more than the 100 allowed rows
		} {
			for i, q := range qs {
				got := ix.Search(q, o)
				if len(got) < min(o.K, 100) || len(got) > max(o.K, o.Candidates) {
					t.Fatalf("%v/%v query %d K=%d: %d results", p.Kind, p.Metric, i, o.K, len(got))
				}
				for _, c := range got {
					if !onePercent(c.ID) {
						t.Fatalf("%v query %d: id %d is not allowed", p.Kind, i, c.ID)
					}
				}
				if !slices.IsSortedFunc(got, compareCandidates) {
					t.Fatalf("%v query %d: results not sorted", p.Kind, i)
				}
			}
		}
	}
}

func TestPrefilterFlatMatchesExact(t *testing.T) {
	vs := clustered(23, 5000, 24, 30)
	ix, err := Build(context.Background(), Params{Kind: IVFFlat, NumPartitions: 10}, vs)
	if err != nil {
		t.Fatal(err)
	}
	for i, q := range queriesNear(vs, 24, 10) {
		want := ExactSearch(L2, vs, q, 10, onePercent)
		if got := ix.Search(q, SearchOptions{K: 10, Nprobes: 10, Allow: onePercent}); !reflect.DeepEqual(got, want) {
			t.Fatalf("query %d: filtered IVF_FLAT differs from filtered exact search", i)
		}
	}
}

func TestRemove(t *testing.T) {
	vs := clustered(25, 5000, 32, 30)
	q := queriesNear(vs, 26, 1)[0]
	for _, p := range []Params{{Kind: IVFFlat, NumPartitions: 8}, {Kind: IVFHNSWSQ, NumPartitions: 1}} {
		ix, err := Build(context.Background(), p, vs)
		if err != nil {
			t.Fatal(err)
		}
		before := ix.Search(q, SearchOptions{K: 10})
		gone := map[int64]bool{before[0].ID: true, before[3].ID: true, -1: true, before[5].ID: false}
		ix.Remove(gone)
		ix.Remove(map[int64]bool{before[0].ID: true}) // again: no double count
		if ix.Len() != 4998 {
			t.Errorf("%v: Len = %d after removing 2, want 4998", p.Kind, ix.Len())
		}
		after := ix.Search(q, SearchOptions{K: 10})
		if len(after) != 10 {
			t.Fatalf("%v: %d results after Remove", p.Kind, len(after))
		}
		for _, c := range after {
			if gone[c.ID] {
				t.Errorf("%v: removed id %d returned", p.Kind, c.ID)
			}
		}
		data, _ := ix.MarshalBinary()
		loaded, err := Load(data)
		if err != nil {
			t.Fatal(err)
		}
		if loaded.Len() != 4998 || !reflect.DeepEqual(loaded.Search(q, SearchOptions{K: 10}), after) {
			t.Errorf("%v: removal lost in MarshalBinary/Load", p.Kind)
		}
	}
}
