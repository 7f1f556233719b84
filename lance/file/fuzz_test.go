package file

import (
	"context"
	"errors"
	"io"
	"iter"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancens/lancens/lance/blob"
	"github.com/lancens/lancens/lance/schema"
)

// memStore is a read-only blob.Store of one object, "f".
type memStore []byte

func (m memStore) Stat(context.Context, string) (blob.Info, error) {
	return blob.Info{Path: "f", Size: int64(len(m))}, nil
}

func (m memStore) ReadRange(_ context.Context, _ string, off, n int64) ([]byte, error) {
	if off < 0 || n < 0 || off > int64(len(m)) || n > int64(len(m))-off {
		return nil, io.ErrUnexpectedEOF
	}
	return m[off : off+n], nil
}

func (memStore) Create(context.Context, string) (blob.Writer, error) {
	return nil, errors.New("read-only")
}
func (memStore) PutIfAbsent(context.Context, string, []byte) error { return errors.New("read-only") }
func (memStore) List(context.Context, string) iter.Seq2[blob.Info, error] {
	return func(func(blob.Info, error) bool) {}
}
func (memStore) Delete(context.Context, string) error { return errors.New("read-only") }

// seedFiles returns the small Lance-written files of testdata and one the
// writer makes, as fuzz seeds.
func seedFiles(f *testing.F) [][]byte {
	paths, err := filepath.Glob(filepath.Join("testdata", "*.lance"))
	if err != nil || len(paths) == 0 {
		f.Fatalf("no seed files in testdata: %v", err)
	}
	var out [][]byte
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// knownError reports whether err is one reading may return for a bad
// file.
func knownError(err error) bool {
	return errors.Is(err, ErrCorrupt) || errors.Is(err, ErrUnsupported) || errors.Is(err, ErrBudget) ||
		errors.Is(err, schema.ErrInvalid) || errors.Is(err, schema.ErrUnsupportedType) || errors.Is(err, schema.ErrFieldNotFound)
}

// FuzzFooter parses footers and their offset tables.
func FuzzFooter(f *testing.F) {
	for _, b := range seedFiles(f) {
		f.Add(b[len(b)-footerSize:], uint64(len(b)), b[len(b)-footerSize-64:len(b)-footerSize])
	}
	f.Fuzz(func(t *testing.T, tail []byte, size uint64, table []byte) {
		ft, err := parseFooter(tail, size)
		if err != nil {
			if !knownError(err) {
				t.Fatalf("an error of no known kind: %v", err)
			}
			return
		}
		if ft.columnMetaStart > ft.columnOffsetsStart || ft.globalOffsetsStart+16*uint64(ft.numGlobals) > size-footerSize {
			t.Fatalf("parseFooter accepted sections out of order: %+v", ft)
		}
		rs, err := parseOffsetTable(table, len(table)/16, ft.columnMetaStart, ft.columnOffsetsStart, "column metadata")
		for _, r := range rs {
			if r.Offset < ft.columnMetaStart || r.Offset+r.Length > ft.columnOffsetsStart {
				t.Fatalf("parseOffsetTable accepted %+v outside [%d, %d)", r, ft.columnMetaStart, ft.columnOffsetsStart)
			}
		}
		if err != nil && !knownError(err) {
			t.Fatalf("an error of no known kind: %v", err)
		}
	})
}

// FuzzColumnMetadata parses column metadata messages.
func FuzzColumnMetadata(f *testing.F) {
	for _, b := range seedFiles(f) {
		r, err := Open(context.Background(), memStore(b), "f", nil)
		if err != nil {
			f.Fatal(err)
		}
		for _, m := range r.columnMeta {
			f.Add(b[m.Offset:m.Offset+m.Length], uint64(len(b)))
		}
	}
	f.Fuzz(func(t *testing.T, b []byte, dataEnd uint64) {
		c, err := parseColumn(0, b, dataEnd)
		if err != nil {
			if !knownError(err) {
				t.Fatalf("an error of no known kind: %v", err)
			}
			return
		}
		var rows uint64
		for _, p := range c.Pages {
			if p.First != rows {
				t.Fatalf("page starts at %d, want %d", p.First, rows)
			}
			rows += p.Length
			for _, r := range p.Buffers {
				if r.Offset+r.Length > dataEnd || r.Offset+r.Length < r.Offset {
					t.Fatalf("a buffer %+v past %d was accepted", r, dataEnd)
				}
			}
		}
	})
}

// FuzzOpen opens whole files and reads all their rows, some ranges and
// some taken rows, under a small memory budget.
func FuzzOpen(f *testing.F) {
	for _, b := range seedFiles(f) {
		f.Add(b, uint16(0), uint16(3))
	}
	f.Fuzz(func(t *testing.T, b []byte, start, take uint16) {
		ctx := context.Background()
		opts := &ReadOptions{MaxMetadataBytes: 1 << 20, MaxReadBytes: 16 << 20, Mem: memory.DefaultAllocator}
		r, err := Open(ctx, memStore(b), "f", opts)
		if err != nil {
			if !knownError(err) {
				t.Fatalf("Open: an error of no known kind: %v", err)
			}
			return
		}
		n := r.NumRows()
		if n == 0 {
			return
		}
		check := func(rec arrow.RecordBatch, err error, rows uint64) {
			t.Helper()
			if err != nil {
				if !knownError(err) {
					t.Fatalf("an error of no known kind: %v", err)
				}
				return
			}
			defer rec.Release()
			if uint64(rec.NumRows()) != rows {
				t.Fatalf("read %d rows, want %d", rec.NumRows(), rows)
			}
			for _, c := range rec.Columns() {
				if v, ok := c.(interface{ Validate() error }); ok {
					if err := v.Validate(); err != nil {
						t.Fatalf("a malformed array: %v", err)
					}
				}
				for i := 0; i < c.Len(); i++ {
					_ = c.ValueStr(i)
				}
			}
		}
		end := min(n, 64)
		rec, err := r.ReadRange(ctx, nil, 0, end)
		check(rec, err, end)
		s := uint64(start) % n
		rec, err = r.ReadRange(ctx, nil, s, min(n, s+17))
		check(rec, err, min(n, s+17)-s)
		rows := []uint64{uint64(take) % n, 0, n - 1, uint64(take) % n}
		rec, err = r.Take(ctx, nil, rows)
		check(rec, err, uint64(len(rows)))
	})
}

// TestSeedFilesRead checks that the committed Lance-written seed files
// read (Node-free, so it runs everywhere the fuzz seeds do).
func TestSeedFilesRead(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join("testdata", "*.lance"))
	if len(paths) == 0 {
		t.Fatal("no seed files")
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Open(context.Background(), memStore(b), "f", nil)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		rec, err := r.ReadRange(context.Background(), nil, 0, r.NumRows())
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if rec.NumRows() == 0 || rec.NumCols() == 0 {
			t.Errorf("%s: %d rows, %d columns", p, rec.NumRows(), rec.NumCols())
		}
		rec.Release()
	}
}
