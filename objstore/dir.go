package objstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
)

// Dir is a Bucket over a local directory: the key a/b/c is the file
// a/b/c below it. Every operation goes through an os.Root handle on the
// directory, so no key, and no symbolic link swapped in meanwhile, reaches
// anything outside it; objects are regular files only. Conditional
// operations are atomic against other callers in the same process only
// when those callers serialise them (lancens holds a per-table lock).
type Dir struct {
	dir string
	// noSync says Publish leaves what it links in the operating system's
	// cache (see NewDirNoSync).
	noSync bool
}

// NewDir returns the Bucket of the directory dir, which need not exist
// yet: operations on a missing directory find no objects. Its Publish
// syncs what it publishes to disk before it returns.
func NewDir(dir string) *Dir { return &Dir{dir: dir} }

// NewDirNoSync returns the Bucket of the directory dir whose Publish does
// not sync: what it publishes is in the operating system's cache when it
// returns, which survives a crash of the calling process (the kernel
// keeps its writes and links, and every later reader sees them) but not
// necessarily a power loss or a crash of the operating system.
func NewDirNoSync(dir string) *Dir { return &Dir{dir: dir, noSync: true} }

// syncFile syncs a file, or a directory, to disk.
var syncFile = (*os.File).Sync

var _ Bucket = (*Dir)(nil)

// open returns a handle on the directory; ErrNotFound when it is missing.
func (d *Dir) open(op, key string) (*os.Root, error) {
	r, err := os.OpenRoot(d.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, opError(op, key, ErrNotFound)
	}
	return r, opError(op, key, err)
}

// name turns a key into a path for os.Root, refusing what is not a clean
// relative path.
func name(op, key string) (string, error) {
	if key == "" || strings.HasPrefix(key, "/") || path.Clean(key) != key {
		return "", opError(op, key, errors.New("not a clean relative key"))
	}
	return key, nil
}

// statRegular returns the Info of a regular file, and an error wrapping
// ErrNotFound for anything else (a link, a directory): only regular files
// are objects.
func statRegular(info fs.FileInfo) (Info, error) {
	if !info.Mode().IsRegular() {
		return Info{}, fmt.Errorf("%w: not a regular file (%s)", ErrNotFound, info.Mode().Type())
	}
	return Info{Size: info.Size(), ETag: fileTag(info)}, nil
}

func notFound(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return ErrNotFound
	}
	return err
}

// Stat implements Bucket.
func (d *Dir) Stat(_ context.Context, key string) (Info, error) {
	n, err := name("stat", key)
	if err != nil {
		return Info{}, err
	}
	r, err := d.open("stat", key)
	if err != nil {
		return Info{}, err
	}
	defer r.Close()
	info, err := r.Lstat(n)
	if err != nil {
		return Info{}, opError("stat", key, notFound(err))
	}
	out, err := statRegular(info)
	return out, opError("stat", key, err)
}

// Get implements Bucket.
func (d *Dir) Get(_ context.Context, key string, limit int64) ([]byte, Info, error) {
	n, err := name("get", key)
	if err != nil {
		return nil, Info{}, err
	}
	r, err := d.open("get", key)
	if err != nil {
		return nil, Info{}, err
	}
	defer r.Close()
	if info, err := r.Lstat(n); err != nil {
		return nil, Info{}, opError("get", key, notFound(err))
	} else if _, err := statRegular(info); err != nil {
		return nil, Info{}, opError("get", key, err)
	}
	f, err := r.Open(n)
	if err != nil {
		return nil, Info{}, opError("get", key, notFound(err))
	}
	defer f.Close()
	data, info, err := readRegular(f, limit)
	return data, info, opError("get", key, err)
}

// readRegular reads an open regular file of at most limit bytes.
func readRegular(f *os.File, limit int64) ([]byte, Info, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, Info{}, err
	}
	info, err := statRegular(fi)
	if err != nil {
		return nil, Info{}, err
	}
	if info.Size > limit {
		return nil, Info{}, fmt.Errorf("%w: %d bytes, at most %d", ErrTooLarge, info.Size, limit)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, Info{}, err
	}
	if int64(len(data)) > limit {
		return nil, Info{}, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, limit)
	}
	return data, info, nil
}

// Publish implements Bucket: the file at src is hard-linked under a
// temporary name beside dst and checked to be the file opened (a link
// swapped in for src is refused, ErrNotFound), then linked under dst
// (ErrPrecondition if dst exists) or, with ifMatch, renamed over dst
// (ErrPrecondition unless dst holds that content); then the file is
// synced (and, after a rename, dst's directory too), unless the Dir was
// made by NewDirNoSync. Nothing at dst is ever removed.
//
// One sync makes a new link durable: linking changes the file's link
// count in the same file-system transaction that adds the directory
// entry, and syncing the file commits that transaction with the file's
// data (ext4, XFS and btrfs journal it so). A rename over dst changes the
// directory in a way the file's sync need not cover, so that path syncs
// the directory as well.
func (d *Dir) Publish(_ context.Context, src, dst, ifMatch string, limit int64) (Info, error) {
	s, err := name("publish", src)
	if err != nil {
		return Info{}, err
	}
	t, err := name("publish", dst)
	if err != nil {
		return Info{}, err
	}
	r, err := d.open("publish", src)
	if err != nil {
		return Info{}, err
	}
	defer r.Close()
	// Lance stages a manifest beside its final name: a root on that
	// directory spares opening it again for every step.
	if dir := path.Dir(s); dir != "." && dir == path.Dir(t) {
		sub, err := r.OpenRoot(dir)
		if err != nil {
			return Info{}, opError("publish", src, notFound(err))
		}
		defer sub.Close()
		r, s, t = sub, path.Base(s), path.Base(t)
	}
	info, err := publishFile(r, s, t, ifMatch, limit, !d.noSync)
	return info, opError("publish", dst, err)
}

// publishFile publishes src under dst below r (see Dir.Publish), syncing
// what it changed when sync is set.
func publishFile(r *os.Root, src, dst, ifMatch string, limit int64, sync bool) (Info, error) {
	if l, err := r.Lstat(src); err != nil {
		return Info{}, notFound(err)
	} else if _, err := statRegular(l); err != nil {
		return Info{}, err
	}
	f, err := r.Open(src)
	if err != nil {
		return Info{}, notFound(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return Info{}, err
	}
	if _, err := statRegular(fi); err != nil {
		return Info{}, err
	}
	if fi.Size() > limit {
		return Info{}, fmt.Errorf("%w: %d bytes, at most %d", ErrTooLarge, fi.Size(), limit)
	}
	dstDir := path.Dir(dst)
	if err := r.MkdirAll(dstDir, 0o755); err != nil {
		return Info{}, err
	}
	// Link the source under a temporary name first and check it is the
	// file opened above (not a link swapped in since), so that nothing
	// unchecked ever shows at dst and nothing at dst is ever taken out.
	tmp, err := linkChecked(r, src, dst, fi)
	if err != nil {
		return Info{}, err
	}
	defer func() { _ = r.Remove(tmp) }() // gone already after a rename
	if ifMatch == "" {
		err = r.Link(tmp, dst)
		if errors.Is(err, fs.ErrExist) {
			return Info{}, ErrPrecondition
		}
	} else {
		err = replace(r, tmp, dst, ifMatch)
	}
	if err != nil {
		return Info{}, err
	}
	moved, err := r.Lstat(dst)
	if err != nil {
		return Info{}, err
	}
	if !os.SameFile(moved, fi) {
		return Info{}, fmt.Errorf("%w: another writer replaced it while it was published", ErrPrecondition)
	}
	if !sync {
		// The link (or rename) is done in the kernel, which a crash of
		// this process does not undo: from now on every reader finds the
		// manifest at dst, and the caller may record it.
		return statRegular(moved)
	}
	if err := syncFile(f); err != nil {
		return Info{}, err
	}
	if ifMatch != "" {
		if err := syncDir(r, dstDir); err != nil {
			return Info{}, err
		}
	}
	return statRegular(moved)
}

// syncDir syncs the directory name below r. It returns the error of
// opening or syncing it.
func syncDir(r *os.Root, name string) error {
	dir, err := r.Open(name)
	if err != nil {
		return err
	}
	defer dir.Close()
	return syncFile(dir)
}

// linkChecked links src under a temporary name beside dst and returns
// that name, after checking it is the regular file fi describes. It
// returns the link's error, or ErrNotFound (with the link removed) when
// src was swapped for another file or a link after fi was taken.
func linkChecked(r *os.Root, src, dst string, fi fs.FileInfo) (string, error) {
	var b [8]byte
	_, _ = rand.Read(b[:])
	tmp := path.Join(path.Dir(dst), "."+path.Base(dst)+".publish-"+hex.EncodeToString(b[:]))
	if err := r.Link(src, tmp); err != nil {
		return "", err
	}
	linked, err := r.Lstat(tmp)
	if err != nil || !linked.Mode().IsRegular() || !os.SameFile(linked, fi) {
		_ = r.Remove(tmp)
		return "", fmt.Errorf("%w: the source changed while it was published", ErrNotFound)
	}
	return tmp, nil
}

// replace renames tmp over dst if dst holds the content ifMatch names;
// ErrPrecondition otherwise.
func replace(r *os.Root, tmp, dst, ifMatch string) error {
	cur, err := r.Lstat(dst)
	if errors.Is(err, fs.ErrNotExist) {
		return ErrPrecondition
	}
	if err != nil {
		return err
	}
	if info, err := statRegular(cur); err != nil || info.ETag != ifMatch {
		return ErrPrecondition
	}
	return r.Rename(tmp, dst)
}

// Delete implements Bucket.
func (d *Dir) Delete(_ context.Context, key, ifMatch string) error {
	n, err := name("delete", key)
	if err != nil {
		return err
	}
	r, err := d.open("delete", key)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	defer r.Close()
	if ifMatch != "" {
		cur, err := r.Lstat(n)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return opError("delete", key, err)
		}
		if info, err := statRegular(cur); err != nil || info.ETag != ifMatch {
			return opError("delete", key, ErrPrecondition)
		}
	}
	if err := r.Remove(n); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return opError("delete", key, err)
	}
	return nil
}

// DeletePrefix implements Bucket: it removes the directory the prefix
// names, never following a symbolic link.
func (d *Dir) DeletePrefix(_ context.Context, prefix string) error {
	n, err := name("delete prefix", strings.TrimSuffix(prefix, "/"))
	if err != nil || !strings.HasSuffix(prefix, "/") {
		return opError("delete prefix", prefix, errors.New("a prefix is a clean relative path ending in /"))
	}
	r, err := d.open("delete prefix", prefix)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	defer r.Close()
	return opError("delete prefix", prefix, r.RemoveAll(n))
}
