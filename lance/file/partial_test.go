package file_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lancens/lancens/lance/blob"
	"github.com/lancens/lancens/lance/file"
	"github.com/lancens/lancens/lance/file/filebench"
)

// countingStore counts the bytes read through it.
type countingStore struct {
	blob.Store
	read atomic.Int64
}

func (c *countingStore) ReadRange(ctx context.Context, p string, off, n int64) ([]byte, error) {
	c.read.Add(n)
	return c.Store.ReadRange(ctx, p, off, n)
}

// TestReadsOnlyWhatItNeeds checks that opening a file, taking rows,
// reading a range and reading one column fetch a small part of it.
func TestReadsOnlyWhatItNeeds(t *testing.T) {
	ctx := context.Background()
	dir := blob.NewDir(t.TempDir())
	batch := filebench.Batch(0, 2000)
	defer batch.Release()
	written, err := filebench.Write(ctx, dir, "f.lance", 6000, batch) // about 19 MB
	if err != nil {
		t.Fatal(err)
	}
	store := &countingStore{Store: dir}
	r, err := file.Open(ctx, store, "f.lance", &file.ReadOptions{Size: written.Size})
	if err != nil {
		t.Fatal(err)
	}
	if n := store.read.Load(); n > 64<<10 {
		t.Errorf("Open read %d bytes, more than the 64 KiB tail", n)
	}
	cases := []struct {
		name string
		read func() error
		max  int64
	}{
		{"take 5 rows", func() error {
			_, err := r.Take(ctx, nil, []uint64{5, 4000, 17, 5999, 2500})
			return err
		}, 5 * (filebench.RowBytes + 3*4096)},
		{"10 rows", func() error {
			_, err := r.ReadRange(ctx, nil, 3000, 3010)
			return err
		}, 10*filebench.RowBytes + 3*4096},
		{"the ids", func() error {
			proj, err := r.Schema().Project("id")
			if err != nil {
				return err
			}
			_, err = r.ReadRange(ctx, proj, 0, r.NumRows())
			return err
		}, 8*6000 + 4096},
	}
	for _, c := range cases {
		store.read.Store(0)
		if err := c.read(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if n := store.read.Load(); n > c.max {
			t.Errorf("%s read %d bytes of a %d-byte file, want at most %d", c.name, n, written.Size, c.max)
		}
	}
}

// requestCountingStore counts the requests that reach a directory store,
// whether for one range or many.
type requestCountingStore struct {
	*blob.Dir
	requests atomic.Int64
}

func (c *requestCountingStore) ReadRange(ctx context.Context, p string, off, n int64) ([]byte, error) {
	c.requests.Add(1)
	return c.Dir.ReadRange(ctx, p, off, n)
}

func (c *requestCountingStore) ReadRanges(ctx context.Context, p string, ranges []blob.Range) ([][]byte, error) {
	c.requests.Add(1)
	return c.Dir.ReadRanges(ctx, p, ranges)
}

// TestTakeReadsRowsTogether checks that taking scattered rows asks a store
// that reads many ranges at once (blob.RangesReader) for each page's rows
// together, not row by row: a local file would be opened once per row.
func TestTakeReadsRowsTogether(t *testing.T) {
	ctx := context.Background()
	dir := blob.NewDir(t.TempDir())
	batch := filebench.Batch(0, 2000)
	defer batch.Release()
	if _, err := filebench.Write(ctx, dir, "f.lance", 6000, batch); err != nil {
		t.Fatal(err)
	}
	store := &requestCountingStore{Dir: dir}
	r, err := file.Open(ctx, store, "f.lance", nil)
	if err != nil {
		t.Fatal(err)
	}
	var rows []uint64
	for row := uint64(0); row < 6000; row += 12 { // 36 KB of vectors apart
		rows = append(rows, row)
	}
	store.requests.Store(0)
	rec, err := r.Take(ctx, nil, rows)
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	ids := rec.Column(0).(*array.Int64).Int64Values()
	for i, row := range rows {
		if ids[i] != int64(row%2000) {
			t.Fatalf("row %d has id %d, want %d", row, ids[i], row%2000)
		}
	}
	// Three columns, of a few pages each, the text's in two buffers.
	if n := store.requests.Load(); n > 20 {
		t.Errorf("taking %d rows made %d requests, want at most 20", len(rows), n)
	}
}

// overlapStore holds each request until another is in flight at the same
// time (or a few seconds have passed), and records whether two ever were.
type overlapStore struct {
	*blob.Dir
	mu       sync.Mutex
	inFlight int
	overlap  chan struct{} // closed once two requests overlapped
}

func (o *overlapStore) overlapped() bool {
	select {
	case <-o.overlap:
		return true
	default:
		return false
	}
}

func (o *overlapStore) ReadRanges(ctx context.Context, p string, ranges []blob.Range) ([][]byte, error) {
	o.mu.Lock()
	o.inFlight++
	if o.inFlight > 1 && !o.overlapped() {
		close(o.overlap)
	}
	o.mu.Unlock()
	defer func() {
		o.mu.Lock()
		o.inFlight--
		o.mu.Unlock()
	}()
	select {
	case <-o.overlap:
	case <-time.After(3 * time.Second):
	}
	return o.Dir.ReadRanges(ctx, p, ranges)
}

// TestTakeReadsPagesAtOnce checks that taking rows from several pages of
// one column reads those pages concurrently, so that their requests'
// latencies (object storage, a file not in the page cache) overlap.
func TestTakeReadsPagesAtOnce(t *testing.T) {
	ctx := context.Background()
	dir := blob.NewDir(t.TempDir())
	batch := filebench.Batch(0, 2000)
	defer batch.Release()
	if _, err := filebench.Write(ctx, dir, "f.lance", 6000, batch); err != nil { // 3 pages of vectors
		t.Fatal(err)
	}
	store := &overlapStore{Dir: dir, overlap: make(chan struct{})}
	r, err := file.Open(ctx, store, "f.lance", nil)
	if err != nil {
		t.Fatal(err)
	}
	proj, err := r.Schema().Project("vector")
	if err != nil {
		t.Fatal(err)
	}
	rec, err := r.Take(ctx, proj, []uint64{10, 3000, 5990})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	if rec.NumRows() != 3 {
		t.Fatalf("took %d rows, want 3", rec.NumRows())
	}
	if !store.overlapped() {
		t.Error("the pages of one column were read one after the other")
	}
}
