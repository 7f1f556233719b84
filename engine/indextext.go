package engine

import (
	"context"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/lancens/lancens/fts"
	"github.com/lancens/lancens/lance/schema"
	"github.com/lancens/lancens/lance/table"
	"github.com/lancens/lancens/store"
)

// A full-text index is package fts's posting lists over the rows of the
// fragments its build covers. fts numbers rows densely: each fragment is a
// segment of consecutive row ids, in the order of the build's fragments
// (a fragment's row at offset o is segment base + o). A search meets
// fragments the build does not cover (written since, or older ones after
// a restore) and searches them exactly, as Lance searches unindexed rows:
// their text is analysed when a search first meets them and added to the
// loaded index as a segment of its own, so that the next search finds it
// there. Which segments a search sees is its version's business (View).

// textIndex is a loaded full-text index. Searches hold the read lock of
// ix while they use it. One search at a time grows it (mu), and only
// under the write lock of ix changes the segments, so that a search
// holding the read lock reads them as they are.
type textIndex struct {
	analyzer fts.Analyzer
	ix       *fts.Index
	mu       sync.Mutex
	segs     map[segmentKey]int
	order    []textSegment // by base
	next     int64         // the base of the next segment
	// segBytes counts the memory of the segments, for CacheBytes (which
	// the cache calls under its own lock: it must not wait for mu).
	segBytes atomic.Int64
}

// segmentKey names a fragment as a segment holds it: its id, the data
// file holding the column (reader.columnFile) and its physical rows.
type segmentKey struct {
	frag uint64
	file string
	rows uint64
}

// textSegment is the row ids of one fragment in a textIndex.
type textSegment struct {
	frag       uint64
	base, rows int64
}

// CacheBytes implements memcache.Value.
func (t *textIndex) CacheBytes() int64 { return t.ix.Bytes() + t.segBytes.Load() }

// newTextIndex returns the loaded form of posting index ix, built with
// analyzer a over fragments, in order.
func newTextIndex(a fts.Analyzer, ix *fts.Index, fragments []coveredFrag) *textIndex {
	t := &textIndex{analyzer: a, ix: ix, segs: map[segmentKey]int{}}
	for _, f := range fragments {
		t.addSegment(segmentKey{frag: f.ID, file: f.File, rows: f.Rows})
	}
	return t
}

// addSegment numbers the rows of fragment k after the last segment and
// returns its base. Callers own t alone, or hold mu and the write lock of
// ix.
func (t *textIndex) addSegment(k segmentKey) int64 {
	base := t.next
	t.segs[k] = len(t.order)
	t.order = append(t.order, textSegment{frag: k.frag, base: base, rows: int64(k.rows)})
	t.next += int64(k.rows)
	t.segBytes.Add(96 + int64(len(k.file)))
	return base
}

// add adds fragment k as a new segment whose rows have the terms terms
// (nil for a row without text). Callers own t alone, or hold mu.
func (t *textIndex) add(k segmentKey, terms [][]string) error {
	_, err := t.ix.CatchUp(func(_ int64, add func(int64, []string)) error {
		base := t.addSegment(k)
		for i, ts := range terms {
			if ts != nil {
				add(base+int64(i), ts)
			}
		}
		return nil
	})
	return err
}

// addresses replaces row ids, ascending, with their row addresses. Callers
// hold the read lock of ix.
func (t *textIndex) addresses(ids []int64) {
	seg := 0
	for i, id := range ids {
		if s := t.order[seg]; id >= s.base+s.rows || id < s.base {
			seg = sort.Search(len(t.order), func(k int) bool { return t.order[k].base+t.order[k].rows > id })
		}
		s := t.order[seg]
		ids[i] = int64(rowAddress(s.frag, int(id-s.base)))
	}
}

func loadTextIndex(data []byte, ix *indexRecord, b *indexBuild) (*textIndex, error) {
	a, err := fts.NewAnalyzer(ix.def.Text)
	if err != nil {
		return nil, err
	}
	p, err := fts.LoadIndex(data)
	if err != nil {
		return nil, err
	}
	return newTextIndex(a, p, b.Fragments), nil
}

// buildTextIndex builds full-text index ix over column col of every
// fragment of build b, deleted rows included (see index.go).
func (rd *reader) buildTextIndex(ctx context.Context, col indexColumn, ix *indexRecord, b *indexBuild) (*textIndex, error) {
	a, err := fts.NewAnalyzer(ix.def.Text)
	if err != nil {
		return nil, err
	}
	t := newTextIndex(a, fts.NewIndex(a.WithPosition), nil)
	m := rd.s.ds.Manifest()
	for _, f := range b.Fragments {
		terms, err := rd.analyse(ctx, a, m.Fragment(f.ID), col)
		if err != nil {
			return nil, err
		}
		if err := t.add(segmentKey{frag: f.ID, file: f.File, rows: f.Rows}, terms); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// analyse returns the terms of column col's value in each physical row of
// fragment frag (nil where it has none), analysed by a on every CPU.
func (rd *reader) analyse(ctx context.Context, a fts.Analyzer, frag *table.Fragment, col indexColumn) ([][]string, error) {
	values, err := rd.indexValues(ctx, frag, col)
	if err != nil {
		return nil, err
	}
	defer values.Release()
	n := values.Len()
	out := make([][]string, n)
	texts, ok := values.(interface{ Value(int) string })
	if !ok {
		return out, nil // a column of nulls (no file holds it)
	}
	workers := min(runtime.GOMAXPROCS(0), max(1, n/1024))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w * n / workers; i < (w+1)*n/workers; i++ {
				if values.IsValid(i) {
					if out[i] = a.Terms(texts.Value(i)); out[i] == nil {
						out[i] = []string{}
					}
				}
			}
		})
	}
	wg.Wait()
	return out, ctx.Err()
}

// textColumn is a column a full-text search reads through an index.
type textColumn struct {
	rec *indexRecord
	col indexColumn
}

// textIndexes returns the full-text indexes a search of rd's snapshot
// may use, by the canonical path of their columns: those that exist at
// its version and whose last build did not fail (the newest for a
// column); none on a branch.
func (rd *reader) textIndexes(ctx context.Context) (map[string]textColumn, error) {
	out := map[string]textColumn{}
	if rd.ref.branch != "" {
		return out, nil
	}
	recs, err := rd.indexRecords(ctx)
	if err != nil {
		return nil, err
	}
	for _, ix := range recs {
		if ix.Type != store.IndexInverted || !ix.servesAt(rd.s.ds.Version()) {
			continue
		}
		col, ok := columnByID(rd.s, ix.def.FieldID)
		if !ok {
			continue
		}
		if old, dup := out[col.name]; dup && old.rec.CreatedAt.After(ix.CreatedAt) {
			continue
		}
		out[col.name] = textColumn{rec: ix, col: col}
	}
	return out, nil
}

// canonicalPath returns path in the form columns are keyed by (the
// quoting of schema.FormatPath), or path itself when it does not parse.
func canonicalPath(path string) string {
	names, err := schema.ParsePath(path)
	if err != nil {
		return path
	}
	return schema.FormatPath(names...)
}

// textSearch is the glue of one full-text search: it gives fts the loaded
// indexes of the searched columns, grown to every fragment of the
// snapshot and read-locked until the search ends.
type textSearch struct {
	ctx     context.Context
	rd      *reader
	columns map[string]textColumn
	loaded  map[string]*textIndex // by column, read-locked
	// keep holds, for a search with a filter, the offsets the filter
	// keeps in each fragment (deleted rows left out).
	keep map[uint64][]int
}

// searchText runs the full-text search of q on rd's snapshot: the rows
// matching q.Text (of those the filter keeps), best first, with their
// BM25 _score. It returns InvalidInput (13) when the table has no
// full-text index or the query is malformed, and the filter's errors.
func (rd *reader) searchText(ctx context.Context, q store.Query, stats *scanStats) (*store.Result, error) {
	cols, err := rd.textIndexes(ctx)
	if err != nil {
		return nil, err
	}
	if len(cols) == 0 {
		return nil, store.Errorf(store.CodeInvalidInput, "table %s has no full-text index; create an INVERTED index first", displayID(rd.ref.id))
	}
	proj, err := planProjection(rd.s.arrow, store.Query{Projection: q.Projection})
	if err != nil {
		return nil, err
	}
	f, err := planFilter(rd.s.arrow, q.Filter)
	if err != nil {
		return nil, err
	}
	if stats == nil {
		stats = &scanStats{}
	}
	s := &textSearch{ctx: ctx, rd: rd, columns: cols, loaded: map[string]*textIndex{}}
	defer s.release()
	if err := s.openAll(); err != nil {
		return nil, err
	}
	if f != nil {
		s.keep = map[uint64][]int{}
		if err := rd.narrowFilter(ctx, q.Filter); err != nil {
			return nil, err
		}
		for _, frag := range rd.s.ds.Manifest().Fragments {
			rows, err := rd.selected(ctx, frag, f)
			if err != nil {
				return nil, err
			}
			s.keep[frag.ID] = rows
		}
	}
	search := fts.Search{
		Columns:   map[string]fts.Column{},
		Default:   q.Text.Columns,
		Canonical: canonicalPath,
		Open:      s.open,
		Rows:      s.rows,
		Key:       rd.ref.cacheKey() + rd.s.ds.Branch() + "@" + strconv.FormatUint(rd.s.ds.Version(), 10),
	}
	for path, c := range cols {
		search.Columns[path] = fts.Column{Name: path, Analyzer: mustAnalyzer(c.rec)}
	}
	if len(search.Default) == 0 {
		search.Default = slices.Sorted(maps.Keys(cols))
	}
	found, err := search.Eval(q.Text.Query)
	if err != nil {
		return nil, err
	}
	k := int(q.Limit)
	if k <= 0 {
		k = store.DefaultSearchK
	}
	if err := q.CheckSearchRows(int64(min(k, len(found.IDs))), "the matches up to k"); err != nil {
		return nil, err
	}
	top := found.Top(k)
	top = top[min(len(top), int(q.Offset)):]
	hits := make([]hit, len(top))
	for i, h := range top {
		hits[i] = hit{addr: uint64(h.ID), distance: h.Score}
	}
	stats.fragments += int64(len(rd.s.ds.Manifest().Fragments))
	stats.rowsMatched += int64(len(hits))
	return rd.fetchHits(ctx, proj, hits, "_score", q.WithRowID, false)
}

// mustAnalyzer returns the analyzer of full-text index ix, whose
// parameters were checked when it was built.
func mustAnalyzer(ix *indexRecord) fts.Analyzer {
	a, _ := fts.NewAnalyzer(ix.def.Text)
	return a
}

// openAll loads the index of every column, grows it to every fragment of
// the snapshot and read-locks it, column after column in name order:
// every search takes the locks in that order, so that none holds one
// another waits for while it waits for one that other holds.
func (s *textSearch) openAll() error {
	for _, name := range slices.Sorted(maps.Keys(s.columns)) {
		tc := s.columns[name]
		loaded, err := s.rd.e.loadIndex(s.ctx, s.rd.ref, tc.rec)
		if err != nil {
			return dataError(s.rd.ref.id, err)
		}
		t := loaded.(*textIndex)
		grew, err := s.rd.grow(s.ctx, t, tc.col)
		if err != nil {
			return err
		}
		if grew {
			// Count what the index holds now.
			s.rd.e.cache.Put(indexCacheKey(s.rd.ref, tc.rec.UUID, tc.rec.build.ID), t)
		}
		t.ix.RLock()
		s.loaded[name] = t
	}
	return nil
}

// open implements fts.Search.Open.
func (s *textSearch) open(c fts.Column) (*fts.Index, error) { return s.loaded[c.Name].ix, nil }

// grow adds to t the fragments of rd's snapshot it has no segment for,
// analysed from column col. It reports whether it added any.
func (rd *reader) grow(ctx context.Context, t *textIndex, col indexColumn) (bool, error) {
	lf := rd.s.ds.Manifest().Schema.Fields[col.top]
	t.mu.Lock()
	defer t.mu.Unlock()
	grew := false
	for _, frag := range rd.s.ds.Manifest().Fragments {
		file, err := rd.columnFile(frag, lf)
		if err != nil {
			return false, dataError(rd.ref.id, err)
		}
		k := segmentKey{frag: frag.ID, file: file, rows: frag.PhysicalRows}
		if _, ok := t.segs[k]; ok {
			continue
		}
		terms, err := rd.analyse(ctx, t.analyzer, frag, col)
		if err != nil {
			return false, dataError(rd.ref.id, err)
		}
		if err := t.add(k, terms); err != nil {
			return false, err
		}
		grew = true
	}
	return grew, nil
}

// rows implements fts.Search.Rows: the rows of the snapshot in column
// c's index, those the filter keeps, and their addresses. It reads the
// segments under the read lock openAll took.
func (s *textSearch) rows(c fts.Column) (fts.View, error) {
	t := s.loaded[c.Name]
	lf := s.rd.s.ds.Manifest().Schema.Fields[s.columns[c.Name].col.top]
	visible := make(fts.RowSet, (t.next+63)/64)
	allowed := visible
	if s.keep != nil {
		allowed = make(fts.RowSet, len(visible))
	}
	for _, frag := range s.rd.s.ds.Manifest().Fragments {
		file, err := s.rd.columnFile(frag, lf)
		if err != nil {
			return fts.View{}, dataError(s.rd.ref.id, err)
		}
		k, ok := t.segs[segmentKey{frag: frag.ID, file: file, rows: frag.PhysicalRows}]
		if !ok {
			return fts.View{}, &store.Error{Code: store.CodeInternal, Message: "a full-text index lacks a fragment it was grown to",
				Cause: fmt.Errorf("fragment %d of %s", frag.ID, c.Name)}
		}
		seg := t.order[k]
		del, err := s.rd.deletions(s.ctx, frag)
		if err != nil {
			return fts.View{}, dataError(s.rd.ref.id, err)
		}
		setRange(visible, seg.base, seg.base+seg.rows)
		for it := del.Iterator(); it.HasNext(); {
			id := seg.base + int64(it.Next())
			visible[id>>6] &^= 1 << (id & 63)
		}
		if s.keep != nil {
			for _, o := range s.keep[frag.ID] {
				id := seg.base + int64(o)
				allowed[id>>6] |= 1 << (id & 63)
			}
		}
	}
	return fts.View{Visible: visible, Allowed: allowed, IDs: t.addresses}, nil
}

// setRange sets the bits [lo, hi) of rs.
func setRange(rs fts.RowSet, lo, hi int64) {
	for lo < hi && lo&63 != 0 {
		rs[lo>>6] |= 1 << (lo & 63)
		lo++
	}
	for ; lo+64 <= hi; lo += 64 {
		rs[lo>>6] = ^uint64(0)
	}
	for ; lo < hi; lo++ {
		rs[lo>>6] |= 1 << (lo & 63)
	}
}

// release unlocks the indexes the search used.
func (s *textSearch) release() {
	for _, t := range s.loaded {
		t.ix.RUnlock()
	}
}
