package fts

import (
	"errors"
	"slices"
	"testing"

	"github.com/lancens/lancens/store"
)

// TestMarshalRoundTrip: a loaded index answers every kind of query as the
// one it was saved from, with and without positions, and keeps growing.
func TestMarshalRoundTrip(t *testing.T) {
	queries := []store.FtsQuery{
		match("mountains"),
		match("cats river"),
		{Phrase: &store.FtsPhrase{Terms: "b c"}},
		{Match: &store.FtsMatch{Terms: "mountain", Fuzziness: 1}},
		{Boolean: &store.FtsBoolean{Must: []store.FtsQuery{match("cats")}, MustNot: []store.FtsQuery{match("dogs")}}},
	}
	for _, noPositions := range []bool{false, true} {
		s := testSearch(t, noPositions)
		orig, err := s.Open(Column{})
		if err != nil {
			t.Fatal(err)
		}
		data, err := orig.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		loaded, err := LoadIndex(data)
		if err != nil {
			t.Fatal(err)
		}
		if loaded.lastRowID != orig.lastRowID || loaded.positions != orig.positions || loaded.Bytes() <= postingIndexBytes {
			t.Fatalf("loaded: last row %d, positions %v, %d bytes", loaded.lastRowID, loaded.positions, loaded.Bytes())
		}
		again, err := loaded.MarshalBinary()
		if err != nil || !slices.Equal(again, data) {
			t.Fatalf("the loaded index saves differently (%v)", err)
		}
		copied := *s
		copied.Open = func(Column) (*Index, error) { return loaded, nil }
		for _, q := range queries {
			if q.Phrase != nil && noPositions {
				continue
			}
			want, err := s.Eval(q)
			if err != nil {
				t.Fatal(err)
			}
			got, err := copied.Eval(q)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.IDs, want.IDs) || !slices.Equal(got.Vals, want.Vals) {
				t.Errorf("positions %v, %+v: loaded %v, saved %v", !noPositions, q, got, want)
			}
		}
		// Rows after the saved ones are added as to the original.
		if _, err := loaded.CatchUp(func(after int64, add func(int64, []string)) error {
			if after != orig.lastRowID {
				t.Fatalf("catch up after %d, want %d", after, orig.lastRowID)
			}
			add(after+1, []string{"zebra"})
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLoadIndexRejectsDamage: truncated or altered data is an error, never
// a panic or an index.
func TestLoadIndexRejectsDamage(t *testing.T) {
	ix, err := testSearch(t, false).Open(Column{})
	if err != nil {
		t.Fatal(err)
	}
	data, err := ix.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	for n := range len(data) {
		if _, err := LoadIndex(data[:n]); !errors.Is(err, errCorrupt) {
			t.Fatalf("%d of %d bytes: %v", n, len(data), err)
		}
	}
	for i := range data {
		bad := slices.Clone(data)
		bad[i] ^= 0x41
		if _, err := LoadIndex(bad); !errors.Is(err, errCorrupt) {
			t.Fatalf("byte %d altered: %v", i, err)
		}
	}
	// A body whose checksum is right but whose rows go backwards.
	bad := NewIndex(false)
	bad.docLen = []int32{1, 1}
	bad.lastRowID = 1
	bad.terms["x"] = &postings{rows: []int64{1, 1}, tf: []int32{1, 1}}
	b, _ := bad.MarshalBinary()
	if _, err := LoadIndex(b); !errors.Is(err, errCorrupt) {
		t.Fatalf("rows out of order: %v", err)
	}
}
