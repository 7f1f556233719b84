package vecindex

import (
	"context"
	"errors"
	"math"
	"testing"
)

func TestBuildRejectsInvalidInput(t *testing.T) {
	ok := clustered(41, 300, 16, 4)
	nan := clustered(41, 300, 16, 4)
	nan.Data[17] = float32(math.NaN())
	for _, tc := range []struct {
		name string
		p    Params
		vs   *Vectors
	}{
		{"no vectors", Params{}, &Vectors{Dim: 16}},
		{"nil vectors", Params{}, nil},
		{"zero dimension", Params{}, &Vectors{Dim: 0, IDs: []int64{1}}},
		{"short data", Params{}, &Vectors{Dim: 4, Data: make([]float32, 7), IDs: []int64{1, 2}}},
		{"non-finite value", Params{}, nan},
		{"unknown kind", Params{Kind: Kind(9)}, ok},
		{"unknown metric", Params{Metric: Metric(9)}, ok},
		{"hamming needs bytes", Params{Metric: Hamming}, ok},
		{"negative partitions", Params{NumPartitions: -1}, ok},
		{"sub-vectors do not divide", Params{Kind: IVFPQ, NumSubVectors: 5}, ok},
		{"more sub-vectors than values", Params{Kind: IVFPQ, NumSubVectors: 32}, ok},
		{"pq bits", Params{Kind: IVFHNSWPQ, NumBits: 6}, ok},
		{"sq bits", Params{Kind: IVFSQ, NumBits: 4}, ok},
		{"m too small", Params{Kind: IVFHNSWSQ, M: 1}, ok},
		{"m too large", Params{Kind: IVFHNSWSQ, M: 1000}, ok},
	} {
		if _, err := Build(context.Background(), tc.p, tc.vs); err == nil {
			t.Errorf("%s: Build succeeded", tc.name)
		}
	}
	bv := randomBytes(42, 100, 8)
	for _, tc := range []struct {
		name string
		p    Params
		vs   *ByteVectors
	}{
		{"not hamming", Params{Kind: IVFFlat, Metric: L2}, bv},
		{"not IVF_FLAT", Params{Kind: IVFPQ, Metric: Hamming}, bv},
		{"no vectors", Params{Metric: Hamming}, &ByteVectors{Dim: 8}},
		{"short data", Params{Metric: Hamming}, &ByteVectors{Dim: 8, Data: make([]byte, 9), IDs: []int64{1, 2}}},
	} {
		if _, err := BuildBytes(context.Background(), tc.p, tc.vs); err == nil {
			t.Errorf("BuildBytes %s: succeeded", tc.name)
		}
	}
}

func TestParamDefaults(t *testing.T) {
	for _, tc := range []struct {
		name   string
		in     Params
		n, dim int
		want   Params
	}{
		{"IVF_FLAT", Params{Kind: IVFFlat}, 10000, 32,
			Params{Kind: IVFFlat, NumPartitions: 3, SampleRate: 256, MaxIterations: 50}},
		{"IVF_PQ", Params{Kind: IVFPQ, Metric: Cosine, M: 9}, 20000, 64,
			Params{Kind: IVFPQ, Metric: Cosine, NumPartitions: 3, NumSubVectors: 4, NumBits: 8, SampleRate: 256, MaxIterations: 50}},
		{"IVF_PQ odd dimension", Params{Kind: IVFPQ, NumBits: 4}, 100, 24,
			Params{Kind: IVFPQ, NumPartitions: 1, NumSubVectors: 2, NumBits: 4, SampleRate: 256, MaxIterations: 50}},
		{"IVF_SQ", Params{Kind: IVFSQ, NumSubVectors: 8}, 9000, 16,
			Params{Kind: IVFSQ, NumPartitions: 2, NumBits: 8, SampleRate: 256, MaxIterations: 50}},
		{"IVF_HNSW_SQ", Params{Kind: IVFHNSWSQ}, 50000, 16,
			Params{Kind: IVFHNSWSQ, NumPartitions: 1, NumBits: 8, SampleRate: 256, MaxIterations: 50, M: 20, EfConstruction: 150}},
		{"IVF_HNSW_PQ", Params{Kind: IVFHNSWPQ, Seed: 4}, 50000, 100,
			Params{Kind: IVFHNSWPQ, NumPartitions: 1, NumSubVectors: 10, NumBits: 8, SampleRate: 256, MaxIterations: 50, M: 20, EfConstruction: 150, Seed: 4}},
		{"target partition size", Params{TargetPartitionSize: 1000}, 20001, 8,
			Params{NumPartitions: 21, TargetPartitionSize: 1000, SampleRate: 256, MaxIterations: 50}},
		{"partitions clamped to rows", Params{NumPartitions: 500, SampleRate: 16, MaxIterations: 5}, 40, 8,
			Params{NumPartitions: 40, SampleRate: 16, MaxIterations: 5}},
	} {
		got, err := tc.in.resolve(tc.n, tc.dim)
		if err != nil || got != tc.want {
			t.Errorf("%s: resolve = %+v, %v; want %+v", tc.name, got, err, tc.want)
		}
	}
}

func TestIndexReportsParams(t *testing.T) {
	vs := clustered(43, 2000, 32, 8)
	ix, err := Build(context.Background(), Params{Kind: IVFHNSWPQ, NumPartitions: 4, NumSubVectors: 8}, vs)
	if err != nil {
		t.Fatal(err)
	}
	want := Params{Kind: IVFHNSWPQ, NumPartitions: 4, NumSubVectors: 8, NumBits: 8, SampleRate: 256, MaxIterations: 50, M: 20, EfConstruction: 150}
	if ix.Params() != want {
		t.Errorf("Params = %+v, want %+v", ix.Params(), want)
	}
	if ix.Len() != 2000 || ix.Dim() != 32 {
		t.Errorf("Len, Dim = %d, %d; want 2000, 32", ix.Len(), ix.Dim())
	}
	st := ix.Stats()
	for key, want := range map[string]any{"index_type": "IVF_HNSW_PQ", "distance_type": "l2", "num_partitions": 4,
		"num_indexed_rows": 2000, "num_sub_vectors": 8, "num_bits": 8, "m": 20, "ef_construction": 150} {
		if st[key] != want {
			t.Errorf("Stats[%q] = %v, want %v", key, st[key], want)
		}
	}
	sizes, _ := st["partition_sizes"].([]int)
	total := 0
	for _, s := range sizes {
		total += s
	}
	if len(sizes) != 4 || total != 2000 {
		t.Errorf("partition_sizes = %v", sizes)
	}
}

func TestBuildCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	vs := clustered(44, 2000, 16, 8)
	for _, k := range []Kind{IVFFlat, IVFPQ, IVFHNSWSQ} {
		if _, err := Build(ctx, Params{Kind: k}, vs); !errors.Is(err, context.Canceled) {
			t.Errorf("%v: Build with a cancelled context returned %v", k, err)
		}
	}
	if _, err := BuildBytes(ctx, Params{Metric: Hamming}, randomBytes(45, 100, 4)); !errors.Is(err, context.Canceled) {
		t.Errorf("BuildBytes with a cancelled context returned %v", err)
	}
}

// TestSearchEdgeCases covers defaults and degenerate queries.
func TestSearchEdgeCases(t *testing.T) {
	vs := clustered(46, 500, 8, 4)
	ix, err := Build(context.Background(), Params{Kind: IVFSQ, NumPartitions: 30}, vs)
	if err != nil {
		t.Fatal(err)
	}
	q := vs.Data[:8]
	if got := ix.Search(q, SearchOptions{}); len(got) != DefaultK {
		t.Errorf("default K: %d results", len(got))
	}
	if got := ix.Search(q, SearchOptions{K: 1000}); len(got) != 500 {
		t.Errorf("K above the row count: %d results, want all 500", len(got))
	}
	if got := ix.Search(q[:7], SearchOptions{}); got != nil {
		t.Errorf("wrong dimension: %v", got)
	}
	if got := ix.SearchBytes(make([]byte, 8), SearchOptions{}); got != nil {
		t.Errorf("SearchBytes on a float index: %v", got)
	}
	one, err := Build(context.Background(), Params{Kind: IVFHNSWSQ}, &Vectors{Dim: 2, Data: []float32{1, 2}, IDs: []int64{9}})
	if err != nil {
		t.Fatal(err)
	}
	if got := one.Search([]float32{0, 0}, SearchOptions{K: 3}); len(got) != 1 || got[0].ID != 9 {
		t.Errorf("one-row index: %v", got)
	}
}
