package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancens/lancens/client"
	"github.com/lancens/lancens/gen"
	"github.com/lancens/lancens/vecindex"
)

// searchSuite measures search against LanceDB embedded on the same data and
// index parameters: recall@10, index build time and query latency of each
// vector index type, full-text and filtered vector query latency. Vectors
// are 128-dimensional, drawn around 100 gaussian centres.
func searchSuite(dir string, inst *instance, scale float64, out *report) error {
	ctx := context.Background()

	const dim, k, nq = 128, 10, 100
	n := int(100000 * scale)
	centres := gaussianCentres(100, dim, 31)
	data := drawAround(centres, n, 32)
	queries := drawAround(centres, nq, 33)
	schema := searchSchema(dim)
	batches := searchBatches(schema, data, 10000)
	file := filepath.Join(dir, "search.arrow")
	if _, err := writeIPC(file, schema, batches); err != nil {
		return err
	}
	qfile := filepath.Join(dir, "queries.json")
	if err := writeJSON(qfile, queries); err != nil {
		return err
	}
	if _, err := inst.client.CreateTable(ctx, []string{"search"}, schema, batches, nil); err != nil {
		return err
	}
	ldb := filepath.Join(dir, "lancedb")
	var loaded struct{ Rows int }
	if err := lancedb("load", map[string]any{"dir": ldb, "table": "search", "file": file}, &loaded); err != nil {
		return err
	}
	truth := groundTruth(data, queries, k)

	parts := max(1, n/400) // 256 partitions at 100k rows, as LanceDB is usually tuned
	built := map[string]bool{}
	for _, tc := range []struct {
		index  string
		params map[string]any // LanceDB option names
		api    string         // our create_index members
		query  map[string]int // nprobes, refineFactor, ef
	}{
		{"IVF_FLAT", map[string]any{"numPartitions": parts}, fmt.Sprintf(`"num_partitions":%d`, parts), map[string]int{"nprobes": 20}},
		{"IVF_PQ", map[string]any{"numPartitions": parts, "numSubVectors": 16}, fmt.Sprintf(`"num_partitions":%d,"num_sub_vectors":16`, parts), map[string]int{"nprobes": 20}},
		{"IVF_PQ", map[string]any{"numPartitions": parts, "numSubVectors": 16}, fmt.Sprintf(`"num_partitions":%d,"num_sub_vectors":16`, parts), map[string]int{"nprobes": 20, "refineFactor": 10}},
		{"IVF_HNSW_SQ", map[string]any{"numPartitions": 4}, `"num_partitions":4`, map[string]int{"nprobes": 4, "ef": 64}},
		{"IVF_HNSW_PQ", map[string]any{"numPartitions": 4, "numSubVectors": 16}, `"num_partitions":4,"num_sub_vectors":16`, map[string]int{"nprobes": 4, "ef": 128, "refineFactor": 10}},
	} {
		label := tc.index
		if r := tc.query["refineFactor"]; r > 0 {
			label += fmt.Sprintf(" refine %d", r)
		}
		if ef := tc.query["ef"]; ef > 0 {
			label += fmt.Sprintf(" ef %d", ef)
		}
		// An index type listed twice is built once and queried both ways.
		rebuild := !built[tc.index]
		built[tc.index] = true
		buildStart := time.Now()
		if rebuild {
			if err := inst.createIndex(ctx, "search", fmt.Sprintf(`{"column":"vector","index_type":%q,"name":"v_%s",%s}`, tc.index, tc.index, tc.api)); err != nil {
				return err
			}
		}
		ourBuild := time.Since(buildStart)
		ourIDs, ourLat, err := inst.vectorQueries(ctx, "search", queries, k, tc.query, "", 3)
		if err != nil {
			return err
		}
		var peer struct {
			BuildMs float64   `json:"buildMs"`
			IDs     [][]int64 `json:"ids"`
			Lat     []float64 `json:"lat"`
		}
		args := map[string]any{"dir": ldb, "table": "search", "queriesFile": qfile, "k": k, "iterations": 3}
		if rebuild {
			args["index"] = map[string]any{"type": tc.index, "params": tc.params}
		}
		for name, v := range tc.query {
			args[name] = v
		}
		if err := lancedb("vector", args, &peer); err != nil {
			return err
		}
		pl := msLatencies(peer.Lat)
		out.add(result{"search", label + " recall@10", "", meanRecall(ourIDs, truth), meanRecall(peer.IDs, truth), "LanceDB", true})
		if rebuild {
			out.add(result{"search", tc.index + " build", "s", ourBuild.Seconds(), peer.BuildMs / 1000, "LanceDB", false})
		}
		out.add(
			result{"search", label + " query p50", "ms", ms(ourLat.percentile(.5)), ms(pl.percentile(.5)), "LanceDB", false},
			result{"search", label + " query p99", "ms", ms(ourLat.percentile(.99)), ms(pl.percentile(.99)), "LanceDB", false},
			result{"search", label + " QPS (1 client)", "/s", 1 / ourLat.mean().Seconds(), 1 / pl.mean().Seconds(), "LanceDB", true},
		)
	}

	// Filtered vector search (prefilter, with the last index).
	const filter = "category = 3"
	_, ourLat, err := inst.vectorQueries(ctx, "search", queries, k, map[string]int{"nprobes": 20}, filter, 3)
	if err != nil {
		return err
	}
	var peer struct {
		Lat []float64 `json:"lat"`
	}
	if err := lancedb("vector", map[string]any{"dir": ldb, "table": "search", "queriesFile": qfile, "k": k, "iterations": 3,
		"nprobes": 20, "filter": filter}, &peer); err != nil {
		return err
	}
	out.add(result{"search", "filtered vector query p50", "ms", ms(ourLat.percentile(.5)), ms(msLatencies(peer.Lat).percentile(.5)), "LanceDB", false})

	// Full-text search.
	words := []string{"alpha", "bravo delta", "lance", "vector search", "zulu", "kilo lima", "table", "echo", "quebec romeo", "tango"}
	buildStart := time.Now()
	if err := inst.createIndex(ctx, "search", `{"column":"text","index_type":"INVERTED"}`); err != nil {
		return err
	}
	ourBuild := time.Since(buildStart)
	var ftsLat latencies
	for range 3 {
		for _, w := range words {
			t0 := time.Now()
			q := client.QueryRequest{K: k, Text: w}
			if _, err := inst.client.Query(ctx, []string{"search"}, q); err != nil {
				return err
			}
			ftsLat = append(ftsLat, time.Since(t0))
		}
	}
	var peerFTS struct {
		BuildMs float64   `json:"buildMs"`
		Lat     []float64 `json:"lat"`
	}
	if err := lancedb("fts", map[string]any{"dir": ldb, "table": "search", "queries": words, "k": k, "iterations": 3}, &peerFTS); err != nil {
		return err
	}
	out.add(
		result{"search", "FTS build", "s", ourBuild.Seconds(), peerFTS.BuildMs / 1000, "LanceDB", false},
		result{"search", "FTS query p50", "ms", ms(ftsLat.percentile(.5)), ms(msLatencies(peerFTS.Lat).percentile(.5)), "LanceDB", false},
	)
	return nil
}

func (l latencies) mean() time.Duration {
	var sum time.Duration
	for _, d := range l {
		sum += d
	}
	return sum / time.Duration(max(1, len(l)))
}

// createIndex creates an index over HTTP and waits for its build.
func (inst *instance) createIndex(ctx context.Context, table, body string) error {
	var resp gen.CreateTableIndexResponse
	if err := inst.post(ctx, "/v1/table/"+table+"/create_index", body, &resp); err != nil {
		return err
	}
	for {
		tx, err := inst.client.DescribeTransaction(ctx, []string{*resp.TransactionId})
		if err != nil {
			return err
		}
		switch tx.Status {
		case "Succeeded":
			return nil
		case "Failed":
			return fmt.Errorf("index build failed: %v", tx.Properties)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// vectorQueries runs each query `iterations` times over HTTP and returns the
// first round's result ids and every latency.
func (inst *instance) vectorQueries(ctx context.Context, table string, queries [][]float32, k int, tune map[string]int, filter string, iterations int) ([][]int64, latencies, error) {
	run := func(q []float32) ([]int64, error) {
		req := client.QueryRequest{K: k, Vector: q, Columns: []string{"id"}, Filter: filter,
			Nprobes: tune["nprobes"], Ef: tune["ef"], RefineFactor: tune["refineFactor"]}
		res, err := inst.client.Query(ctx, []string{table}, req)
		if err != nil {
			return nil, err
		}
		var ids []int64
		for _, b := range res.Batches {
			ids = append(ids, b.Column(0).(*array.Int64).Int64Values()...)
		}
		return ids, nil
	}
	for _, q := range queries[:min(5, len(queries))] {
		if _, err := run(q); err != nil {
			return nil, nil, err
		}
	}
	var all [][]int64
	var lat latencies
	for it := range iterations {
		for _, q := range queries {
			t0 := time.Now()
			ids, err := run(q)
			if err != nil {
				return nil, nil, err
			}
			lat = append(lat, time.Since(t0))
			if it == 0 {
				all = append(all, ids)
			}
		}
	}
	return all, lat, nil
}

func gaussianCentres(n, dim int, seed uint64) [][]float32 {
	r := rand.New(rand.NewPCG(seed, 3))
	out := make([][]float32, n)
	for i := range out {
		out[i] = make([]float32, dim)
		for j := range out[i] {
			out[i][j] = float32(r.NormFloat64() * 3)
		}
	}
	return out
}

func drawAround(centres [][]float32, n int, seed uint64) [][]float32 {
	r := rand.New(rand.NewPCG(seed, 4))
	out := make([][]float32, n)
	for i := range out {
		c := centres[r.IntN(len(centres))]
		out[i] = make([]float32, len(c))
		for j := range c {
			out[i][j] = c[j] + float32(r.NormFloat64())
		}
	}
	return out
}

func searchSchema(dim int) *arrow.Schema {
	return arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "category", Type: arrow.PrimitiveTypes.Int32},
		{Name: "text", Type: arrow.BinaryTypes.String},
		{Name: "vector", Type: arrow.FixedSizeListOf(int32(dim), arrow.PrimitiveTypes.Float32)},
	}, nil)
}

func searchBatches(schema *arrow.Schema, data [][]float32, batchRows int) []arrow.RecordBatch {
	r := rand.New(rand.NewPCG(5, 6))
	var out []arrow.RecordBatch
	for start := 0; start < len(data); start += batchRows {
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		vl := b.Field(3).(*array.FixedSizeListBuilder)
		for i := start; i < min(len(data), start+batchRows); i++ {
			b.Field(0).(*array.Int64Builder).Append(int64(i))
			b.Field(1).(*array.Int32Builder).Append(int32(i % 10))
			b.Field(2).(*array.StringBuilder).Append(sentence(r, 10))
			vl.Append(true)
			vl.ValueBuilder().(*array.Float32Builder).AppendValues(data[i], nil)
		}
		out = append(out, b.NewRecordBatch())
		b.Release()
	}
	return out
}

// groundTruth computes the exact k nearest rows (l2) of each query.
func groundTruth(data, queries [][]float32, k int) [][]int64 {
	vs := &vecindex.Vectors{Dim: len(data[0])}
	for i, v := range data {
		vs.Data = append(vs.Data, v...)
		vs.IDs = append(vs.IDs, int64(i))
	}
	out := make([][]int64, len(queries))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.NumCPU())
	for i, q := range queries {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			for _, c := range vecindex.ExactSearch(vecindex.L2, vs, q, k, nil) {
				out[i] = append(out[i], c.ID)
			}
		})
	}
	wg.Wait()
	return out
}

func meanRecall(got, truth [][]int64) float64 {
	var sum float64
	for i, want := range truth {
		hit := 0
		if i < len(got) {
			for _, id := range got[i] {
				if slices.Contains(want, id) {
					hit++
				}
			}
		}
		sum += float64(hit) / float64(len(want))
	}
	return sum / float64(len(truth))
}

func writeJSON(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}
