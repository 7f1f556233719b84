package table

import (
	"errors"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
)

func TestDeletionsRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name     string
		rows     []uint32
		physical uint64
		kind     DeletionKind
	}{
		{"empty", nil, 10, DeletionArrow},
		{"few", []uint32{7, 0, 3, 9}, 10, DeletionArrow},
		{"just below the bitmap size", seq(0, bitmapDeletionsFrom-1), 1 << 20, DeletionArrow},
		{"bitmap size", seq(0, bitmapDeletionsFrom), 1 << 20, DeletionBitmap},
		{"sparse many", stride(1<<20, 100), 1 << 20, DeletionBitmap},
		{"last row", []uint32{1<<20 - 1}, 1 << 20, DeletionArrow},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := roaring.BitmapOf(tc.rows...)
			kind, data, err := EncodeDeletions(want)
			if err != nil {
				t.Fatal(err)
			}
			if kind != tc.kind {
				t.Errorf("kind = %v, want %v", kind, tc.kind)
			}
			got, err := DecodeDeletions(kind, data, tc.physical)
			if err != nil {
				t.Fatal(err)
			}
			if !got.Equals(want) {
				t.Errorf("decoded %d rows, want %d", got.GetCardinality(), want.GetCardinality())
			}
		})
	}
}

func TestDecodeDeletionsRefuses(t *testing.T) {
	_, arrowFile, _ := EncodeDeletions(roaring.BitmapOf(1, 5))
	_, bitmapFile, _ := EncodeDeletions(roaring.BitmapOf(seq(0, 6000)...))
	for _, tc := range []struct {
		name     string
		kind     DeletionKind
		data     []byte
		physical uint64
		want     error
	}{
		{"row beyond the fragment (arrow)", DeletionArrow, arrowFile, 5, ErrCorrupt},
		{"row beyond the fragment (bitmap)", DeletionBitmap, bitmapFile, 5999, ErrCorrupt},
		{"truncated arrow", DeletionArrow, arrowFile[:len(arrowFile)/2], 10, ErrCorrupt},
		{"not arrow", DeletionArrow, []byte("ARROW1\x00\x00garbage garbage ARROW1"), 10, ErrCorrupt},
		{"truncated bitmap", DeletionBitmap, bitmapFile[:len(bitmapFile)-3], 1 << 20, ErrCorrupt},
		{"bitmap with trailing bytes", DeletionBitmap, append(append([]byte{}, bitmapFile...), 0), 1 << 20, ErrCorrupt},
		{"empty bitmap file", DeletionBitmap, nil, 10, ErrCorrupt},
		{"file larger than its fragment allows", DeletionBitmap, make([]byte, maxDeletionFileBytes(10)+1), 10, ErrCorrupt},
		{"unknown kind", DeletionKind(7), arrowFile, 10, ErrUnsupported},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := DecodeDeletions(tc.kind, tc.data, tc.physical); !errors.Is(err, tc.want) {
				t.Errorf("DecodeDeletions: %v, want %v", err, tc.want)
			}
		})
	}
}

func FuzzDecodeDeletions(f *testing.F) {
	for _, rows := range [][]uint32{nil, {0, 3, 4}, seq(0, 6000), stride(70000, 3)} {
		kind, data, err := EncodeDeletions(roaring.BitmapOf(rows...))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(int32(kind), data, uint64(70000))
	}
	f.Fuzz(func(t *testing.T, kind int32, data []byte, physical uint64) {
		rows, err := DecodeDeletions(DeletionKind(kind), data, physical)
		if err != nil {
			return
		}
		if !rows.IsEmpty() && uint64(rows.Maximum()) >= physical {
			t.Fatalf("decoded row %d of a %d-row fragment", rows.Maximum(), physical)
		}
		k, again, err := EncodeDeletions(rows)
		if err != nil {
			t.Fatal(err)
		}
		back, err := DecodeDeletions(k, again, physical)
		if err != nil || !back.Equals(rows) {
			t.Fatalf("re-encoded deletions do not decode to themselves: %v", err)
		}
	})
}

// seq returns lo, lo+1, …, hi-1.
func seq(lo, hi uint32) []uint32 {
	out := make([]uint32, 0, hi-lo)
	for i := lo; i < hi; i++ {
		out = append(out, i)
	}
	return out
}

// stride returns 0, step, 2·step, … below n.
func stride(n, step uint32) []uint32 {
	var out []uint32
	for i := uint32(0); i < n; i += step {
		out = append(out, i)
	}
	return out
}
