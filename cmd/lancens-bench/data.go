package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancens/lancens/client"
	"github.com/lancens/lancens/store"
)

// dataSuite measures the data plane against LanceDB embedded: ingesting
// 100k rows of (id, text, 128-dim vector) in 10k-row batches, and filtered
// count and filtered query latency on a 1M-row table.
func dataSuite(dir string, inst *instance, scale float64, out *report) error {
	ctx := context.Background()

	// Ingest.
	n := int(100000 * scale)
	const batchRows = 10000
	batches := vectorBatches(n, 128, batchRows, 42, nil)
	file := filepath.Join(dir, "ingest.arrow")
	size, err := writeIPC(file, vectorSchema(128), batches)
	if err != nil {
		return err
	}
	t0 := time.Now()
	if _, err := inst.client.CreateTable(ctx, []string{"ingest"}, vectorSchema(128), batches[:1], nil); err != nil {
		return err
	}
	for _, b := range batches[1:] {
		if _, err := inst.client.Insert(ctx, []string{"ingest"}, vectorSchema(128), []arrow.RecordBatch{b}, ""); err != nil {
			return err
		}
	}
	ours := time.Since(t0).Seconds()
	var peer struct {
		Ms   float64 `json:"ms"`
		Rows int     `json:"rows"`
	}
	if err := lancedb("ingest", map[string]any{"dir": filepath.Join(dir, "lancedb"), "table": "ingest", "file": file, "batchRows": batchRows}, &peer); err != nil {
		return err
	}
	if peer.Rows != n {
		return fmt.Errorf("lancedb ingested %d rows, want %d", peer.Rows, n)
	}
	mb := float64(size) / (1 << 20)
	out.add(
		result{"data", fmt.Sprintf("ingest rows/s, %d rows", n), "/s", float64(n) / ours, float64(n) / (peer.Ms / 1000), "LanceDB", true},
		result{"data", fmt.Sprintf("ingest MB/s, %.0f MB", mb), "MB/s", mb / ours, mb / (peer.Ms / 1000), "LanceDB", true},
	)

	nsAdds, err := namespaceAdds(dir, inst, scale)
	if err != nil {
		return err
	}
	out.add(nsAdds...)

	// Filtered count and query on a large table.
	n = int(1000000 * scale)
	facts := factBatches(n, 50000, 7)
	factFile := filepath.Join(dir, "facts.arrow")
	if _, err := writeIPC(factFile, factSchema, facts); err != nil {
		return err
	}
	if _, err := inst.client.CreateTable(ctx, []string{"facts"}, factSchema, facts, nil); err != nil {
		return err
	}
	var loaded struct{ Rows int }
	if err := lancedb("load", map[string]any{"dir": filepath.Join(dir, "lancedb"), "table": "facts", "file": factFile}, &loaded); err != nil {
		return err
	}
	const countFilter = "category = 7 AND price > 500"
	const iterations = 20
	var ourCount int64
	countLat, err := timeN(iterations, func() error {
		var err error
		ourCount, err = inst.client.CountRows(ctx, []string{"facts"}, countFilter, nil)
		return err
	})
	if err != nil {
		return err
	}
	var peerCount struct {
		Lat    []float64 `json:"lat"`
		Result int64     `json:"result"`
	}
	if err := lancedb("count", map[string]any{"dir": filepath.Join(dir, "lancedb"), "table": "facts", "filter": countFilter, "iterations": iterations}, &peerCount); err != nil {
		return err
	}
	if peerCount.Result != ourCount {
		return fmt.Errorf("count mismatch: lancens %d, lancedb %d", ourCount, peerCount.Result)
	}
	const queryFilter = "category = 42 AND price > 900"
	cols := []string{"id", "price"}
	var ourRows int64
	queryLat, err := timeN(iterations, func() error {
		res, err := inst.client.Query(ctx, []string{"facts"}, client.QueryRequest{Filter: queryFilter, K: 100, Columns: cols})
		if err == nil {
			ourRows = res.NumRows()
		}
		return err
	})
	if err != nil {
		return err
	}
	var peerQuery struct {
		Lat  []float64 `json:"lat"`
		Rows int64     `json:"rows"`
	}
	if err := lancedb("query", map[string]any{"dir": filepath.Join(dir, "lancedb"), "table": "facts", "filter": queryFilter,
		"columns": cols, "limit": 100, "iterations": iterations}, &peerQuery); err != nil {
		return err
	}
	if peerQuery.Rows != ourRows {
		return fmt.Errorf("query rows: lancens %d, lancedb %d", ourRows, peerQuery.Rows)
	}
	pc, pq := msLatencies(peerCount.Lat), msLatencies(peerQuery.Lat)
	out.add(
		result{"data", fmt.Sprintf("filtered count p50, %d rows", n), "ms", ms(countLat.percentile(.5)), ms(pc.percentile(.5)), "LanceDB", false},
		result{"data", fmt.Sprintf("filtered query p50, %d rows", n), "ms", ms(queryLat.percentile(.5)), ms(pq.percentile(.5)), "LanceDB", false},
	)
	return nil
}

// namespaceAdds measures a table add through the LanceDB SDK in namespace
// mode, where Lance writes the files and the namespace commits each
// version: against lancens (the REST namespace) with each commit
// durability — inst, as lancens serves by default, and another lancens
// with --commit-durability process, which syncs nothing per commit — and
// against Lance's directory namespace on the same disk, which syncs
// nothing either; alternating add by add.
func namespaceAdds(dir string, inst *instance, scale float64) ([]result, error) {
	const rows, warmup = 10, 5
	iterations := max(20, int(200*scale))
	relaxed, err := startLancensWith(filepath.Join(dir, "process"), store.DurabilityProcess)
	if err != nil {
		return nil, err
	}
	defer relaxed.close()
	var runs []struct {
		Lat  []float64 `json:"lat"`
		Rows int       `json:"rows"`
	}
	namespaces := []map[string]any{
		{"impl": "rest", "config": map[string]any{"uri": inst.url}},
		{"impl": "rest", "config": map[string]any{"uri": relaxed.url}},
		{"impl": "dir", "config": map[string]any{"root": filepath.Join(dir, "dirns")}},
	}
	if err := lancedb("nsadd", map[string]any{"namespaces": namespaces, "table": "nsadd", "rows": rows,
		"warmup": warmup, "iterations": iterations}, &runs); err != nil {
		return nil, err
	}
	if len(runs) != len(namespaces) {
		return nil, fmt.Errorf("namespace adds: %d answers for %d namespaces", len(runs), len(namespaces))
	}
	want := rows * (1 + warmup + iterations)
	for i, run := range runs {
		if run.Rows != want {
			return nil, fmt.Errorf("namespace adds: %d rows through namespace %v, want %d", run.Rows, namespaces[i], want)
		}
	}
	peer := ms(msLatencies(runs[2].Lat).percentile(.5))
	var out []result
	for i, d := range []store.CommitDurability{store.DurabilityFull, store.DurabilityProcess} {
		out = append(out, result{"data", fmt.Sprintf("namespace-mode add p50, %d rows, durability %s", rows, d), "ms",
			ms(msLatencies(runs[i].Lat).percentile(.5)), peer, "directory namespace", false})
	}
	return out, nil
}

// timeN runs fn n times and times each run.
func timeN(n int, fn func() error) (latencies, error) {
	out := make(latencies, 0, n)
	for range n {
		t0 := time.Now()
		if err := fn(); err != nil {
			return nil, err
		}
		out = append(out, time.Since(t0))
	}
	return out, nil
}
