package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/lancens/lancens/internal/cputime"
	"github.com/lancens/lancens/lance/blob"
	"github.com/lancens/lancens/lance/file"
	"github.com/lancens/lancens/lance/file/filebench"
	"github.com/lancens/lancens/lance/schema"
	"github.com/lancens/lancens/lance/table"
)

// lanceSuite measures the pure-Go Lance library (lance/table over
// lance/file) against Lance itself, driven through the LanceDB Node SDK on
// the same disk, on the workload of lance/file/filebench: rows of (id
// int64, 100-byte text, 768-d float32 vector), 1M at scale 1 (about 3 GB).
//
//   - Write: the rows, generated once into an Arrow IPC file that both
//     sides load before the clock starts, become a new dataset. Go writes
//     format 2.0 with lance/table and lance/file through blob.Dir, which
//     syncs every file; the SDK writes with createTable at its default
//     storage version (2.2), and at 2.0, and does not sync (a third line
//     adds the time the SDK's files then take to sync). Go also writes
//     2.2, against the SDK at 2.2, where lance/file can.
//   - Scan: every row of each dataset kept (Go's 2.0 and 2.2, the SDK's
//     2.2), all columns and then (id, text), streamed batch by batch by
//     both sides.
//   - Take: 1,000 random rows by offset (in ascending order, as the SDK
//     returns them), all columns, p50, from Go's 2.0 dataset and the
//     SDK's 2.2 one.
//
// A line lance/file cannot measure yet (a format it does not read or
// write) is printed as skipped, with the reason.
//
// The sides alternate round by round (in turn first), so that drift in the
// machine's load falls on both; each result is the median of its samples.
// Scans and takes also print the CPU time each side spent (the process's,
// every thread): on a shared machine the wall time follows the load.
func lanceSuite(dir string, _ *instance, scale float64, rep *report) error {
	ctx := context.Background()
	n := max(int(1000000*scale), 1000)
	const batchRows = 10000
	mib := float64(n) * filebench.RowBytes / (1 << 20)
	data := filepath.Join(dir, "rows.arrow")
	if err := writeWorkload(data, n, batchRows); err != nil {
		return err
	}

	// Write. The datasets of the last round but the SDK's 2.0 one are kept
	// for reading.
	const rounds = 3
	goDB, go22DB, sdkDB := filepath.Join(dir, "go"), filepath.Join(dir, "go22"), filepath.Join(dir, "sdk22")
	var goWrite, go22Write, sdk22, sdk20, sdk22Sync []float64
	var go22Err error // why Go cannot write 2.2, if it cannot
	for round := range rounds {
		last := round == rounds-1
		keep := func(db string, err error) error {
			if err == nil && !last {
				err = os.RemoveAll(db)
			}
			return err
		}
		contenders := []func() error{
			func() error {
				s, err := goWriteDataset(ctx, data, filepath.Join(goDB, "t.lance"), n, file.V2_0)
				goWrite = append(goWrite, s)
				return keep(goDB, err)
			},
			func() error {
				if go22Err != nil {
					return nil
				}
				s, err := goWriteDataset(ctx, data, filepath.Join(go22DB, "t.lance"), n, file.V2_2)
				if errors.Is(err, file.ErrUnsupported) {
					go22Err = err
					return os.RemoveAll(go22DB)
				}
				go22Write = append(go22Write, s)
				return keep(go22DB, err)
			},
			func() error {
				w, err := peerWrite(sdkDB, data, "", n)
				sdk22, sdk22Sync = append(sdk22, w.Ms/1000), append(sdk22Sync, (w.Ms+w.SyncMs)/1000)
				return keep(sdkDB, err)
			},
			func() error {
				w, err := peerWrite(filepath.Join(dir, "sdk20"), data, "2.0", n)
				sdk20 = append(sdk20, w.Ms/1000)
				return errors.Join(err, os.RemoveAll(filepath.Join(dir, "sdk20")))
			},
		}
		for i := range contenders {
			if err := contenders[(i+round)%len(contenders)](); err != nil {
				return fmt.Errorf("write: %w", err)
			}
		}
	}
	if err := os.Remove(data); err != nil {
		return err
	}
	goS := median(goWrite)
	rep.add(
		result{"lance", fmt.Sprintf("write MB/s, %d rows, %.0f MB", n, mib), "MB/s", mib / goS, mib / median(sdk22), "LanceDB (2.2)", true},
		result{"lance", "write MB/s, peer at format 2.0", "MB/s", mib / goS, mib / median(sdk20), "LanceDB (2.0)", true},
		result{"lance", "write MB/s, peer's files then synced", "MB/s", mib / goS, mib / median(sdk22Sync), "LanceDB (2.2)", true},
	)
	if go22Err != nil {
		rep.skip("lance", "write MB/s, Go at format 2.2", fmt.Sprintf("lance/file cannot write it yet (%v)", go22Err))
	} else {
		rep.add(result{"lance", "write MB/s, Go at format 2.2", "MB/s", mib / median(go22Write), mib / median(sdk22), "LanceDB (2.2)", true})
	}

	// Scan the Go-written datasets, then the SDK-written one.
	idText := []string{"id", "text"}
	idTextMiB := float64(n) * (8 + filebench.TextBytes) / (1 << 20)
	datasets := []struct{ db, label string }{{goDB, ""}, {go22DB, "Go-written 2.2, "}, {sdkDB, "SDK-written 2.2, "}}
	if go22Err != nil {
		datasets = slices.Delete(datasets, 1, 2)
	}
	for _, ds := range datasets {
		for _, s := range []struct {
			name    string
			columns []string
			mib     float64
			iters   int
		}{
			{"full scan", nil, mib, 1},
			{"scan (id, text)", idText, idTextMiB, 3},
		} {
			metric := fmt.Sprintf("%s%s MB/s", ds.label, s.name)
			ours, peer, err := compareScans(ctx, ds.db, s.columns, n, rounds, s.iters)
			if errors.Is(err, file.ErrUnsupported) {
				rep.skip("lance", metric, fmt.Sprintf("lance/file cannot read it yet (%v)", err))
				continue
			}
			if err != nil {
				return fmt.Errorf("%s: %w", metric, err)
			}
			rep.add(
				result{"lance", metric, "MB/s", s.mib / ours.wall.Seconds(), s.mib / peer.wall.Seconds(), "LanceDB", true},
				result{"lance", fmt.Sprintf("%s%s, CPU ms", ds.label, s.name), "ms", ms(ours.cpu), ms(peer.cpu), "LanceDB", false},
			)
		}
	}

	// Take, from the Go-written dataset and from the SDK's. The SDK's
	// takeOffsets returns rows in the order of their offsets, not in the
	// order asked, so both sides are asked in that order.
	const takeRows, takeIters = 1000, 10
	offsets := filebench.TakeRows(n, takeRows, 3)
	slices.Sort(offsets)
	for _, ds := range []struct{ db, label string }{{goDB, ""}, {sdkDB, "SDK-written 2.2, "}} {
		metric := fmt.Sprintf("%stake %d random rows p50", ds.label, len(offsets))
		ours, peer, err := compareTakes(ctx, ds.db, offsets, rounds, takeIters)
		if errors.Is(err, file.ErrUnsupported) {
			rep.skip("lance", metric, fmt.Sprintf("lance/file cannot read it yet (%v)", err))
			continue
		}
		if err != nil {
			return fmt.Errorf("%s: %w", metric, err)
		}
		rep.add(
			result{"lance", metric, "ms", ms(ours.wall), ms(peer.wall), "LanceDB", false},
			result{"lance", fmt.Sprintf("%stake %d random rows, CPU ms p50", ds.label, len(offsets)), "ms", ms(ours.cpu), ms(peer.cpu), "LanceDB", false},
		)
	}
	return nil
}

// writeWorkload writes n rows of the filebench workload, in batches of
// batchRows, as an Arrow IPC stream at path, generating one batch at a
// time.
func writeWorkload(path string, n, batchRows int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	w := ipc.NewWriter(f, ipc.WithSchema(filebench.Schema()))
	for start := 0; start < n; start += batchRows {
		b := filebench.Batch(start, min(batchRows, n-start))
		err := w.Write(b)
		b.Release()
		if err != nil {
			return err
		}
	}
	if err := w.Close(); err != nil {
		return err
	}
	return f.Close()
}

// readWorkload loads the batches of the IPC stream at path.
func readWorkload(path string) ([]arrow.RecordBatch, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := ipc.NewReader(f)
	if err != nil {
		return nil, err
	}
	defer r.Release()
	var out []arrow.RecordBatch
	for r.Next() {
		b := r.RecordBatch()
		b.Retain()
		out = append(out, b)
	}
	if err := r.Err(); err != nil {
		releaseAll(out)
		return nil, err
	}
	return out, nil
}

func releaseAll(recs []arrow.RecordBatch) {
	for _, r := range recs {
		r.Release()
	}
}

// goWriteDataset loads the workload at data and times writing it as a new
// dataset at root: its data files (lance/file at format v, through
// WriteFragments) and its first version. It returns the seconds taken, or
// an error wrapping file.ErrUnsupported when lance/file cannot write v.
func goWriteDataset(ctx context.Context, data, root string, n int, v file.Version) (float64, error) {
	batches, err := readWorkload(data)
	if err != nil {
		return 0, err
	}
	defer debug.FreeOSMemory()
	defer releaseAll(batches)
	sch, err := schema.FromArrow(batches[0].Schema())
	if err != nil {
		return 0, err
	}
	if _, err := sch.AssignIDs(0); err != nil {
		return 0, err
	}
	store := blob.NewDir(root)
	t0 := time.Now()
	frags, err := table.WriteFragments(ctx, store, sch, table.Batches(batches...), table.WriteOptions{File: file.WriteOptions{Version: v}})
	if err != nil {
		return 0, err
	}
	d, err := table.Create(ctx, store, sch, frags, table.CreateOptions{})
	if err != nil {
		return 0, err
	}
	s := time.Since(t0).Seconds()
	if rows := d.Manifest().Rows(); rows != uint64(n) {
		return 0, fmt.Errorf("the Go dataset has %d rows, want %d", rows, n)
	}
	return s, nil
}

// peerWriteResult is the SDK's createTable time and the time its files
// then took to sync.
type peerWriteResult struct {
	Ms, SyncMs float64
	Rows       int
}

// peerWrite has the SDK create table t in db from the workload at data,
// at storage version ("" for its default), and checks what it wrote.
func peerWrite(db, data, version string, n int) (peerWriteResult, error) {
	var res peerWriteResult
	if err := lancedb("lancewrite", map[string]any{"dir": db, "table": "t", "file": data, "version": version}, &res); err != nil {
		return res, err
	}
	if res.Rows != n {
		return res, fmt.Errorf("the SDK wrote %d rows, want %d", res.Rows, n)
	}
	d, err := table.Open(context.Background(), blob.NewDir(filepath.Join(db, "t.lance")), table.Options{})
	if err != nil {
		return res, err
	}
	if want := cmp.Or(version, "2.2"); d.Manifest().DataFormat.Version != want {
		return res, fmt.Errorf("the SDK wrote format %s, want %s", d.Manifest().DataFormat.Version, want)
	}
	return res, nil
}

// cost is what one operation took: wall-clock time, and the CPU time of
// the process doing it (all its threads: the SDK's Rust ones included).
// On a busy machine the CPU time says which side does less work, the
// wall time what a caller waits.
type cost struct{ wall, cpu time.Duration }

// medianCost returns the median wall and CPU times of cs.
func medianCost(cs []cost) cost {
	var wall, cpu latencies
	for _, c := range cs {
		wall, cpu = append(wall, c.wall), append(cpu, c.cpu)
	}
	return cost{wall.percentile(.5), cpu.percentile(.5)}
}

// costOf runs fn and returns what it cost.
func costOf(fn func() error) (cost, error) {
	cpu0, t0 := cputime.Process(), time.Now()
	err := fn()
	return cost{time.Since(t0), cputime.Process() - cpu0}, err
}

// peerCosts pairs the SDK's wall and CPU milliseconds.
func peerCosts(wallMs, cpuMs []float64) ([]cost, error) {
	if len(wallMs) != len(cpuMs) {
		return nil, fmt.Errorf("the SDK gave %d times and %d CPU times", len(wallMs), len(cpuMs))
	}
	wall, cpu := msLatencies(wallMs), msLatencies(cpuMs)
	out := make([]cost, len(wall))
	for i := range out {
		out[i] = cost{wall[i], cpu[i]}
	}
	return out, nil
}

// compareScans times scanning columns (nil for all) of table t in db,
// iters times per round, by Go and by the SDK in turn; it returns each
// side's median cost. Go's first scan, not counted, warms the page cache
// for both.
func compareScans(ctx context.Context, db string, columns []string, n, rounds, iters int) (ours, peer cost, err error) {
	root := filepath.Join(db, "t.lance")
	if err := goScan(ctx, root, columns, n); err != nil {
		return cost{}, cost{}, err
	}
	var o, p []cost
	err = alternate(rounds, func() error {
		for range iters {
			c, err := costOf(func() error { return goScan(ctx, root, columns, n) })
			if err != nil {
				return err
			}
			o = append(o, c)
		}
		return nil
	}, func() error {
		var res struct {
			Lat  []float64 `json:"lat"`
			CPU  []float64 `json:"cpu"`
			Rows int       `json:"rows"`
		}
		if err := lancedb("lancescan", map[string]any{"dir": db, "table": "t", "columns": columns, "iterations": iters, "warmup": min(iters-1, 1)}, &res); err != nil {
			return err
		}
		if res.Rows != n {
			return fmt.Errorf("the SDK scanned %d rows, want %d", res.Rows, n)
		}
		cs, err := peerCosts(res.Lat, res.CPU)
		p = append(p, cs...)
		return err
	})
	return medianCost(o), medianCost(p), err
}

// goScan opens the dataset at root and reads every row of columns (nil
// for all), batch by batch, as a full scan does, and checks it read n.
func goScan(ctx context.Context, root string, columns []string, n int) error {
	d, err := table.Open(ctx, blob.NewDir(root), table.Options{})
	if err != nil {
		return err
	}
	var proj *schema.Schema
	if columns != nil {
		if proj, err = d.Manifest().Schema.Project(columns...); err != nil {
			return err
		}
	}
	rows := 0
	for _, f := range d.Manifest().Fragments {
		fr, err := d.OpenFragment(ctx, f, proj, nil)
		if err != nil {
			return err
		}
		for b, err := range fr.Scan(ctx, 0) {
			if err != nil {
				return err
			}
			rows += int(b.Rows.NumRows())
			b.Rows.Release()
		}
	}
	if rows != n {
		return fmt.Errorf("Go scanned %d rows, want %d", rows, n)
	}
	return nil
}

// compareTakes times taking the rows at offsets (all columns) from table t
// in db, iters times per round, by Go and by the SDK in turn, each from a
// dataset opened once; it returns each side's median cost, after checking
// that both took the same ids in the same order.
func compareTakes(ctx context.Context, db string, offsets []uint64, rounds, iters int) (ours, peer cost, err error) {
	d, err := table.Open(ctx, blob.NewDir(filepath.Join(db, "t.lance")), table.Options{})
	if err != nil {
		return cost{}, cost{}, err
	}
	t, err := openTaker(ctx, d)
	if err != nil {
		return cost{}, cost{}, err
	}
	var goIDs []int64
	var o, p []cost
	err = alternate(rounds, func() error {
		for i := range iters + 1 { // the first warms up
			var rec arrow.RecordBatch
			c, err := costOf(func() (err error) {
				rec, err = t.take(ctx, offsets)
				return err
			})
			if err != nil {
				return err
			}
			if i > 0 {
				o = append(o, c)
			}
			goIDs = slices.Clone(rec.Column(0).(*array.Int64).Int64Values())
			rec.Release()
		}
		return nil
	}, func() error {
		var res struct {
			Lat []float64 `json:"lat"`
			CPU []float64 `json:"cpu"`
			IDs []int64   `json:"ids"`
		}
		if err := lancedb("lancetake", map[string]any{"dir": db, "table": "t", "offsets": offsets, "iterations": iters, "warmup": 1}, &res); err != nil {
			return err
		}
		if !slices.Equal(res.IDs, goIDs) && goIDs != nil {
			return fmt.Errorf("the SDK took other ids than Go (%d and %d of them)", len(res.IDs), len(goIDs))
		}
		cs, err := peerCosts(res.Lat, res.CPU)
		p = append(p, cs...)
		return err
	})
	if err == nil && !slices.Equal(goIDs, asInt64(offsets)) {
		err = fmt.Errorf("Go took other ids than the offsets asked for")
	}
	return medianCost(o), medianCost(p), err
}

func asInt64(u []uint64) []int64 {
	out := make([]int64, len(u))
	for i, v := range u {
		out[i] = int64(v)
	}
	return out
}

// taker takes rows by dataset offset (a dataset without deleted rows):
// offset o is row o - start of the fragment starting at or below it.
type taker struct {
	readers []*table.FragmentReader
	starts  []uint64 // first offset of each fragment
	rows    uint64
}

func openTaker(ctx context.Context, d *table.Dataset) (*taker, error) {
	t := &taker{}
	for _, f := range d.Manifest().Fragments {
		if f.Deletion != nil {
			return nil, fmt.Errorf("fragment %d has deleted rows", f.ID)
		}
		fr, err := d.OpenFragment(ctx, f, nil, nil)
		if err != nil {
			return nil, err
		}
		t.readers = append(t.readers, fr)
		t.starts = append(t.starts, t.rows)
		t.rows += f.PhysicalRows
	}
	return t, nil
}

// take returns the rows at offsets, in that order: each run of offsets in
// one fragment is one Take, and runs are concatenated.
func (t *taker) take(ctx context.Context, offsets []uint64) (arrow.RecordBatch, error) {
	var parts []arrow.RecordBatch
	defer func() { releaseAll(parts) }()
	for i := 0; i < len(offsets); {
		if offsets[i] >= t.rows {
			return nil, fmt.Errorf("offset %d of %d rows", offsets[i], t.rows)
		}
		k := 0
		for k+1 < len(t.starts) && t.starts[k+1] <= offsets[i] {
			k++
		}
		end := t.rows
		if k+1 < len(t.starts) {
			end = t.starts[k+1]
		}
		var local []uint64
		for ; i < len(offsets) && offsets[i] >= t.starts[k] && offsets[i] < end; i++ {
			local = append(local, offsets[i]-t.starts[k])
		}
		rec, err := t.readers[k].Take(ctx, local)
		if err != nil {
			return nil, err
		}
		parts = append(parts, rec)
	}
	if len(parts) == 1 {
		parts[0].Retain()
		return parts[0], nil
	}
	return concatBatches(parts)
}

// concatBatches joins batches of one schema into one.
func concatBatches(parts []arrow.RecordBatch) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, parts[0].NumCols())
	var rows int64
	for _, p := range parts {
		rows += p.NumRows()
	}
	for c := range cols {
		arrs := make([]arrow.Array, len(parts))
		for i, p := range parts {
			arrs[i] = p.Column(c)
		}
		a, err := array.Concatenate(arrs, nil)
		if err != nil {
			for _, done := range cols[:c] {
				done.Release()
			}
			return nil, err
		}
		cols[c] = a
	}
	rec := array.NewRecordBatch(parts[0].Schema(), cols, rows)
	for _, c := range cols {
		c.Release()
	}
	return rec, nil
}

// alternate runs rounds of ours and peer, each round starting with the one
// that went second in the round before.
func alternate(rounds int, ours, peer func() error) error {
	for round := range rounds {
		first, second := ours, peer
		if round%2 == 1 {
			first, second = peer, ours
		}
		if err := first(); err != nil {
			return err
		}
		if err := second(); err != nil {
			return err
		}
	}
	return nil
}

// median returns the middle value of xs (the mean of the two middle ones
// for an even count).
func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
