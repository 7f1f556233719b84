package file_test

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/lancens/lancens/lance/blob"
	"github.com/lancens/lancens/lance/file"
	"github.com/lancens/lancens/lance/file/filebench"
)

// benchRows is the workload's size: LANCE_BENCH_ROWS, or 20,000 rows
// (64 MB) by default; the lance bench suite runs 1,000,000.
func benchRows(b *testing.B) int {
	if v := os.Getenv("LANCE_BENCH_ROWS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			b.Fatalf("LANCE_BENCH_ROWS=%q is not a row count", v)
		}
		return n
	}
	return 20000
}

// reportCPU adds the process's CPU time per operation since cpu0 (a
// processCPU reading) to b's results, as cpu-ms/op: on a shared machine
// wall time measures the neighbours' load as much as the code.
func reportCPU(b *testing.B, cpu0 time.Duration) {
	if used := processCPU(b) - cpu0; used > 0 && b.N > 0 {
		b.ReportMetric(float64(used.Microseconds())/1000/float64(b.N), "cpu-ms/op")
	}
}

// BenchmarkWrite writes the workload (id, 100-byte text, 768-d vector) to
// a local file (synced, as blob.Dir does) in batches of 10,000 rows; MB/s
// counts the rows' values.
func BenchmarkWrite(b *testing.B) {
	rows := benchRows(b)
	store := blob.NewDir(b.TempDir())
	batch := filebench.Batch(0, 10000)
	defer batch.Release()
	b.SetBytes(int64(rows) * filebench.RowBytes)
	cpu0 := processCPU(b)
	for b.Loop() {
		if _, err := filebench.Write(context.Background(), store, "bench.lance", rows, batch); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpu0)
}

// benchFile writes the workload once for the read benchmarks.
func benchFile(b *testing.B) (blob.Store, int) {
	rows := benchRows(b)
	store := blob.NewDir(b.TempDir())
	batch := filebench.Batch(0, 10000)
	defer batch.Release()
	if _, err := filebench.Write(context.Background(), store, "bench.lance", rows, batch); err != nil {
		b.Fatal(err)
	}
	return store, rows
}

// BenchmarkScan reads the whole file (Full) and two columns (IDText) in
// batches of 8,192 rows.
func BenchmarkScan(b *testing.B) {
	store, rows := benchFile(b)
	for _, c := range []struct {
		name    string
		columns []string
		bytes   int64
	}{
		{"Full", nil, filebench.RowBytes},
		{"IDText", []string{"id", "text"}, 8 + filebench.TextBytes},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(rows) * c.bytes)
			cpu0 := processCPU(b)
			for b.Loop() {
				n, err := filebench.Scan(context.Background(), store, "bench.lance", 8192, c.columns...)
				if err != nil || n != int64(rows) {
					b.Fatalf("Scan = %d rows, %v; want %d", n, err, rows)
				}
			}
			reportCPU(b, cpu0)
		})
	}
}

// BenchmarkTake takes 1,000 random rows (all columns) from an open file.
func BenchmarkTake(b *testing.B) {
	store, rows := benchFile(b)
	ctx := context.Background()
	r, err := file.Open(ctx, store, "bench.lance", nil)
	if err != nil {
		b.Fatal(err)
	}
	offsets := filebench.TakeRows(rows, 1000, 1)
	cpu0 := processCPU(b)
	for b.Loop() {
		if err := filebench.Take(ctx, r, offsets); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpu0)
}
