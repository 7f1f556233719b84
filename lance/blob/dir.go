package blob

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"os"
	"path"
	"strings"
)

// Dir is a Store over a local directory: object a/b is the file a/b below
// it. Every operation goes through an os.Root on the directory, so no
// path, and no symbolic link planted below it, reaches outside it. Writes
// go to a temporary file beside their destination (named with tempPrefix,
// which listings skip), which takes its name by a hard link (a rename when
// the name is taken) and is synced, so an object is durable once Close or
// PutIfAbsent returns (see dirWriter.Close).
type Dir struct {
	root string
}

// syncFile syncs a file, or a directory, to disk (a variable so that tests
// can count syncs).
var syncFile = (*os.File).Sync

// tempPrefix starts the names of files being written.
const tempPrefix = ".blob-tmp-"

// NewDir returns the Store of directory root, which is created on the
// first write if missing.
func NewDir(root string) *Dir { return &Dir{root: root} }

var (
	_ Store          = (*Dir)(nil)
	_ RangesReader   = (*Dir)(nil)
	_ UnsyncedPutter = (*Dir)(nil)
)

// open returns a handle on the directory, creating it when create is set.
// It returns an error wrapping ErrNotFound when it is missing otherwise.
func (d *Dir) open(create bool) (*os.Root, error) {
	if create {
		if err := os.MkdirAll(d.root, 0o755); err != nil {
			return nil, err
		}
	}
	r, err := os.OpenRoot(d.root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: directory %s", ErrNotFound, d.root)
	}
	return r, err
}

func notFound(p string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: %s", ErrNotFound, p)
	}
	return err
}

// Stat implements Store.
func (d *Dir) Stat(_ context.Context, p string) (Info, error) {
	if _, err := CleanPath(p); err != nil {
		return Info{}, err
	}
	r, err := d.open(false)
	if err != nil {
		return Info{}, err
	}
	defer r.Close()
	fi, err := r.Stat(p)
	if err != nil {
		return Info{}, notFound(p, err)
	}
	if !fi.Mode().IsRegular() {
		return Info{}, fmt.Errorf("%w: %s is not a regular file", ErrNotFound, p)
	}
	return Info{Path: p, Size: fi.Size(), ModTime: fi.ModTime()}, nil
}

// ReadRange implements Store.
func (d *Dir) ReadRange(ctx context.Context, p string, off, n int64) ([]byte, error) {
	b, err := d.ReadRanges(ctx, p, []Range{{Off: off, N: n}})
	if err != nil {
		return nil, err
	}
	return b[0], nil
}

// ReadRanges implements RangesReader: the file is opened once, and the
// ranges are read into one allocation.
func (d *Dir) ReadRanges(_ context.Context, p string, ranges []Range) ([][]byte, error) {
	if _, err := CleanPath(p); err != nil {
		return nil, err
	}
	for _, rg := range ranges {
		if rg.Off < 0 || rg.N < 0 {
			return nil, fmt.Errorf("read of %s: negative range %d+%d", p, rg.Off, rg.N)
		}
	}
	r, err := d.open(false)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	f, err := r.Open(p)
	if err != nil {
		return nil, notFound(p, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s is not a regular file", ErrNotFound, p)
	}
	var total int64
	for _, rg := range ranges {
		if rg.Off+rg.N > fi.Size() || rg.Off+rg.N < rg.Off {
			return nil, fmt.Errorf("read of %s at %d+%d: object has %d bytes: %w", p, rg.Off, rg.N, fi.Size(), io.ErrUnexpectedEOF)
		}
		if total += rg.N; total < 0 {
			return nil, fmt.Errorf("read of %s: %d ranges of more than 2^63 bytes", p, len(ranges))
		}
	}
	buf := make([]byte, total)
	out := make([][]byte, len(ranges))
	for i, rg := range ranges {
		b := buf[:rg.N:rg.N]
		buf = buf[rg.N:]
		if _, err := f.ReadAt(b, rg.Off); err != nil && !(errors.Is(err, io.EOF) && rg.N == 0) {
			return nil, fmt.Errorf("read of %s at %d+%d: %w", p, rg.Off, rg.N, err)
		}
		out[i] = b
	}
	return out, nil
}

// Create implements Store.
func (d *Dir) Create(_ context.Context, p string) (Writer, error) {
	r, f, tmp, err := d.startTemp(p)
	if err != nil {
		return nil, err
	}
	return &dirWriter{root: r, f: f, tmp: tmp, dst: p}, nil
}

// startTemp checks p, opens the directory's root and creates a temporary
// file beside p (createTemp), the start of every write: the caller closes
// the root and the file and renames or removes tmp. It returns the errors
// of CleanPath, of opening the root and of createTemp, with nothing left
// open.
func (d *Dir) startTemp(p string) (r *os.Root, f *os.File, tmp string, err error) {
	if _, err := CleanPath(p); err != nil {
		return nil, nil, "", err
	}
	if r, err = d.open(true); err != nil {
		return nil, nil, "", err
	}
	if f, tmp, err = createTemp(r, p); err != nil {
		r.Close()
		return nil, nil, "", err
	}
	return r, f, tmp, nil
}

// createTemp creates the parent directories of p and a new temporary file
// beside it, returning the file and its name.
func createTemp(r *os.Root, p string) (*os.File, string, error) {
	dir := path.Dir(p)
	if dir != "." {
		if err := r.MkdirAll(dir, 0o755); err != nil {
			return nil, "", err
		}
	}
	var rnd [8]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return nil, "", err
	}
	tmp := path.Join(dir, tempPrefix+hex.EncodeToString(rnd[:])+"-"+path.Base(p))
	f, err := r.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	return f, tmp, err
}

type dirWriter struct {
	root *os.Root
	f    *os.File
	// written counts the bytes written, flushed those whose writeback
	// has started.
	written, flushed int64
	tmp              string
	dst              string
	closed           bool
}

func (w *dirWriter) Write(b []byte) (int, error) {
	n, err := w.f.Write(b)
	w.written += int64(n)
	if w.written-w.flushed >= writebackBytes {
		// The disk starts on what is written while the rest is being
		// encoded; the sync at Close then waits only for the tail.
		startWriteback(w.f, w.flushed, w.written-w.flushed)
		w.flushed = w.written
	}
	return n, err
}

// writebackBytes is how much of an object being written is handed to the
// disk at a time, before Close syncs it.
const writebackBytes = 1 << 20

// Close makes the object durable under its name. A new name costs one
// sync: the file is linked under it, then synced, which commits the link
// with the data (linking changes the file's link count in the same
// file-system transaction that adds the directory entry, and ext4, XFS
// and btrfs journal it so). An existing name is replaced by a rename,
// which the file's sync does not cover: the directory is synced as well.
func (w *dirWriter) Close() error {
	if w.closed {
		return errors.New("blob: writer already closed")
	}
	w.closed = true
	defer w.root.Close()
	err := w.root.Link(w.tmp, w.dst)
	if err == nil {
		err = errors.Join(syncFile(w.f), w.f.Close())
		if err != nil {
			_ = w.root.Remove(w.dst)
		}
		return errors.Join(err, ignoreMissing(w.root.Remove(w.tmp)))
	}
	if !errors.Is(err, fs.ErrExist) {
		return errors.Join(err, w.f.Close(), ignoreMissing(w.root.Remove(w.tmp)))
	}
	err = errors.Join(syncFile(w.f), w.f.Close())
	if err == nil {
		err = w.root.Rename(w.tmp, w.dst)
	}
	if err == nil {
		return syncDir(w.root, path.Dir(w.dst))
	}
	return errors.Join(err, ignoreMissing(w.root.Remove(w.tmp)))
}

func (w *dirWriter) Abort() error {
	if w.closed {
		return nil
	}
	w.closed = true
	defer w.root.Close()
	return errors.Join(w.f.Close(), ignoreMissing(w.root.Remove(w.tmp)))
}

// PutIfAbsent implements Store: the data is written under a temporary
// name, hard-linked to p, which fails if p exists, then synced.
func (d *Dir) PutIfAbsent(_ context.Context, p string, data []byte) error {
	r, f, tmp, err := d.startTemp(p)
	if err != nil {
		return err
	}
	defer r.Close()
	defer func() { _ = ignoreMissing(r.Remove(tmp)) }()
	defer f.Close()
	if _, err := f.Write(data); err != nil {
		return err
	}
	// One sync makes the new name durable with the data (see Close).
	if err := r.Link(tmp, p); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%w: %s", ErrExists, p)
		}
		return err
	}
	if err := syncFile(f); err != nil {
		_ = r.Remove(p)
		return err
	}
	return nil
}

// PutUnsynced implements UnsyncedPutter: the data is written under a
// temporary name and renamed to p, with no sync; the object is whole and
// visible once the rename is done, and the kernel keeps it if the process
// dies.
func (d *Dir) PutUnsynced(_ context.Context, p string, data []byte) error {
	r, f, tmp, err := d.startTemp(p)
	if err != nil {
		return err
	}
	defer r.Close()
	_, err = f.Write(data)
	if err = errors.Join(err, f.Close()); err == nil {
		err = r.Rename(tmp, p)
	}
	if err != nil {
		return errors.Join(err, ignoreMissing(r.Remove(tmp)))
	}
	return nil
}

// syncDir makes the names in directory dir durable.
func syncDir(r *os.Root, dir string) error {
	f, err := r.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(syncFile(f), f.Close())
}

func ignoreMissing(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// List implements Store. Files being written (tempPrefix) and anything
// that is not a regular file are skipped.
func (d *Dir) List(_ context.Context, prefix string) iter.Seq2[Info, error] {
	return func(yield func(Info, error) bool) {
		r, err := d.open(false)
		if errors.Is(err, ErrNotFound) {
			return
		}
		if err != nil {
			yield(Info{}, err)
			return
		}
		defer r.Close()
		start := "."
		if i := strings.LastIndex(prefix, "/"); i > 0 {
			start = prefix[:i]
			if _, err := CleanPath(start); err != nil {
				yield(Info{}, err)
				return
			}
		}
		err = fs.WalkDir(r.FS(), start, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) && p == start {
					return fs.SkipAll
				}
				return err
			}
			if !e.Type().IsRegular() || strings.HasPrefix(e.Name(), tempPrefix) || !strings.HasPrefix(p, prefix) {
				return nil
			}
			fi, err := e.Info()
			if err != nil {
				return notFound(p, err)
			}
			if !yield(Info{Path: p, Size: fi.Size(), ModTime: fi.ModTime()}, nil) {
				return fs.SkipAll
			}
			return nil
		})
		if err != nil {
			yield(Info{}, err)
		}
	}
}

// Delete implements Store.
func (d *Dir) Delete(_ context.Context, p string) error {
	if _, err := CleanPath(p); err != nil {
		return err
	}
	r, err := d.open(false)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	defer r.Close()
	return ignoreMissing(r.Remove(p))
}
