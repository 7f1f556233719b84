package file_test

import (
	"context"
	"sync/atomic"
	"testing"

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
