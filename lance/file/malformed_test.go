package file

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"testing"
)

// TestOpenRefusesMalformed checks the errors of opening and reading files
// broken in each part of their metadata.
func TestOpenRefusesMalformed(t *testing.T) {
	good, err := os.ReadFile("testdata/lance12-2.0-lists.lance")
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	n := len(good)
	footer := n - footerSize
	colTable := int(le.Uint64(good[footer+8:]))
	globalTable := int(le.Uint64(good[footer+16:]))
	edit := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	put64 := func(at int, v uint64) func([]byte) []byte {
		return func(b []byte) []byte { le.PutUint64(b[at:], v); return b }
	}
	cases := []struct {
		name string
		file []byte
		want error
	}{
		{"empty", nil, ErrCorrupt},
		{"shorter than a footer", good[n-39:], ErrCorrupt},
		{"truncated", good[:n-1], ErrCorrupt},
		{"no magic", edit(func(b []byte) []byte { copy(b[n-4:], "LAND"); return b }), ErrCorrupt},
		{"legacy version", edit(func(b []byte) []byte { le.PutUint16(b[footer+32:], 0); le.PutUint16(b[footer+34:], 2); return b }), ErrUnsupported},
		{"unknown version", edit(func(b []byte) []byte { le.PutUint16(b[footer+32:], 3); le.PutUint16(b[footer+34:], 0); return b }), ErrUnsupported},
		{"metadata after its table", edit(put64(footer, uint64(colTable+8))), ErrCorrupt},
		{"table past the end", edit(put64(footer+8, uint64(n))), ErrCorrupt},
		{"huge column count", edit(func(b []byte) []byte { le.PutUint32(b[footer+28:], 1<<31); return b }), ErrCorrupt},
		{"no global buffers", edit(func(b []byte) []byte { le.PutUint32(b[footer+24:], 0); return b }), ErrCorrupt},
		{"column metadata out of its section", edit(put64(colTable, uint64(globalTable))), ErrCorrupt},
		{"column metadata overflowing", edit(put64(colTable+8, 1<<63)), ErrCorrupt},
		{"schema past the end", edit(put64(globalTable+8, uint64(n))), ErrCorrupt},
		{"schema garbage", edit(func(b []byte) []byte {
			at := le.Uint64(b[globalTable:])
			for i := range le.Uint64(b[globalTable+8:]) {
				b[at+i] = 0xff
			}
			return b
		}), ErrCorrupt},
		{"fewer columns than fields", edit(func(b []byte) []byte {
			le.PutUint32(b[footer+28:], le.Uint32(b[footer+28:])-1)
			le.PutUint64(b[footer+8:], uint64(colTable+16)) // the table starts one entry later
			return b
		}), ErrCorrupt},
	}
	ctx := context.Background()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := Open(ctx, memStore(c.file), "f", &ReadOptions{MaxMetadataBytes: 1 << 20})
			if err == nil {
				_, err = r.ReadRange(ctx, nil, 0, r.NumRows())
			}
			if !errors.Is(err, c.want) {
				t.Errorf("got %v, want %v", err, c.want)
			}
		})
	}

	// A page whose buffer lies past the file is found when its column is
	// read.
	r, err := Open(ctx, memStore(good), "f", nil)
	if err != nil {
		t.Fatal(err)
	}
	m := r.columnMeta[0]
	meta := append([]byte(nil), good[m.Offset:m.Offset+m.Length]...)
	if _, err := parseColumn(0, meta, 4); !errors.Is(err, ErrCorrupt) {
		t.Errorf("parseColumn with buffers past the data = %v, want ErrCorrupt", err)
	}
	// And a metadata cap refuses big metadata before reading it.
	if _, err := Open(ctx, memStore(good), "f", &ReadOptions{MaxMetadataBytes: 16}); !errors.Is(err, ErrCorrupt) {
		t.Errorf("Open over the metadata cap = %v, want ErrCorrupt", err)
	}
	// A read bigger than its budget is refused.
	if _, err := r.ReadRange(ctx, nil, 0, r.NumRows()); err != nil {
		t.Fatal(err)
	}
	small, _ := Open(ctx, memStore(good), "f", &ReadOptions{MaxReadBytes: 8})
	if _, err := small.ReadRange(ctx, nil, 0, small.NumRows()); !errors.Is(err, ErrBudget) {
		t.Errorf("ReadRange over the budget = %v, want ErrBudget", err)
	}
}
