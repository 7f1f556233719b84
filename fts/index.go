package fts

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Index is the in-memory inverted index of one full-text index: for every
// term, the rows (by id, ascending) holding it with its frequency and,
// when the index keeps positions, where. Its owner adds the analysed terms
// of rows in ascending id order (CatchUp) and saves and loads it
// (MarshalBinary, LoadIndex). Searches hold its read lock (RLock) while
// they use it.
type Index struct {
	mu        sync.RWMutex
	lastRowID int64
	positions bool
	terms     map[string]*postings
	// docLen is the number of terms of each indexed row, by row id; -1
	// for ids the index does not hold.
	docLen []int32
	// corpora caches statistics by the key of the row set they were
	// computed over (a table version), for the current lastRowID.
	corporaMu sync.Mutex
	corpora   map[string]corpus
	// size is the bytes the index holds; add keeps it current. It is
	// read without mu (Bytes).
	size atomic.Int64
}

type postings struct {
	rows []int64
	tf   []int32
	pos  [][]int32 // nil unless the index keeps positions
}

// Estimated bytes of the parts of a posting index: the index itself with
// its corpus statistics (at most 65, of about 80 bytes), and each term (its
// map slot, string header and postings struct; its text is counted apart).
const (
	postingIndexBytes = 256 + 65*80
	termBytes         = 16 + 8 + 16 + 72
)

// NewIndex returns an empty index; with positions it keeps where each term
// occurs, which phrase queries need.
func NewIndex(positions bool) *Index {
	p := &Index{lastRowID: -1, positions: positions, terms: map[string]*postings{}}
	p.size.Store(postingIndexBytes)
	return p
}

// Bytes returns an estimate of the memory the index holds.
func (p *Index) Bytes() int64 { return p.size.Load() }

// RLock takes the read lock searches hold while they use the index.
func (p *Index) RLock() { p.mu.RLock() }

// RUnlock releases the read lock.
func (p *Index) RUnlock() { p.mu.RUnlock() }

// CatchUp extends the index, under its write lock, with the rows next
// yields: next is called with the highest row id the index holds and calls
// add for each later row, in ascending row id order, with its terms. It
// reports whether the index grew, and returns next's error (the rows added
// before it stay).
func (p *Index) CatchUp(next func(after int64, add func(id int64, terms []string)) error) (bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	grew := int64(0)
	err := next(p.lastRowID, func(id int64, terms []string) { grew += p.add(id, terms) })
	p.size.Add(grew)
	return grew > 0, err
}

// add indexes one row's terms and returns the bytes that took.
func (p *Index) add(id int64, terms []string) int64 {
	var grew int64
	before := cap(p.docLen)
	for int64(len(p.docLen)) <= id {
		p.docLen = append(p.docLen, -1)
	}
	grew += int64(cap(p.docLen)-before) * 4
	p.docLen[id] = int32(len(terms))
	for i, term := range terms {
		ps := p.terms[term]
		if ps == nil {
			ps = &postings{}
			p.terms[term] = ps
			grew += termBytes + int64(len(term))
		}
		n := len(ps.rows)
		if n == 0 || ps.rows[n-1] != id {
			rows, tf, pos := cap(ps.rows), cap(ps.tf), cap(ps.pos)
			ps.rows = append(ps.rows, id)
			ps.tf = append(ps.tf, 0)
			if p.positions {
				ps.pos = append(ps.pos, nil)
			}
			grew += int64(cap(ps.rows)-rows)*8 + int64(cap(ps.tf)-tf)*4 + int64(cap(ps.pos)-pos)*24
			n++
		}
		ps.tf[n-1]++
		if p.positions {
			c := cap(ps.pos[n-1])
			ps.pos[n-1] = append(ps.pos[n-1], int32(i))
			grew += int64(cap(ps.pos[n-1])-c) * 4
		}
	}
	p.lastRowID = id
	return grew
}

// bm25 scores rows for a version: k1 and b as in Lance (tantivy).
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// corpus holds the BM25 statistics of the rows a search sees.
type corpus struct {
	docs   float64
	avgLen float64
}

// statsFor returns the corpus statistics of the rows of a table version
// (key names it), computing them on first use. Callers hold p.mu.
func (p *Index) statsFor(key string, visible RowSet) corpus {
	key = fmt.Sprintf("%s/%d", key, p.lastRowID)
	p.corporaMu.Lock()
	defer p.corporaMu.Unlock()
	if c, ok := p.corpora[key]; ok {
		return c
	}
	c := p.stats(visible)
	if p.corpora == nil || len(p.corpora) > 64 {
		p.corpora = map[string]corpus{}
	}
	p.corpora[key] = c
	return c
}

// stats computes the corpus statistics over the rows visible passes.
func (p *Index) stats(visible RowSet) corpus {
	var n, total float64
	for id, l := range p.docLen {
		if l >= 0 && visible.Has(int64(id)) {
			n++
			total += float64(l)
		}
	}
	c := corpus{docs: n, avgLen: 1}
	if n > 0 {
		c.avgLen = total / n
	}
	return c
}

// score adds to acc the BM25 score of term for each row of allowed.
// Document frequencies count the rows of visible (allowed is a subset).
func (p *Index) score(c corpus, term string, visible, allowed RowSet, acc *accumulator) {
	ps := p.terms[term]
	if ps == nil {
		return
	}
	df := 0
	for _, id := range ps.rows {
		if visible.Has(id) {
			df++
		}
	}
	if df == 0 {
		return
	}
	idf := math.Log(1 + (c.docs-float64(df)+0.5)/(float64(df)+0.5))
	base, perTerm := bm25K1*(1-bm25B), bm25K1*bm25B/c.avgLen
	for i, id := range ps.rows {
		if !allowed.Has(id) {
			continue
		}
		tf := float64(ps.tf[i])
		acc.add(id, float32(idf*tf*(bm25K1+1)/(tf+base+perTerm*float64(p.docLen[id]))))
	}
}

// phrase returns the visible rows holding terms as a phrase: consecutive,
// or within slop extra positions, in order.
func (p *Index) phrase(terms []string, slop int, visible RowSet) RowSet {
	lists := make([]*postings, len(terms))
	for i, t := range terms {
		if lists[i] = p.terms[t]; lists[i] == nil {
			return nil
		}
	}
	out := make(RowSet, len(visible))
	first := lists[0]
	for i, id := range first.rows {
		if !visible.Has(id) {
			continue
		}
		// Positions of each later term in this row.
		rest := make([][]int32, len(terms)-1)
		ok := true
		for j, ps := range lists[1:] {
			k := searchRows(ps.rows, id)
			if k < 0 {
				ok = false
				break
			}
			rest[j] = ps.pos[k]
		}
		if ok && phraseAt(first.pos[i], rest, slop) {
			out[id>>6] |= 1 << (id & 63)
		}
	}
	return out
}

// phraseAt reports whether, from some position of the first term, each
// later term follows the previous within 1+slop positions. Every choice of
// positions counts, not only the nearest: with slop 1, "a b b c" holds
// "a b c" through the second b.
func phraseAt(starts []int32, rest [][]int32, slop int) bool {
	// reach holds the positions (ascending) at which the terms so far can
	// end.
	reach := starts
	for _, positions := range rest {
		var next []int32
		i := 0
		for _, q := range positions {
			for i < len(reach) && reach[i] < q {
				i++
			}
			// reach[i-1] is the nearest reachable position before q.
			if i > 0 && int(q-reach[i-1]) <= 1+slop {
				next = append(next, q)
			}
		}
		reach = next
	}
	return len(reach) > 0
}

func searchRows(rows []int64, id int64) int {
	lo, hi := 0, len(rows)
	for lo < hi {
		m := (lo + hi) / 2
		if rows[m] < id {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(rows) && rows[lo] == id {
		return lo
	}
	return -1
}

// fuzzy returns the index's terms within edit distance max of term that
// share its first prefix characters, at most expansions of them (default
// 50), nearest first.
func (p *Index) fuzzy(term string, max, prefix, expansions int) []string {
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
