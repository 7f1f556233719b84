package fts

import (
	"cmp"
	"slices"
	"strings"

	"github.com/lancens/lancens/store"
)

// Column is a column with a full-text index.
type Column struct {
	// Name is the column's path, as errors name it.
	Name     string
	Analyzer Analyzer
}

// Search evaluates full-text queries over the rows of one table version.
type Search struct {
	// Columns are the columns with a full-text index, by the canonical
	// form of their path.
	Columns map[string]Column
	// Default lists the columns a query that names none searches.
	Default []string
	// Canonical returns the canonical form of a column path a query names
	// (nil: the path as named).
	Canonical func(path string) string
	// Open returns the index of a column, caught up with the rows the
	// search may see and read-locked (Index.RLock) until the search ends.
	// It may be called more than once for a column.
	Open func(Column) (*Index, error)
	// Key names the row set Visible is (a table version): corpus
	// statistics are cached under it.
	Key string
	// Visible are the rows of the version; BM25 statistics count them.
	Visible RowSet
	// Allowed are the rows that may match: visible ones that pass the
	// query's filter.
	Allowed RowSet
	// Rows, when not nil, gives each column's index its own numbering of
	// the rows (Visible and Allowed then go unused): the rows of the
	// index the search sees and may match, and how its row ids map to the
	// ids Eval returns, which the query's clauses combine. It is called
	// after Open, with the index read-locked.
	Rows func(Column) (View, error)
}

// View is how one column's index numbers the rows of a search (see
// Search.Rows).
type View struct {
	Visible, Allowed RowSet
	// IDs replaces row ids of the index, given in ascending order, with
	// the ids Eval returns (in any order); an id Eval returns stands for
	// one row of the index.
	IDs func(ids []int64)
}

// view returns the rows column c's index p sees, may match and how its
// ids map to Eval's.
func (s *Search) view(c Column) (View, error) {
	if s.Rows == nil {
		return View{Visible: s.Visible, Allowed: s.Allowed}, nil
	}
	return s.Rows(c)
}

// common maps the row ids of scores to Eval's ids (see View.ID), keeping
// them in ascending order.
func (v View) common(sc Scores) Scores {
	if v.IDs == nil {
		return sc
	}
	v.IDs(sc.IDs)
	if !slices.IsSorted(sc.IDs) {
		order := make([]int, len(sc.IDs))
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(a, b int) int { return cmp.Compare(sc.IDs[a], sc.IDs[b]) })
		out := Scores{IDs: make([]int64, len(order)), Vals: make([]float32, len(order))}
		for i, j := range order {
			out.IDs[i], out.Vals[i] = sc.IDs[j], sc.Vals[j]
		}
		return out
	}
	return sc
}

// Eval returns the rows matching query q with their BM25 scores. It
// returns InvalidInput (13) for a malformed query or one on a column
// without a full-text index, and Open's errors.
func (s *Search) Eval(q store.FtsQuery) (Scores, error) { return s.eval(q) }

func (s *Search) canonical(path string) string {
	if s.Canonical == nil {
		return path
	}
	return s.Canonical(path)
}

// eval returns the rows matching query n with their scores.
func (s *Search) eval(n store.FtsQuery) (Scores, error) {
	set := 0
	for _, p := range []bool{n.Match != nil, n.Phrase != nil, n.Boost != nil, n.MultiMatch != nil, n.Boolean != nil} {
		if p {
			set++
		}
	}
	if set != 1 {
		return Scores{}, store.Errorf(store.CodeInvalidInput, "a full-text query must set exactly one of match, phrase, boost, multi_match, boolean")
	}
	switch {
	case n.Match != nil:
		return s.match(*n.Match)
	case n.Phrase != nil:
		return s.phrase(*n.Phrase)
	case n.MultiMatch != nil:
		var out Scores
		for _, m := range n.MultiMatch.Matches {
			r, err := s.match(m)
			if err != nil {
				return Scores{}, err
			}
			out = union(out, r)
		}
		return out, nil
	case n.Boost != nil:
		pos, err := s.eval(n.Boost.Positive)
		if err != nil {
			return Scores{}, err
		}
		neg, err := s.eval(n.Boost.Negative)
		if err != nil {
			return Scores{}, err
		}
		return timesWhere(pos, neg, n.Boost.NegativeBoost), nil
	}
	return s.boolean(*n.Boolean)
}

// boolean requires every must, excludes every must_not, and adds the
// scores of should (which must match something when there is no must).
func (s *Search) boolean(b store.FtsBoolean) (Scores, error) {
	var out Scores
	for i, q := range b.Must {
		r, err := s.eval(q)
		if err != nil {
			return Scores{}, err
		}
		if i == 0 {
			out = r
		} else {
			out = intersect(out, r)
		}
	}
	var should Scores
	for _, q := range b.Should {
		r, err := s.eval(q)
		if err != nil {
			return Scores{}, err
		}
		should = union(should, r)
	}
	if len(b.Must) == 0 {
		out = should
	} else {
		out = plusWhere(out, should)
	}
	for _, q := range b.MustNot {
		r, err := s.eval(q)
		if err != nil {
			return Scores{}, err
		}
		out = without(out, r)
	}
	return out, nil
}

// targets returns the columns a query on column (or, for "", the default
// columns) searches. Returns InvalidInput (13) for a column without a
// full-text index.
func (s *Search) targets(column string) ([]Column, error) {
	cols := s.Default
	if column != "" {
		cols = []string{s.canonical(column)}
	}
	var out []Column
	for _, c := range cols {
		ix, ok := s.Columns[s.canonical(c)]
		if !ok {
			return nil, store.Errorf(store.CodeInvalidInput, "column %s has no full-text index", c)
		}
		out = append(out, ix)
	}
	return out, nil
}

// match finds rows containing any (OR) or all (AND) of the terms, or of
// their fuzzy variants.
func (s *Search) match(m store.FtsMatch) (Scores, error) {
	and := false
	switch strings.ToUpper(m.Operator) {
	case "", "OR":
	case "AND":
		and = true
	default:
		return Scores{}, store.Errorf(store.CodeInvalidInput, "unknown match operator %q (And or Or)", m.Operator)
	}
	if m.Fuzziness < 0 {
		return Scores{}, store.Errorf(store.CodeInvalidInput, "fuzziness must not be negative")
	}
	boost := m.Boost
	if boost == 0 {
		boost = 1
	}
	targets, err := s.targets(m.Column)
	if err != nil {
		return Scores{}, err
	}
	var out Scores
	for _, ix := range targets {
		p, err := s.Open(ix)
		if err != nil {
			return Scores{}, err
		}
		rows, err := s.view(ix)
		if err != nil {
			return Scores{}, err
		}
		c := p.statsFor(s.Key, rows.Visible)
		// Or sums every term's scores in one accumulator; And intersects
		// the rows of each term.
		var col Scores
		acc := newAccumulator(len(p.docLen))
		for i, term := range ix.Analyzer.Terms(m.Terms) {
			variants := []string{term}
			if m.Fuzziness > 0 {
				variants = p.fuzzy(term, m.Fuzziness, m.PrefixLength, m.MaxExpansions)
			}
			if and && i > 0 {
				acc = newAccumulator(len(p.docLen))
			}
			for _, v := range variants {
				p.score(c, v, rows.Visible, rows.Allowed, acc)
			}
			switch {
			case !and:
			case i == 0:
				col = acc.scores()
			default:
				col = intersect(col, acc.scores())
			}
		}
		if !and {
			col = acc.scores()
		}
		out = union(out, scaled(rows.common(col), boost))
	}
	return out, nil
}

// phrase finds rows with the terms in order, at most slop positions apart,
// scored by the BM25 of the terms.
func (s *Search) phrase(ph store.FtsPhrase) (Scores, error) {
	if ph.Slop < 0 {
		return Scores{}, store.Errorf(store.CodeInvalidInput, "slop must not be negative")
	}
	targets, err := s.targets(ph.Column)
	if err != nil {
		return Scores{}, err
	}
	var out Scores
	for _, ix := range targets {
		if !ix.Analyzer.WithPosition {
			return Scores{}, store.Errorf(store.CodeInvalidInput, "phrase queries need positions; the full-text index on %s was built without with_position", ix.Name)
		}
		p, err := s.Open(ix)
		if err != nil {
			return Scores{}, err
		}
		rows, err := s.view(ix)
		if err != nil {
			return Scores{}, err
		}
		terms := ix.Analyzer.Terms(ph.Terms)
		if len(terms) == 0 {
			continue
		}
		matched := p.phrase(terms, ph.Slop, rows.Allowed)
		c := p.statsFor(s.Key, rows.Visible)
		acc := newAccumulator(len(p.docLen))
		for _, term := range terms {
			p.score(c, term, rows.Visible, matched, acc)
		}
		out = union(out, rows.common(acc.scores()))
	}
	return out, nil
}
