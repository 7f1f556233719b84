package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/lancens/lancens/store"
)

// A full-text index of a string column is a table, named after the index,
// holding for each row version (by row id) the terms of the column that the
// index's analyzer produced; a trigger adds rows as they are written. It is
// the durable form: searches use an inverted index built from it in memory
// (postings.go), keep the rows visible at their version, and score with
// BM25.

// buildTextIndex creates and fills the terms table of index r.
func buildTextIndex(ctx context.Context, tx *Tx, t *tableRow, r *indexRow) error {
	a, err := newAnalyzer(r.params.Text)
	if err != nil {
		return err
	}
	cfg, err := json.Marshal(a)
	if err != nil {
		return internal("build index", err)
	}
	name, col := sqlIndexName(t, r), quoteColumn(r.physical)
	for _, q := range []string{
		fmt.Sprintf(`CREATE TABLE %s (rowid INTEGER PRIMARY KEY, terms TEXT NOT NULL)`, name),
		fmt.Sprintf(`INSERT INTO %s (rowid, terms) SELECT _rowid, lance_fts_terms(%s, '%s') FROM %s WHERE %s IS NOT NULL`,
			name, col, cfg, dataTable(t), col),
		fmt.Sprintf(`CREATE TRIGGER %s_add AFTER INSERT ON %s WHEN new.%s IS NOT NULL BEGIN
			INSERT INTO %s (rowid, terms) VALUES (new._rowid, lance_fts_terms(new.%s, '%s')); END`,
			name, dataTable(t), col, name, col, cfg),
	} {
		if _, err := tx.Tx.ExecContext(ctx, q); err != nil {
			return internal("build full-text index", err)
		}
	}
	return nil
}

// textIndex is a built full-text index on one column.
type textIndex struct {
	uuid     string
	table    string
	column   string
	analyzer analyzer
}

// textIndexes returns the built full-text indexes of t, by column path.
func textIndexes(ctx context.Context, tx *Tx, t *tableRow, ts *tableSchema) (map[string]textIndex, error) {
	rows, err := listIndexRows(ctx, tx, t)
	if err != nil {
		return nil, err
	}
	out := map[string]textIndex{}
	for _, r := range rows {
		if r.indexType != store.IndexInverted || r.status != store.IndexSucceeded {
			continue
		}
		// The index applies while its column keeps its physical storage.
		if _, fl, ok := ts.lookup(splitPath(r.columnPath)); !ok || fl.Column != r.physical {
			continue
		}
		a, err := newAnalyzer(r.params.Text)
		if err != nil {
			return nil, err
		}
		out[r.columnPath] = textIndex{uuid: r.uuid, table: sqlIndexName(t, r), column: r.columnPath, analyzer: a}
	}
	return out, nil
}

// textSearch evaluates full-text queries on one table version.
type textSearch struct {
	ctx      context.Context
	tx       *Tx
	db       *DB
	table    string // uuid
	indexes  map[string]textIndex
	columns  []string                 // default columns of match queries
	version  string                   // names the table version, for cached statistics
	visible  rowSet                   // rows of the version: BM25 statistics
	allowed  rowSet                   // rows that may match: visible and passing the filter
	postings map[string]*postingIndex // by index uuid, caught up and read-locked
}

// searchText runs the full-text search of q on table t.
func (db *DB) searchText(ctx context.Context, tx *Tx, t *tableRow, q store.Query) (*store.Result, error) {
	v, ts, err := schemaAt(ctx, tx, t, q.Version)
	if err != nil {
		return nil, err
	}
	idx, err := textIndexes(ctx, tx, t, ts)
	if err != nil {
		return nil, err
	}
	if len(idx) == 0 {
		return nil, store.Errorf(store.CodeInvalidInput, "table %s has no full-text index; create an INVERTED index first", displayID(t.ID))
	}
	visible, err := db.visibleRows(ctx, tx, t, v)
	if err != nil {
		return nil, err
	}
	s := &textSearch{ctx: ctx, tx: tx, db: db, table: t.UUID, indexes: idx, columns: q.Text.Columns, version: fmt.Sprintf("%s@%d", t.UUID, v),
		visible: visible, allowed: visible, postings: map[string]*postingIndex{}}
	defer s.release()
	if len(s.columns) == 0 {
		for c := range idx {
			s.columns = append(s.columns, c)
		}
		slices.Sort(s.columns)
	}
	if q.Filter != "" {
		// The filter is evaluated over the visible rows only.
		if s.allowed, err = db.filterRows(ctx, tx, t, ts, v, q.Filter); err != nil {
			return nil, err
		}
	}
	found, err := s.eval(q.Text.Query)
	if err != nil {
		return nil, err
	}
	k := int(q.Limit)
	if k <= 0 {
		k = defaultK
	}
	if err := checkSearchRows(q, int64(min(k, len(found.ids))), "the matches up to k"); err != nil {
		return nil, err
	}
	hits := topScores(found, k)
	hits = hits[min(len(hits), int(q.Offset)):]
	return fetchHits(ctx, tx, t, ts, q, v, hits, "_score", false)
}

// topScores returns the k best-scored rows, best first (ties by row id).
func topScores(found scores, k int) []hit {
	better := func(a, b hit) bool { return a.value > b.value || (a.value == b.value && a.id < b.id) }
	var top []hit // a min-heap on better: top[0] is the worst kept
	down := func(i int) {
		for {
			l, w := 2*i+1, i
			if l < len(top) && better(top[w], top[l]) {
				w = l
			}
			if r := l + 1; r < len(top) && better(top[w], top[r]) {
				w = r
			}
			if w == i {
				return
			}
			top[i], top[w] = top[w], top[i]
			i = w
		}
	}
	for i, id := range found.ids {
		h := hit{id: id, value: found.vals[i]}
		switch {
		case len(top) < k:
			top = append(top, h)
			for i := len(top) - 1; i > 0 && better(top[(i-1)/2], top[i]); i = (i - 1) / 2 {
				top[i], top[(i-1)/2] = top[(i-1)/2], top[i]
			}
		case better(h, top[0]):
			top[0] = h
			down(0)
		}
	}
	slices.SortFunc(top, func(a, b hit) int {
		if better(a, b) {
			return -1
		}
		return 1
	})
	return top
}

// index returns the posting index of ix, caught up with the rows written
// since it was last used and read-locked until the search ends.
func (s *textSearch) index(ix textIndex) (*postingIndex, error) {
	if p, ok := s.postings[ix.uuid]; ok {
		return p, nil
	}
	key := cacheIndex{table: s.table, index: ix.uuid}.postingsKey()
	loaded := false
	val, err := s.db.cache.get(s.ctx, key, func() (cached, error) {
		p := newPostingIndex(ix.analyzer.WithPosition)
		if _, err := p.catchUp(s.ctx, s.tx, ix.table, ix.analyzer.storedTerms); err != nil {
			return nil, err
		}
		loaded = true
		return p, nil
	})
	if err != nil {
		return nil, err
	}
	p := val.(*postingIndex)
	if !loaded {
		grew, err := p.catchUp(s.ctx, s.tx, ix.table, ix.analyzer.storedTerms)
		if err != nil {
			return nil, err
		}
		if grew {
			s.db.cache.resize(key, p)
		}
	}
	p.mu.RLock()
	s.postings[ix.uuid] = p
	return p, nil
}

// release unlocks the posting indexes the search used.
func (s *textSearch) release() {
	for _, p := range s.postings {
		p.mu.RUnlock()
	}
}

// eval returns the rows matching query n with their scores.
func (s *textSearch) eval(n store.FtsQuery) (scores, error) {
	set := 0
	for _, p := range []bool{n.Match != nil, n.Phrase != nil, n.Boost != nil, n.MultiMatch != nil, n.Boolean != nil} {
		if p {
			set++
		}
	}
	if set != 1 {
		return scores{}, store.Errorf(store.CodeInvalidInput, "a full-text query must set exactly one of match, phrase, boost, multi_match, boolean")
	}
	switch {
	case n.Match != nil:
		return s.match(*n.Match)
	case n.Phrase != nil:
		return s.phrase(*n.Phrase)
	case n.MultiMatch != nil:
		var out scores
		for _, m := range n.MultiMatch.Matches {
			r, err := s.match(m)
			if err != nil {
				return scores{}, err
			}
			out = union(out, r)
		}
		return out, nil
	case n.Boost != nil:
		pos, err := s.eval(n.Boost.Positive)
		if err != nil {
			return scores{}, err
		}
		neg, err := s.eval(n.Boost.Negative)
		if err != nil {
			return scores{}, err
		}
		return timesWhere(pos, neg, n.Boost.NegativeBoost), nil
	}
	return s.boolean(*n.Boolean)
}

// boolean requires every must, excludes every must_not, and adds the
// scores of should (which must match something when there is no must).
func (s *textSearch) boolean(b store.FtsBoolean) (scores, error) {
	var out scores
	for i, q := range b.Must {
		r, err := s.eval(q)
		if err != nil {
			return scores{}, err
		}
		if i == 0 {
			out = r
		} else {
			out = intersect(out, r)
		}
	}
	var should scores
	for _, q := range b.Should {
		r, err := s.eval(q)
		if err != nil {
			return scores{}, err
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
			return scores{}, err
		}
		out = without(out, r)
	}
	return out, nil
}

// targets returns the indexes a query on column (or the default columns)
// searches. Returns InvalidInput (13) for a column without a full-text
// index.
func (s *textSearch) targets(column string) ([]textIndex, error) {
	cols := s.columns
	if column != "" {
		cols = []string{formatPath(splitPath(column))}
	}
	var out []textIndex
	for _, c := range cols {
		ix, ok := s.indexes[formatPath(splitPath(c))]
		if !ok {
			return nil, store.Errorf(store.CodeInvalidInput, "column %s has no full-text index", c)
		}
		out = append(out, ix)
	}
	return out, nil
}

// match finds rows containing any (OR) or all (AND) of the terms, or of
// their fuzzy variants.
func (s *textSearch) match(m store.FtsMatch) (scores, error) {
	and := false
	switch strings.ToUpper(m.Operator) {
	case "", "OR":
	case "AND":
		and = true
	default:
		return scores{}, store.Errorf(store.CodeInvalidInput, "unknown match operator %q (And or Or)", m.Operator)
	}
	if m.Fuzziness < 0 {
		return scores{}, store.Errorf(store.CodeInvalidInput, "fuzziness must not be negative")
	}
	boost := m.Boost
	if boost == 0 {
		boost = 1
	}
	targets, err := s.targets(m.Column)
	if err != nil {
		return scores{}, err
	}
	var out scores
	for _, ix := range targets {
		p, err := s.index(ix)
		if err != nil {
			return scores{}, err
		}
		c := p.statsFor(s.version, s.visible)
		// Or sums every term's scores in one accumulator; And intersects
		// the rows of each term.
		var col scores
		acc := newAccumulator(len(p.docLen))
		for i, term := range ix.analyzer.terms(m.Terms) {
			variants := []string{term}
			if m.Fuzziness > 0 {
				variants = p.fuzzy(term, m.Fuzziness, m.PrefixLength, m.MaxExpansions)
			}
			if and && i > 0 {
				acc = newAccumulator(len(p.docLen))
			}
			for _, v := range variants {
				p.score(c, v, s.visible, s.allowed, &acc)
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
		out = union(out, scaled(col, boost))
	}
	return out, nil
}

// phrase finds rows with the terms in order, at most slop positions apart,
// scored by the BM25 of the terms.
func (s *textSearch) phrase(ph store.FtsPhrase) (scores, error) {
	if ph.Slop < 0 {
		return scores{}, store.Errorf(store.CodeInvalidInput, "slop must not be negative")
	}
	targets, err := s.targets(ph.Column)
	if err != nil {
		return scores{}, err
	}
	var out scores
	for _, ix := range targets {
		if !ix.analyzer.WithPosition {
			return scores{}, store.Errorf(store.CodeInvalidInput, "phrase queries need positions; the full-text index on %s was built without with_position", ix.column)
		}
		p, err := s.index(ix)
		if err != nil {
			return scores{}, err
		}
		terms := ix.analyzer.terms(ph.Terms)
		if len(terms) == 0 {
			continue
		}
		matched := p.phrase(terms, ph.Slop, s.allowed)
		c := p.statsFor(s.version, s.visible)
		acc := newAccumulator(len(p.docLen))
		for _, term := range terms {
			p.score(c, term, s.visible, matched, &acc)
		}
		out = union(out, acc.scores())
	}
	return out, nil
}

// fuzzy returns the index's terms within edit distance max of term that
// share its first prefix characters, at most expansions of them (default
// 50), nearest first.
func (p *postingIndex) fuzzy(term string, max, prefix, expansions int) []string {
	if expansions <= 0 {
		expansions = 50
	}
	pre := ""
	if prefix > 0 && prefix <= len(term) {
		pre = term[:prefix]
	}
	type cand struct {
		term string
		dist int
	}
	var cands []cand
	for w := range p.terms {
		if !strings.HasPrefix(w, pre) {
			continue
		}
		if d := editDistance(term, w, max); d <= max {
			cands = append(cands, cand{w, d})
		}
	}
	slices.SortFunc(cands, func(a, b cand) int {
		if a.dist != b.dist {
			return a.dist - b.dist
		}
		return strings.Compare(a.term, b.term)
	})
	out := make([]string, 0, min(len(cands), expansions))
	for _, c := range cands[:min(len(cands), expansions)] {
		out = append(out, c.term)
	}
	return out
}

// editDistance is the Levenshtein distance of a and b, or max+1 once it is
// known to exceed max.
func editDistance(a, b string, max int) int {
	ra, rb := []rune(a), []rune(b)
	if d := len(ra) - len(rb); d > max || -d > max {
		return max + 1
	}
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		best := cur[0]
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			best = min(best, cur[j])
		}
		if best > max {
			return max + 1
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
