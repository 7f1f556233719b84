package vecindex

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

// recallSet is the shared recall benchmark: 20k clustered vectors of 64
// dimensions around 100 gaussian centres, and 100 queries near the data.
type recallSet struct {
	vs      *Vectors
	rows    map[int64]int
	queries [][]float32
	truth   map[Metric][][]Candidate
}

var recallData = sync.OnceValue(func() *recallSet {
	vs := clustered(11, 20000, 64, 100)
	rs := &recallSet{vs: vs, rows: rowsByID(vs), queries: queriesNear(vs, 12, 100), truth: map[Metric][][]Candidate{}}
	for _, m := range []Metric{L2, Cosine, Dot} {
		for _, q := range rs.queries {
			rs.truth[m] = append(rs.truth[m], ExactSearch(m, vs, q, 10, nil))
		}
	}
	return rs
})

// meanRecall returns the mean recall@10 of ix over the recall set, the
// candidates re-ranked by exact distance when there are more than K.
func (rs *recallSet) meanRecall(ix *Index, o SearchOptions) float64 {
	m := ix.Params().Metric
	sum := 0.0
	for i, q := range rs.queries {
		got := ix.Search(q, o)
		if len(got) > o.K {
			got = rerank(m, rs.vs, rs.rows, q, got, o.K)
		}
		sum += recall(rs.truth[m][i], got[:min(len(got), o.K)])
	}
	return sum / float64(len(rs.queries))
}

func TestRecall(t *testing.T) {
	if testing.Short() {
		t.Skip("builds several indexes")
	}
	rs := recallData()
	built := map[Params]*Index{}
	for _, tc := range []struct {
		p    Params
		o    SearchOptions
		want float64
	}{
		{Params{Kind: IVFFlat, NumPartitions: 64}, SearchOptions{K: 10, Nprobes: 16}, 0.99},
		{Params{Kind: IVFPQ, NumPartitions: 64, NumSubVectors: 8}, SearchOptions{K: 10, Nprobes: 16}, 0.30},
		{Params{Kind: IVFPQ, NumPartitions: 64, NumSubVectors: 8}, SearchOptions{K: 10, Candidates: 100, Nprobes: 16}, 0.85},
		{Params{Kind: IVFPQ, Metric: Cosine, NumPartitions: 64, NumSubVectors: 8}, SearchOptions{K: 10, Candidates: 100, Nprobes: 16}, 0.85},
		{Params{Kind: IVFPQ, NumPartitions: 64, NumSubVectors: 16, NumBits: 4}, SearchOptions{K: 10, Candidates: 100, Nprobes: 16}, 0.70},
		{Params{Kind: IVFSQ, NumPartitions: 64}, SearchOptions{K: 10, Nprobes: 16}, 0.90},
		{Params{Kind: IVFSQ, NumPartitions: 64}, SearchOptions{K: 10, Candidates: 30, Nprobes: 16}, 0.95},
		{Params{Kind: IVFHNSWSQ, NumPartitions: 4}, SearchOptions{K: 10, Ef: 64, Nprobes: 2}, 0.90},
		{Params{Kind: IVFHNSWSQ, Metric: Dot, NumPartitions: 4}, SearchOptions{K: 10, Ef: 64, Nprobes: 2}, 0.85},
		{Params{Kind: IVFHNSWPQ, NumPartitions: 4, NumSubVectors: 8}, SearchOptions{K: 10, Candidates: 100, Nprobes: 2}, 0.85},
	} {
		name := fmt.Sprintf("%v/%v/P%d/M%d/bits%d/cand%d", tc.p.Kind, tc.p.Metric, tc.p.NumPartitions, tc.p.NumSubVectors, tc.p.NumBits, tc.o.Candidates)
		t.Run(name, func(t *testing.T) {
			ix := built[tc.p]
			if ix == nil {
				start := time.Now()
				var err error
				if ix, err = Build(context.Background(), tc.p, rs.vs); err != nil {
					t.Fatal(err)
				}
				built[tc.p] = ix
				t.Logf("built in %v", time.Since(start).Round(time.Millisecond))
			}
			got := rs.meanRecall(ix, tc.o)
			t.Logf("recall@10 %.3f", got)
			if got < tc.want {
				t.Errorf("recall@10 = %.3f, want at least %.2f", got, tc.want)
			}
		})
	}
}
