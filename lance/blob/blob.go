// Package blob is how the Lance packages reach the objects of a dataset:
// data files, deletion files, manifests, transaction files and indexes. A
// Store is a flat space of objects named by "/"-separated relative paths,
// as object stores have it; Dir is one over a local directory, and other
// stores (S3 through lancens's objstore) implement the same interface.
//
// The interface asks for what the Lance format needs and no more: range
// reads (a reader fetches the footer, then only the pages it wants),
// whole-object writes that appear complete or not at all (data files are
// written once and never changed), put-if-absent (a manifest commit wins
// or loses atomically), listing (version discovery, cleanup) and deletion.
package blob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"path"
	"strings"
	"time"
)

// Store holds the objects of one or more datasets. Its methods are safe
// for concurrent use.
type Store interface {
	// Stat returns the object at p's size and modification time. It
	// returns an error wrapping ErrNotFound when there is none.
	Stat(ctx context.Context, p string) (Info, error)

	// ReadRange returns the n bytes of the object at p that start at off.
	// It returns an error wrapping ErrNotFound when there is no object,
	// and one wrapping io.ErrUnexpectedEOF when the object ends before
	// off+n.
	ReadRange(ctx context.Context, p string, off, n int64) ([]byte, error)

	// Create starts writing a new object at p. Nothing is visible at p
	// until the Writer's Close succeeds, and then the whole object is
	// (replacing any object there). Abort discards it.
	Create(ctx context.Context, p string) (Writer, error)

	// PutIfAbsent stores data at p, durably, only if no object is there;
	// otherwise it changes nothing and returns an error wrapping
	// ErrExists.
	PutIfAbsent(ctx context.Context, p string, data []byte) error

	// List yields every object whose path starts with prefix (a
	// directory-like prefix ending in "/", or "" for all), in no
	// particular order, with paths relative to the store. An error ends
	// the sequence.
	List(ctx context.Context, prefix string) iter.Seq2[Info, error]

	// Delete removes the object at p; a missing object is not an error.
	Delete(ctx context.Context, p string) error
}

// Range is n bytes of an object starting at Off.
type Range struct {
	Off, N int64
}

// RangesReader is implemented by stores that read several ranges of one
// object more cheaply together than one by one: Dir opens the file once
// for all of them, where ReadRange opens it per range.
type RangesReader interface {
	// ReadRanges returns the bytes of each range of the object at p, in
	// order, with ReadRange's errors.
	ReadRanges(ctx context.Context, p string, ranges []Range) ([][]byte, error)
}

// ReadRanges returns the bytes of each range of the object at p in s, in
// order: in one call when s is a RangesReader, else one ReadRange per
// range. It returns ReadRange's errors.
func ReadRanges(ctx context.Context, s Store, p string, ranges []Range) ([][]byte, error) {
	if rr, ok := s.(RangesReader); ok {
		return rr.ReadRanges(ctx, p, ranges)
	}
	out := make([][]byte, len(ranges))
	for i, r := range ranges {
		b, err := s.ReadRange(ctx, p, r.Off, r.N)
		if err != nil {
			return nil, err
		}
		out[i] = b
	}
	return out, nil
}

// Writer receives the bytes of an object being created.
type Writer interface {
	io.Writer
	// Close makes the object visible, durably, and returns the first
	// error of writing it; the object is then complete.
	Close() error
	// Abort discards what was written. It is safe after Close (it then
	// does nothing) and returns the error of removing partial data.
	Abort() error
}

// Info describes a stored object.
type Info struct {
	// Path is the object's path relative to the store.
	Path    string
	Size    int64
	ModTime time.Time
}

var (
	// ErrNotFound reports a missing object.
	ErrNotFound = errors.New("object not found")
	// ErrExists reports a put-if-absent whose path was taken.
	ErrExists = errors.New("object already exists")
)

// ReadAll returns the whole object at p, which must be at most limit
// bytes. It returns an error wrapping ErrNotFound when there is none and
// a plain error when the object is bigger than limit.
func ReadAll(ctx context.Context, s Store, p string, limit int64) ([]byte, error) {
	info, err := s.Stat(ctx, p)
	if err != nil {
		return nil, err
	}
	if info.Size > limit {
		return nil, fmt.Errorf("object %s is %d bytes, more than the %d accepted", p, info.Size, limit)
	}
	return s.ReadRange(ctx, p, 0, info.Size)
}

// Put writes data at p as one whole object, replacing any object there.
// It returns the error of creating, writing or closing it.
func Put(ctx context.Context, s Store, p string, data []byte) error {
	w, err := s.Create(ctx, p)
	if err != nil {
		return err
	}
	if _, err := w.Write(data); err != nil {
		return errors.Join(err, w.Abort())
	}
	return w.Close()
}

// UnsyncedPutter is implemented by stores that can store an object
// without waiting for it to reach the disk (Dir): the object is whole and
// visible to every reader once PutUnsynced returns, and survives a crash
// of the process, but not necessarily a power loss.
type UnsyncedPutter interface {
	// PutUnsynced writes data at p as Put does, without syncing it.
	PutUnsynced(ctx context.Context, p string, data []byte) error
}

// PutUnsynced writes data at p as one whole object, replacing any object
// there, without waiting for the disk where s allows it (an
// UnsyncedPutter); on other stores it is Put. It is for an object whose
// durability the caller gets some other way: a staged manifest that is
// synced when it is published under its final name. It returns the error
// of writing it.
func PutUnsynced(ctx context.Context, s Store, p string, data []byte) error {
	if u, ok := s.(UnsyncedPutter); ok {
		return u.PutUnsynced(ctx, p, data)
	}
	return Put(ctx, s, p, data)
}

// Sub returns the store of the objects below dir in s: path p of the
// result is dir/p of s, and listings give paths relative to dir.
func Sub(s Store, dir string) Store {
	dir = strings.Trim(dir, "/")
	if dir == "" {
		return s
	}
	if sub, ok := s.(*subStore); ok {
		return &subStore{base: sub.base, dir: path.Join(sub.dir, dir)}
	}
	return &subStore{base: s, dir: dir}
}

type subStore struct {
	base Store
	dir  string
}

func (s *subStore) full(p string) string { return s.dir + "/" + p }

func (s *subStore) Stat(ctx context.Context, p string) (Info, error) {
	info, err := s.base.Stat(ctx, s.full(p))
	info.Path = p
	return info, err
}

func (s *subStore) ReadRange(ctx context.Context, p string, off, n int64) ([]byte, error) {
	return s.base.ReadRange(ctx, s.full(p), off, n)
}

func (s *subStore) ReadRanges(ctx context.Context, p string, ranges []Range) ([][]byte, error) {
	return ReadRanges(ctx, s.base, s.full(p), ranges)
}

func (s *subStore) Create(ctx context.Context, p string) (Writer, error) {
	return s.base.Create(ctx, s.full(p))
}

func (s *subStore) PutIfAbsent(ctx context.Context, p string, data []byte) error {
	return s.base.PutIfAbsent(ctx, s.full(p), data)
}

func (s *subStore) PutUnsynced(ctx context.Context, p string, data []byte) error {
	return PutUnsynced(ctx, s.base, s.full(p), data)
}

func (s *subStore) List(ctx context.Context, prefix string) iter.Seq2[Info, error] {
	return func(yield func(Info, error) bool) {
		for info, err := range s.base.List(ctx, s.full(prefix)) {
			info.Path = strings.TrimPrefix(info.Path, s.dir+"/")
			if !yield(info, err) {
				return
			}
		}
	}
}

func (s *subStore) Delete(ctx context.Context, p string) error {
	return s.base.Delete(ctx, s.full(p))
}

// CleanPath returns p when it is a clean relative object path (no leading
// "/", no "." or ".." elements, no empty elements, no NUL), and an error
// naming it otherwise. Stores call it on every path they are given.
func CleanPath(p string) (string, error) {
	if p == "" || strings.HasPrefix(p, "/") || path.Clean(p) != p || p == "." || strings.HasPrefix(p, "../") || p == ".." || strings.ContainsRune(p, 0) {
		return "", fmt.Errorf("object path %q is not a clean relative path", p)
	}
	return p, nil
}
