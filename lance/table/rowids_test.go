package table

import (
	"errors"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/lancens/lancens/lance/internal/pb/tablepb"
)

func TestRowSequences(t *testing.T) {
	for _, ids := range [][]uint64{
		{5, 6, 7, 8},
		{1, 3, 70000},
		{9, 2, 4},
		{1 << 40, 3},
		{10, 11, 1<<33 + 5},
	} {
		got, err := decodeRowIDs(encodeU64Sequence(ids), uint64(len(ids)))
		if err != nil || !slices.Equal(got, ids) {
			t.Errorf("row ids %v decode to %v, %v", ids, got, err)
		}
	}
	versions := []uint64{1, 1, 1, 4, 4, 2}
	got, err := decodeVersions(encodeVersionSequence(versions), 6)
	if err != nil || !slices.Equal(got, versions) {
		t.Errorf("versions decode to %v, %v", got, err)
	}
	// Lance's bitmap segments are least significant bit first.
	bm, _ := proto.Marshal(&tablepb.RowIdSequence{Segments: []*tablepb.U64Segment{{Segment: &tablepb.U64Segment_RangeWithBitmap_{
		RangeWithBitmap: &tablepb.U64Segment_RangeWithBitmap{Start: 100, End: 110, Bitmap: []byte{0b00000101, 0b10}},
	}}}})
	if got, err := decodeRowIDs(bm, 3); err != nil || !slices.Equal(got, []uint64{100, 102, 109}) {
		t.Errorf("bitmap segment: %v, %v", got, err)
	}
	holes, _ := proto.Marshal(&tablepb.RowIdSequence{Segments: []*tablepb.U64Segment{{Segment: &tablepb.U64Segment_RangeWithHoles_{
		RangeWithHoles: &tablepb.U64Segment_RangeWithHoles{Start: 0, End: 5, Holes: packU64s([]uint64{3, 1})},
	}}}})
	if got, err := decodeRowIDs(holes, 3); err != nil || !slices.Equal(got, []uint64{0, 2, 4}) {
		t.Errorf("segment with holes: %v, %v", got, err)
	}
	for name, data := range map[string][]byte{
		"more ids than rows":  encodeRowIDRange(0, 10),
		"a huge range":        encodeRowIDRange(0, 1<<62),
		"fewer ids than rows": encodeRowIDRange(0, 2),
	} {
		if _, err := decodeRowIDs(data, 5); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", name, err)
		}
	}
	if _, err := decodeVersions(encodeVersionRun(1<<62, 1), 5); !errors.Is(err, ErrCorrupt) {
		t.Errorf("a version run longer than the fragment: %v", err)
	}
}

func FuzzDecodeRowSequences(f *testing.F) {
	f.Add(encodeU64Sequence([]uint64{1, 3, 70000}), uint64(3))
	f.Add(encodeU64Sequence([]uint64{4, 5, 6}), uint64(3))
	f.Add(encodeVersionSequence([]uint64{1, 1, 2}), uint64(3))
	f.Fuzz(func(t *testing.T, data []byte, n uint64) {
		n %= 1 << 20
		if ids, err := decodeRowIDs(data, n); err == nil && uint64(len(ids)) != n {
			t.Fatalf("%d row ids for %d rows", len(ids), n)
		}
		if vs, err := decodeVersions(data, n); err == nil && uint64(len(vs)) != n {
			t.Fatalf("%d versions for %d rows", len(vs), n)
		}
	})
}
