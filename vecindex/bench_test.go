package vecindex

import (
	"context"
	"fmt"
	"sync"
	"testing"
)

// benchSet mirrors LanceDB's published measurement: 100k vectors of 128
// dimensions around 100 clusters, with 100 queries near the data.
var benchSet = sync.OnceValue(func() *recallSet {
	vs := clustered(51, 100000, 128, 100)
	rs := &recallSet{vs: vs, rows: rowsByID(vs), queries: queriesNear(vs, 52, 100), truth: map[Metric][][]Candidate{}}
	for _, q := range rs.queries {
		rs.truth[L2] = append(rs.truth[L2], ExactSearch(L2, vs, q, 10, nil))
	}
	return rs
})

// BenchmarkSearch times one query on 100k×128 vectors per index and
// reports the recall@10 of the returned (re-ranked) results.
func BenchmarkSearch(b *testing.B) {
	rs := benchSet()
	indexes := map[Params]*Index{}
	for _, tc := range []struct {
		name string
		p    Params
		o    SearchOptions
	}{
		{"exact", Params{}, SearchOptions{K: 10}},
		{"IVF_FLAT/nprobes20", Params{Kind: IVFFlat, NumPartitions: 256}, SearchOptions{K: 10}},
		{"IVF_PQ/nprobes20", Params{Kind: IVFPQ, NumPartitions: 256, NumSubVectors: 16}, SearchOptions{K: 10}},
		{"IVF_PQ/nprobes20/refine10", Params{Kind: IVFPQ, NumPartitions: 256, NumSubVectors: 16}, SearchOptions{K: 10, Candidates: 100}},
		{"IVF_SQ/nprobes20", Params{Kind: IVFSQ, NumPartitions: 256}, SearchOptions{K: 10}},
		{"IVF_HNSW_SQ/default", Params{Kind: IVFHNSWSQ}, SearchOptions{K: 10}},
		{"IVF_HNSW_SQ/ef64", Params{Kind: IVFHNSWSQ}, SearchOptions{K: 10, Ef: 64}},
		{"IVF_HNSW_PQ/refine10", Params{Kind: IVFHNSWPQ, NumSubVectors: 16}, SearchOptions{K: 10, Candidates: 100}},
		{"IVF_PQ/nprobes20/filter1%", Params{Kind: IVFPQ, NumPartitions: 256, NumSubVectors: 16}, SearchOptions{K: 10, Allow: onePercent}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			search := func(q []float32) []Candidate { return ExactSearch(L2, rs.vs, q, tc.o.K, tc.o.Allow) }
			if tc.name != "exact" {
				ix := indexes[tc.p]
				if ix == nil {
					var err error
					if ix, err = Build(context.Background(), tc.p, rs.vs); err != nil {
						b.Fatal(err)
					}
					indexes[tc.p] = ix
				}
				search = func(q []float32) []Candidate { return ix.Search(q, tc.o) }
			}
			for i := 0; b.Loop(); i++ {
				search(rs.queries[i%len(rs.queries)])
			}
			if ix := indexes[tc.p]; ix != nil && tc.o.Allow == nil {
				b.ReportMetric(rs.meanRecall(ix, tc.o), "recall@10")
			}
		})
	}
}

// BenchmarkBuild times building each kind of index over 20k×64 vectors.
func BenchmarkBuild(b *testing.B) {
	vs := clustered(53, 20000, 64, 100)
	for _, p := range []Params{
		{Kind: IVFFlat, NumPartitions: 128},
		{Kind: IVFPQ, NumPartitions: 128, NumSubVectors: 8},
		{Kind: IVFSQ, NumPartitions: 128},
		{Kind: IVFHNSWSQ},
		{Kind: IVFHNSWPQ, NumSubVectors: 8},
	} {
		b.Run(fmt.Sprint(p.Kind), func(b *testing.B) {
			for b.Loop() {
				if _, err := Build(context.Background(), p, vs); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
