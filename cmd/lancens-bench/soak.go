package main

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/lancens/lancens/client"
)

// Soak workload: a table of soakRows×scale rows gets soakVersions
// versions, each updating a tenth of its rows, with a cleanup of old
// versions every soakCleanupEvery versions and at the end, as a busy table
// with retention on would. Then its size and filtered-query latency are
// compared with a fresh table holding the same live rows, and with
// LanceDB doing the same (update, then optimize with cleanup).
const (
	soakRows         = 100000
	soakVersions     = 200
	soakCleanupEvery = 20
	soakFilter       = "category = 42 AND price > 900"
	soakIterations   = 50
)

// soakUpdate returns the predicate of the update making version v+1: a
// tenth of the rows, a different tenth each time.
func soakUpdate(v int) string { return fmt.Sprintf("id %% 10 = %d", v%10) }

func soakSuite(dir string, _ *instance, scale float64, rep *report) error {
	ctx := context.Background()
	// The soaked and the fresh table each get a lancens of their own, so
	// that each database file holds one table.
	soakDir, freshDir := filepath.Join(dir, "soak"), filepath.Join(dir, "fresh")
	for _, d := range []string{soakDir, freshDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	inst, err := startLancens(soakDir)
	if err != nil {
		return err
	}
	closed := false
	defer func() {
		if !closed {
			inst.close()
		}
	}()
	n := int(soakRows * scale)
	facts := factBatches(n, 50000, 11)
	file := filepath.Join(dir, "soak.arrow")
	if _, err := writeIPC(file, factSchema, facts); err != nil {
		return err
	}
	id := []string{"soak"}
	if _, err := inst.client.CreateTable(ctx, id, factSchema, facts, nil); err != nil {
		return err
	}
	for v := 1; v <= soakVersions; v++ {
		if _, err := inst.client.Update(ctx, id, [][2]string{{"price", "price + 1"}}, soakUpdate(v)); err != nil {
			return err
		}
		if v%soakCleanupEvery == 0 {
			if err := inst.optimize(ctx, "soak"); err != nil {
				return err
			}
		}
	}
	// A fresh lancens holding the same live rows.
	live, err := inst.client.Query(ctx, id, client.QueryRequest{})
	if err != nil {
		return err
	}
	if live.NumRows() != int64(n) {
		return fmt.Errorf("the soaked table has %d rows, want %d", live.NumRows(), n)
	}
	fresh, err := startLancens(freshDir)
	if err != nil {
		return err
	}
	freshClosed := false
	defer func() {
		if !freshClosed {
			fresh.close()
		}
	}()
	if _, err := fresh.client.CreateTable(ctx, []string{"fresh"}, live.Schema, live.Batches, nil); err != nil {
		return err
	}
	// The two tables' queries alternate, so that a busy machine slows
	// both alike; the first of each warms its cache and is not counted.
	var soakLat, freshLat latencies
	var soakRowsOut, freshRows int64
	for i := range soakIterations + 1 {
		for _, q := range []struct {
			inst  *instance
			table string
			lat   *latencies
			rows  *int64
		}{{inst, "soak", &soakLat, &soakRowsOut}, {fresh, "fresh", &freshLat, &freshRows}} {
			d, rows, err := soakQuery(ctx, q.inst, q.table)
			if err != nil {
				return err
			}
			if i > 0 {
				*q.lat = append(*q.lat, d)
			}
			*q.rows = rows
		}
	}
	if freshRows != soakRowsOut {
		return fmt.Errorf("query rows: soaked %d, fresh %d", soakRowsOut, freshRows)
	}
	closed = true
	soakSize, err := closeAndMeasure(inst, soakDir)
	if err != nil {
		return err
	}
	freshClosed = true
	freshSize, err := closeAndMeasure(fresh, freshDir)
	if err != nil {
		return err
	}

	var peer struct {
		SoakBytes  int64     `json:"soakBytes"`
		FreshBytes int64     `json:"freshBytes"`
		SoakLat    []float64 `json:"soakLat"`
		Rows       int64     `json:"rows"`
	}
	if err := lancedb("soak", map[string]any{"dir": filepath.Join(dir, "lancedb"), "file": file, "versions": soakVersions,
		"cleanupEvery": soakCleanupEvery, "filter": soakFilter, "iterations": soakIterations}, &peer); err != nil {
		return err
	}
	if peer.Rows != soakRowsOut {
		return fmt.Errorf("query rows: lancens %d, lancedb %d", soakRowsOut, peer.Rows)
	}
	mb := func(b int64) float64 { return float64(b) / (1 << 20) }
	soakP50, freshP50 := ms(soakLat.percentile(.5)), ms(freshLat.percentile(.5))
	peerSoakP50 := ms(msLatencies(peer.SoakLat).percentile(.5))
	label := fmt.Sprintf("%d rows, %d versions", n, soakVersions)
	rep.add([]result{
		{"soak", "size after soak vs fresh, " + label, "MB", mb(soakSize), mb(freshSize), "lancens fresh", false},
		{"soak", "filtered query p50 after soak vs fresh, " + label, "ms", soakP50, freshP50, "lancens fresh", false},
		{"soak", "size after soak, " + label, "MB", mb(soakSize), mb(peer.SoakBytes), "LanceDB", false},
		{"soak", "filtered query p50 after soak, " + label, "ms", soakP50, peerSoakP50, "LanceDB", false},
		{"soak", "LanceDB size after soak vs fresh, " + label, "MB", mb(peer.SoakBytes), mb(peer.FreshBytes), "LanceDB fresh", false},
	}...)
	return nil
}

// soakQuery runs the soak's filtered query on table once and returns how
// long it took and the rows it answered.
func soakQuery(ctx context.Context, inst *instance, table string) (time.Duration, int64, error) {
	t0 := time.Now()
	res, err := inst.client.Query(ctx, []string{table}, client.QueryRequest{Filter: soakFilter, K: 100, Columns: []string{"id", "price"}})
	if err != nil {
		return 0, 0, err
	}
	return time.Since(t0), res.NumRows(), nil
}

// optimize runs lancens's cleanup of table now, keeping no version that
// nothing else keeps.
func (inst *instance) optimize(ctx context.Context, table string) error {
	var out map[string]any
	return inst.post(ctx, "/v1/table/"+table+"/optimize", `{"older_than_seconds": 0}`, &out)
}

// closeAndMeasure closes inst, whose database and warehouse lie in dir,
// and returns the size of its database file (closing checkpoints the
// write-ahead log into it and removes the log) and of the files of its
// warehouse (the Lance datasets).
func closeAndMeasure(inst *instance, dir string) (int64, error) {
	inst.close()
	info, err := os.Stat(filepath.Join(dir, "lancens.db"))
	if err != nil {
		return 0, err
	}
	size := info.Size()
	err = filepath.WalkDir(filepath.Join(dir, "warehouse"), func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		size += fi.Size()
		return err
	})
	return size, err
}
