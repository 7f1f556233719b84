package fts

import (
	"slices"
	"testing"

	"github.com/lancens/lancens/store"
)

// TestRowsView: with Search.Rows, a column's index numbers rows its own
// way and Eval answers in the ids the view maps them to, in ascending
// order, scores unchanged; the view's rows restrict what matches.
func TestRowsView(t *testing.T) {
	for _, tc := range []struct {
		name string
		id   func(int64) int64
	}{
		{"Ascending", func(id int64) int64 { return id<<32 | 7 }},
		{"Reversed", func(id int64) int64 { return 100 - id }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plain := testSearch(t, false)
			viewed := *plain
			viewed.Visible, viewed.Allowed = nil, nil
			allowed := RowSet{plain.Allowed[0] &^ (1 << 4)} // row 4 filtered out
			viewed.Rows = func(Column) (View, error) {
				return View{Visible: plain.Visible, Allowed: allowed, IDs: func(ids []int64) {
					for i, id := range ids {
						ids[i] = tc.id(id)
					}
				}}, nil
			}
			for _, q := range []store.FtsQuery{match("cats mountains"), {Phrase: &store.FtsPhrase{Terms: "cats and"}}} {
				want, err := plain.Eval(q)
				if err != nil {
					t.Fatal(err)
				}
				got, err := viewed.Eval(q)
				if err != nil {
					t.Fatal(err)
				}
				byID := map[int64]float32{}
				for i, id := range want.IDs {
					if id != 4 {
						byID[tc.id(id)] = want.Vals[i]
					}
				}
				if !slices.IsSorted(got.IDs) || len(got.IDs) != len(byID) {
					t.Fatalf("%+v: ids %v, want %d ascending", q, got.IDs, len(byID))
				}
				for i, id := range got.IDs {
					if v, ok := byID[id]; !ok || v != got.Vals[i] {
						t.Fatalf("%+v: row %d scored %v, want %v (%v)", q, id, got.Vals[i], v, ok)
					}
				}
			}
		})
	}
}
