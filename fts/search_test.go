package fts

import (
	"math"
	"slices"
	"testing"

	"github.com/lancens/lancens/store"
)

// docs are the rows of the test index, by row id.
var docs = []string{
	"rivers and mountains",
	"mountains mountains everywhere",
	"cats and dogs",
	"a b b c",
	"the river of cats",
}

// testSearch indexes docs (with positions unless noPositions) and returns
// a search over all of them.
func testSearch(t *testing.T, noPositions bool) *Search {
	t.Helper()
	f, positions := false, !noPositions
	a, err := NewAnalyzer(store.TextIndexParams{Stem: &f, RemoveStopWords: &f, WithPosition: &positions})
	if err != nil {
		t.Fatal(err)
	}
	ix := NewIndex(positions)
	if _, err := ix.CatchUp(func(after int64, add func(int64, []string)) error {
		for id := after + 1; id < int64(len(docs)); id++ {
			add(id, a.Terms(docs[id]))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	all := RowSet{1<<len(docs) - 1}
	return &Search{
		Columns: map[string]Column{"text": {Name: "text", Analyzer: a}},
		Default: []string{"text"},
		Open:    func(Column) (*Index, error) { return ix, nil },
		Key:     "t@1", Visible: all, Allowed: all,
	}
}

// bm25 is the textbook BM25 score of a row for the query terms, over the
// rows of visible (k1 1.2, b 0.75).
func bm25(a Analyzer, visible []int64, row int64, query []string) float64 {
	var total float64
	for _, id := range visible {
		total += float64(len(a.Terms(docs[id])))
	}
	n := float64(len(visible))
	avg := total / n
	var score float64
	for _, q := range query {
		df, tf := 0.0, 0.0
		for _, id := range visible {
			if slices.Contains(a.Terms(docs[id]), q) {
				df++
			}
		}
		for _, term := range a.Terms(docs[row]) {
			if term == q {
				tf++
			}
		}
		if tf == 0 {
			continue
		}
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		dl := float64(len(a.Terms(docs[row])))
		score += idf * tf * 2.2 / (tf + 1.2*(0.25+0.75*dl/avg))
	}
	return score
}

func match(terms string) store.FtsQuery { return store.FtsQuery{Match: &store.FtsMatch{Terms: terms}} }

// TestSearchScores checks match scores against BM25 computed from its
// definition, over all rows and, with a filter, over the allowed rows only
// (statistics still count every visible row).
func TestSearchScores(t *testing.T) {
	s := testSearch(t, false)
	a := s.Columns["text"].Analyzer
	all := []int64{0, 1, 2, 3, 4}
	for _, allowed := range [][]int64{all, {1, 4}} {
		s.Allowed = RowSet{0}
		for _, id := range allowed {
			s.Allowed[0] |= 1 << id
		}
		got, err := s.Eval(match("mountains cats"))
		if err != nil {
			t.Fatal(err)
		}
		var want []int64
		for _, id := range allowed {
			if bm25(a, all, id, []string{"mountains", "cats"}) > 0 {
				want = append(want, id)
			}
		}
		if !slices.Equal(got.IDs, want) {
			t.Fatalf("allowed %v: rows %v, want %v", allowed, got.IDs, want)
		}
		for i, id := range got.IDs {
			if w := bm25(a, all, id, []string{"mountains", "cats"}); math.Abs(float64(got.Vals[i])-w) > 1e-5 {
				t.Fatalf("row %d: score %v, want %v", id, got.Vals[i], w)
			}
		}
	}
}

// TestSearchQueries checks which rows each kind of query matches.
func TestSearchQueries(t *testing.T) {
	for _, tc := range []struct {
		name string
		q    store.FtsQuery
		want []int64
	}{
		{"MatchOr", match("rivers dogs"), []int64{0, 2}},
		{"MatchAnd", store.FtsQuery{Match: &store.FtsMatch{Terms: "cats and", Operator: "AND"}}, []int64{2}},
		{"Fuzzy", store.FtsQuery{Match: &store.FtsMatch{Terms: "rivers", Fuzziness: 1}}, []int64{0, 4}},
		{"FuzzyPrefix", store.FtsQuery{Match: &store.FtsMatch{Terms: "rivers", Fuzziness: 1, PrefixLength: 6}}, []int64{0}},
		{"Phrase", store.FtsQuery{Phrase: &store.FtsPhrase{Terms: "a b c"}}, nil},
		{"PhraseSlop", store.FtsQuery{Phrase: &store.FtsPhrase{Terms: "a b c", Slop: 1}}, []int64{3}},
		{"PhraseExact", store.FtsQuery{Phrase: &store.FtsPhrase{Terms: "b b c"}}, []int64{3}},
		{"BooleanMustNot", store.FtsQuery{Boolean: &store.FtsBoolean{
			Should:  []store.FtsQuery{match("cats mountains")},
			MustNot: []store.FtsQuery{match("dogs")},
		}}, []int64{0, 1, 4}},
		{"BooleanMust", store.FtsQuery{Boolean: &store.FtsBoolean{
			Must: []store.FtsQuery{match("cats"), match("river")},
		}}, []int64{4}},
		{"MultiMatch", store.FtsQuery{MultiMatch: &store.FtsMultiMatch{Matches: []store.FtsMatch{{Terms: "dogs"}, {Terms: "everywhere", Column: "text"}}}}, []int64{1, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := testSearch(t, false).Eval(tc.q)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.IDs, tc.want) {
				t.Fatalf("rows %v, want %v", got.IDs, tc.want)
			}
		})
	}
}

// TestSearchBoostAndTop checks that a boost query scales the scores of
// the rows matching its negative query, and that Top orders by score.
func TestSearchBoostAndTop(t *testing.T) {
	s := testSearch(t, false)
	plain, err := s.Eval(match("mountains cats"))
	if err != nil {
		t.Fatal(err)
	}
	boosted, err := s.Eval(store.FtsQuery{Boost: &store.FtsBoost{Positive: match("mountains cats"), Negative: match("dogs"), NegativeBoost: 0.5}})
	if err != nil {
		t.Fatal(err)
	}
	for i, id := range plain.IDs {
		want := plain.Vals[i]
		if id == 2 {
			want *= 0.5
		}
		if boosted.IDs[i] != id || boosted.Vals[i] != want {
			t.Fatalf("row %d: boosted %v, want %v", id, boosted.Vals[i], want)
		}
	}
	top := plain.Top(2)
	if len(top) != 2 || top[0].Score < top[1].Score {
		t.Fatalf("top 2: %+v", top)
	}
	for _, h := range top {
		for i, id := range plain.IDs {
			if id != h.ID && plain.Vals[i] > top[1].Score {
				if !slices.ContainsFunc(top, func(x Hit) bool { return x.ID == id }) {
					t.Fatalf("row %d (score %v) is not in the top 2 %+v", id, plain.Vals[i], top)
				}
			}
		}
	}
}

// TestSearchErrors checks that malformed queries and queries an index
// cannot answer are InvalidInput.
func TestSearchErrors(t *testing.T) {
	for _, tc := range []struct {
		name        string
		noPositions bool
		q           store.FtsQuery
	}{
		{"NoClause", false, store.FtsQuery{}},
		{"TwoClauses", false, store.FtsQuery{Match: &store.FtsMatch{Terms: "a"}, Phrase: &store.FtsPhrase{Terms: "a"}}},
		{"UnknownColumn", false, store.FtsQuery{Match: &store.FtsMatch{Terms: "a", Column: "other"}}},
		{"BadOperator", false, store.FtsQuery{Match: &store.FtsMatch{Terms: "a", Operator: "XOR"}}},
		{"NegativeFuzziness", false, store.FtsQuery{Match: &store.FtsMatch{Terms: "a", Fuzziness: -1}}},
		{"NegativeSlop", false, store.FtsQuery{Phrase: &store.FtsPhrase{Terms: "a b", Slop: -1}}},
		{"PhraseWithoutPositions", true, store.FtsQuery{Phrase: &store.FtsPhrase{Terms: "a b"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := testSearch(t, tc.noPositions).Eval(tc.q); store.ErrorCode(err) != store.CodeInvalidInput {
				t.Fatalf("error %v, want InvalidInput", err)
			}
		})
	}
}
