package blob_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/lancens/lancens/lance/blob"
	"github.com/lancens/lancens/lance/blob/blobtest"
)

func TestDir(t *testing.T) {
	blobtest.Run(t, func(t *testing.T) blob.Store { return blob.NewDir(filepath.Join(t.TempDir(), "root")) })
}

// TestDirReadsRangesTogether checks that Dir, and a sub-store of it, read
// many ranges in one call (lance/file's takes depend on it: a range at a
// time opens the file once per row).
func TestDirReadsRangesTogether(t *testing.T) {
	d := blob.NewDir(t.TempDir())
	for _, s := range []blob.Store{d, blob.Sub(d, "t.lance")} {
		if _, ok := s.(blob.RangesReader); !ok {
			t.Errorf("%T is not a blob.RangesReader", s)
		}
	}
}

// TestDirRefusesLinksOut checks that a symbolic link planted below the
// directory does not lead a read or a write outside it.
func TestDirRefusesLinksOut(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	outside := filepath.Join(base, "outside")
	root := filepath.Join(base, "root")
	for _, d := range []string{outside, root} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	s := blob.NewDir(root)
	if _, err := s.ReadRange(ctx, "link/secret", 0, 6); err == nil {
		t.Error("read through a link out of the directory succeeded")
	}
	if err := blob.Put(ctx, s, "link/planted", []byte("x")); err == nil {
		t.Error("write through a link out of the directory succeeded")
	}
	if _, err := os.Stat(filepath.Join(outside, "planted")); err == nil {
		t.Error("a file appeared outside the directory")
	}
}

// TestDirPutUnsynced checks that PutUnsynced stores a whole object,
// replacing what was there and leaving no temporary file in listings,
// without a sync, where Put syncs: a staged manifest is synced once, when
// it is published.
func TestDirPutUnsynced(t *testing.T) {
	ctx := context.Background()
	syncs := blob.CountSyncs(t)
	d := blob.NewDir(t.TempDir())
	for _, tc := range []struct {
		name string
		s    blob.Store
	}{
		{"dir", d},
		{"sub-store", blob.Sub(d, "t.lance")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const p = "_versions/staged.manifest"
			syncs.Store(0)
			if err := blob.Put(ctx, tc.s, p, []byte("old")); err != nil {
				t.Fatal(err)
			}
			if syncs.Load() == 0 {
				t.Fatal("Put made no sync: the count does not see Dir's syncs")
			}
			syncs.Store(0)
			if err := blob.PutUnsynced(ctx, tc.s, p, []byte("new content")); err != nil {
				t.Fatal(err)
			}
			if n := syncs.Load(); n != 0 {
				t.Errorf("PutUnsynced made %d syncs, want 0", n)
			}
			got, err := blob.ReadAll(ctx, tc.s, p, 100)
			if err != nil || string(got) != "new content" {
				t.Errorf("read back %q, %v; want %q", got, err, "new content")
			}
			var names []string
			for info, err := range tc.s.List(ctx, "_versions/") {
				if err != nil {
					t.Fatal(err)
				}
				names = append(names, info.Path)
			}
			if len(names) != 1 || names[0] != p {
				t.Errorf("listing %v, want [%s]", names, p)
			}
			if err := blob.PutUnsynced(ctx, tc.s, "../out", []byte("x")); err == nil {
				t.Error("PutUnsynced of a path out of the store succeeded")
			}
		})
	}
}
