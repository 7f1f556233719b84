// Package blobtest holds the behaviour every blob.Store must have, as one
// test any implementation runs against itself (the local directory here,
// S3 in lancens's objstore).
package blobtest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"slices"
	"sync"
	"testing"

	"github.com/lancens/lancens/lance/blob"
)

// Run checks the store newStore returns (a fresh, empty one per call)
// against the blob.Store contract.
func Run(t *testing.T, newStore func(t *testing.T) blob.Store) {
	ctx := context.Background()

	t.Run("WriteAndReadRanges", func(t *testing.T) {
		s := newStore(t)
		data := []byte("0123456789abcdef")
		if err := blob.Put(ctx, s, "data/a.lance", data); err != nil {
			t.Fatal(err)
		}
		info, err := s.Stat(ctx, "data/a.lance")
		if err != nil || info.Size != int64(len(data)) {
			t.Fatalf("Stat = %+v, %v; want size %d", info, err, len(data))
		}
		for _, r := range []struct{ off, n int64 }{{0, 16}, {3, 4}, {16, 0}, {15, 1}} {
			got, err := s.ReadRange(ctx, "data/a.lance", r.off, r.n)
			if err != nil || !bytes.Equal(got, data[r.off:r.off+r.n]) {
				t.Errorf("ReadRange(%d, %d) = %q, %v", r.off, r.n, got, err)
			}
		}
		if _, err := s.ReadRange(ctx, "data/a.lance", 10, 7); !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("ReadRange past the end: %v, want io.ErrUnexpectedEOF", err)
		}
		all, err := blob.ReadAll(ctx, s, "data/a.lance", 16)
		if err != nil || !bytes.Equal(all, data) {
			t.Errorf("ReadAll = %q, %v", all, err)
		}
		if _, err := blob.ReadAll(ctx, s, "data/a.lance", 15); err == nil {
			t.Error("ReadAll over its limit succeeded")
		}
	})

	t.Run("ReadRanges", func(t *testing.T) {
		s := newStore(t)
		data := []byte("0123456789abcdef")
		if err := blob.Put(ctx, s, "ns/t/a.lance", data); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			name  string
			store blob.Store
			path  string
		}{{"store", s, "ns/t/a.lance"}, {"sub-store", blob.Sub(s, "ns/t"), "a.lance"}} {
			ranges := []blob.Range{{Off: 10, N: 3}, {Off: 0, N: 16}, {Off: 16, N: 0}, {Off: 2, N: 3}, {Off: 2, N: 3}}
			got, err := blob.ReadRanges(ctx, c.store, c.path, ranges)
			if err != nil || len(got) != len(ranges) {
				t.Fatalf("%s: ReadRanges = %d slices, %v; want %d", c.name, len(got), err, len(ranges))
			}
			for i, r := range ranges {
				if !bytes.Equal(got[i], data[r.Off:r.Off+r.N]) {
					t.Errorf("%s: range %d+%d = %q", c.name, r.Off, r.N, got[i])
				}
			}
			// The slices are the caller's: growing one leaves the others.
			_ = append(got[3], 'x')
			if string(got[4]) != "234" {
				t.Errorf("%s: appending to one range changed another: %q", c.name, got[4])
			}
			if got, err := blob.ReadRanges(ctx, c.store, c.path, nil); err != nil || len(got) != 0 {
				t.Errorf("%s: ReadRanges of no ranges = %q, %v", c.name, got, err)
			}
			if _, err := blob.ReadRanges(ctx, c.store, c.path, []blob.Range{{Off: 0, N: 1}, {Off: 10, N: 7}}); !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("%s: ReadRanges past the end: %v, want io.ErrUnexpectedEOF", c.name, err)
			}
			if _, err := blob.ReadRanges(ctx, c.store, "nope", []blob.Range{{Off: 0, N: 1}}); !errors.Is(err, blob.ErrNotFound) {
				t.Errorf("%s: ReadRanges of a missing object: %v, want ErrNotFound", c.name, err)
			}
		}
	})

	t.Run("ReadManyRanges", func(t *testing.T) {
		// More ranges than a store reads at once, out of order: some
		// overlap, some touch, some are empty (at the end of the object
		// too), some repeat.
		s := newStore(t)
		data := make([]byte, 1<<16)
		for i := range data {
			data[i] = byte(i * 7 / 3)
		}
		if err := blob.Put(ctx, s, "data/m.lance", data); err != nil {
			t.Fatal(err)
		}
		var ranges []blob.Range
		for i := range 30 {
			off := int64((i * 7919) % (len(data) - 1000))
			ranges = append(ranges, blob.Range{Off: off, N: int64(1 + i*31)})
		}
		ranges = append(ranges,
			blob.Range{Off: 100, N: 50}, blob.Range{Off: 150, N: 50}, blob.Range{Off: 120, N: 200},
			blob.Range{Off: 400, N: 0}, blob.Range{Off: int64(len(data)), N: 0}, blob.Range{Off: int64(len(data)) - 3, N: 3},
			blob.Range{Off: 100, N: 50})
		got, err := blob.ReadRanges(ctx, s, "data/m.lance", ranges)
		if err != nil || len(got) != len(ranges) {
			t.Fatalf("ReadRanges = %d slices, %v; want %d", len(got), err, len(ranges))
		}
		for i, r := range ranges {
			if !bytes.Equal(got[i], data[r.Off:r.Off+r.N]) {
				t.Errorf("range %d+%d: %d bytes, not the object's", r.Off, r.N, len(got[i]))
			}
		}
		for name, rs := range map[string][]blob.Range{
			"one of many past the end":    append(slices.Clone(ranges[:20]), blob.Range{Off: int64(len(data)) - 2, N: 3}),
			"an empty range past the end": {{Off: 0, N: 10}, {Off: int64(len(data)) + 1, N: 0}},
		} {
			if _, err := blob.ReadRanges(ctx, s, "data/m.lance", rs); !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("%s: %v, want io.ErrUnexpectedEOF", name, err)
			}
		}
		if _, err := blob.ReadRanges(ctx, s, "data/nope", []blob.Range{{Off: 0, N: 0}}); !errors.Is(err, blob.ErrNotFound) {
			t.Errorf("an empty range of a missing object: %v, want ErrNotFound", err)
		}
	})

	t.Run("Missing", func(t *testing.T) {
		s := newStore(t)
		if _, err := s.Stat(ctx, "nope"); !errors.Is(err, blob.ErrNotFound) {
			t.Errorf("Stat: %v, want ErrNotFound", err)
		}
		if _, err := s.ReadRange(ctx, "a/nope", 0, 1); !errors.Is(err, blob.ErrNotFound) {
			t.Errorf("ReadRange: %v, want ErrNotFound", err)
		}
		if err := s.Delete(ctx, "a/nope"); err != nil {
			t.Errorf("Delete of a missing object: %v", err)
		}
		for _, err := range s.List(ctx, "a/") {
			t.Errorf("List of an empty store: %v", err)
		}
	})

	t.Run("CreateIsInvisibleUntilClose", func(t *testing.T) {
		s := newStore(t)
		w, err := s.Create(ctx, "x/obj")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte("part")); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Stat(ctx, "x/obj"); !errors.Is(err, blob.ErrNotFound) {
			t.Errorf("object visible before Close: %v", err)
		}
		if got := list(t, s, ""); len(got) != 0 {
			t.Errorf("List shows an object being written: %v", got)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if err := w.Abort(); err != nil {
			t.Errorf("Abort after Close: %v", err)
		}
		if got, _ := s.ReadRange(ctx, "x/obj", 0, 4); string(got) != "part" {
			t.Errorf("after Close: %q", got)
		}

		w, err = s.Create(ctx, "x/aborted")
		if err != nil {
			t.Fatal(err)
		}
		_, _ = w.Write([]byte("gone"))
		if err := w.Abort(); err != nil {
			t.Fatal(err)
		}
		if got := list(t, s, ""); !slices.Equal(got, []string{"x/obj"}) {
			t.Errorf("after Abort, List = %v", got)
		}
	})

	t.Run("PutIfAbsentHasOneWinner", func(t *testing.T) {
		s := newStore(t)
		const n = 8
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			wg.Go(func() { errs[i] = s.PutIfAbsent(ctx, "_versions/1.manifest", []byte{byte(i)}) })
		}
		wg.Wait()
		winners := 0
		for _, err := range errs {
			switch {
			case err == nil:
				winners++
			case !errors.Is(err, blob.ErrExists):
				t.Errorf("PutIfAbsent: %v, want nil or ErrExists", err)
			}
		}
		if winners != 1 {
			t.Fatalf("%d writers won, want 1", winners)
		}
		got, err := s.ReadRange(ctx, "_versions/1.manifest", 0, 1)
		if err != nil || errs[got[0]] != nil {
			t.Errorf("stored content %v is not the winner's (%v)", got, err)
		}
	})

	t.Run("ListAndDelete", func(t *testing.T) {
		s := newStore(t)
		for _, p := range []string{"data/1.lance", "data/2.lance", "_versions/1.manifest", "_indices/u/index.idx", "datum"} {
			if err := blob.Put(ctx, s, p, []byte(p)); err != nil {
				t.Fatal(err)
			}
		}
		if got := list(t, s, "data/"); !slices.Equal(got, []string{"data/1.lance", "data/2.lance"}) {
			t.Errorf("List(data/) = %v", got)
		}
		if got := list(t, s, "_indices/"); !slices.Equal(got, []string{"_indices/u/index.idx"}) {
			t.Errorf("List(_indices/) = %v", got)
		}
		if got := list(t, s, ""); len(got) != 5 {
			t.Errorf("List() = %v, want 5 objects", got)
		}
		if err := s.Delete(ctx, "data/1.lance"); err != nil {
			t.Fatal(err)
		}
		if got := list(t, s, "data/"); !slices.Equal(got, []string{"data/2.lance"}) {
			t.Errorf("after Delete, List(data/) = %v", got)
		}
	})

	t.Run("Sub", func(t *testing.T) {
		s := newStore(t)
		sub := blob.Sub(s, "ns/t.lance")
		if err := blob.Put(ctx, sub, "data/1.lance", []byte("one")); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Stat(ctx, "ns/t.lance/data/1.lance"); err != nil {
			t.Errorf("the sub-store's object is not below its directory: %v", err)
		}
		if got := list(t, sub, ""); !slices.Equal(got, []string{"data/1.lance"}) {
			t.Errorf("sub List = %v", got)
		}
		if err := sub.PutIfAbsent(ctx, "data/1.lance", nil); !errors.Is(err, blob.ErrExists) {
			t.Errorf("sub PutIfAbsent over an object: %v", err)
		}
	})

	t.Run("BadPaths", func(t *testing.T) {
		s := newStore(t)
		for _, p := range []string{"", "/abs", "../up", "a/../../up", "a//b", "./a", "a/.", "nul\x00"} {
			if err := blob.Put(ctx, s, p, nil); err == nil {
				t.Errorf("Put(%q) succeeded", p)
			}
			if _, err := s.ReadRange(ctx, p, 0, 0); err == nil {
				t.Errorf("ReadRange(%q) succeeded", p)
			}
		}
	})
}

// list returns the sorted paths s lists under prefix, failing t on error.
func list(t *testing.T, s blob.Store, prefix string) []string {
	t.Helper()
	var got []string
	for info, err := range s.List(context.Background(), prefix) {
		if err != nil {
			t.Fatalf("List(%q): %v", prefix, err)
		}
		got = append(got, info.Path)
	}
	slices.Sort(got)
	return got
}
