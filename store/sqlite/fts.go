package sqlite

import (
	"context"
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"

	sqlite "modernc.org/sqlite"

	"github.com/lancens/lancens/fts"
	"github.com/lancens/lancens/store"
)

// A full-text index of a string column is a table, named after the index,
// holding for each row version (by row id) the terms of the column that the
// index's analyzer produced (lance_fts_terms); a trigger adds rows as they
// are written. It is the durable form: searches use an inverted index of
// package fts built from it in memory, kept in the memory cache and caught
// up with the rows written since; fts keeps the rows visible at the
// version and scores with BM25.

// buildTextIndex creates and fills the terms table of index r.
func buildTextIndex(ctx context.Context, tx *Tx, t *tableRow, r *indexRow) error {
	a, err := fts.NewAnalyzer(r.params.Text)
	if err != nil {
		return err
	}
	cfg, err := json.Marshal(a)
	if err != nil {
		return internal("build index", err)
	}
	name, col := sqlIndexName(t, r), quoteColumn(r.physical)
	if _, err := tx.Exec(ctx, fmt.Sprintf(`CREATE TABLE %s (rowid INTEGER PRIMARY KEY, terms TEXT NOT NULL)`, name)); err != nil {
		return internal("build full-text index", err)
	}
	if err := fillTextIndex(ctx, tx, t, name, col, a); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, fmt.Sprintf(`CREATE TRIGGER %s_add AFTER INSERT ON %s WHEN new.%s IS NOT NULL BEGIN
			INSERT INTO %s (rowid, terms) VALUES (new._rowid, lance_fts_terms(new.%s, '%s')); END`,
		name, dataTable(t), col, name, col, cfg)); err != nil {
		return internal("build full-text index", err)
	}
	return nil
}

// textFillRows is how many rows fillTextIndex reads and analyses at a
// time.
const textFillRows = 8192

// fillTextIndex fills the terms table name with the terms of every non-null
// value of t's physical column col (every row version), as the trigger
// would one row at a time: a chunk of rows at a time, analysed on another
// goroutine while SQLite reads the next chunk and writes the terms of the
// one before. It returns an internal error if SQLite fails or a value is
// neither text nor a blob.
func fillTextIndex(ctx context.Context, tx *Tx, t *tableRow, name, col string, a fts.Analyzer) error {
	read := fmt.Sprintf(`SELECT _rowid, %s FROM %s WHERE _rowid > ? AND %s IS NOT NULL ORDER BY _rowid LIMIT %d`,
		col, dataTable(t), col, textFillRows)
	// At most two chunks are in flight (one being analysed, one analysed
	// and waiting), so the analyser never blocks on a full channel, even
	// after an error here stops reading from it.
	chunks, analysed := make(chan textChunk, 1), make(chan textChunk, 2)
	defer close(chunks)
	go func() {
		for c := range chunks {
			c.terms, c.err = analyzeTexts(a, c.texts)
			analysed <- c
		}
	}()
	inFlight := 0
	for after, done := int64(math.MinInt64), false; !done || inFlight > 0; {
		if !done {
			c, err := readTexts(ctx, tx, read, after)
			if err != nil {
				return err
			}
			if done = len(c.ids) == 0; !done {
				after = c.ids[len(c.ids)-1]
				chunks <- c
				inFlight++
			}
		}
		if inFlight > 1 || done && inFlight > 0 {
			c := <-analysed
			inFlight--
			if c.err != nil {
				return internal("build full-text index", c.err)
			}
			if err := c.boundTerms().insert(ctx, tx, name, []string{"rowid", "terms"}, 0); err != nil {
				return err
			}
		}
	}
	return nil
}

// textChunk is a chunk of rows of a full-text index's column: their row
// ids, their values and, once analysed, their stored terms or the error
// analysing them.
type textChunk struct {
	ids          []int64
	texts, terms []string
	err          error
}

// analyzeTexts returns the stored terms of each text, or an error if the
// analyzer panicked (it runs apart from the write, whose recovery would
// not catch it).
func analyzeTexts(a fts.Analyzer, texts []string) (terms []string, err error) {
	defer func() {
		if r := recover(); r != nil {
			terms, err = nil, fmt.Errorf("analysing text panicked: %v", r)
		}
	}()
	terms = make([]string, len(texts))
	for i, text := range texts {
		terms[i] = storedTerms(a, text)
	}
	return terms, nil
}

// boundTerms groups the (row id, terms) pairs of an analysed chunk into the
// multi-row INSERT statements of a terms table.
func (c textChunk) boundTerms() *boundRows {
	out := &boundRows{width: 2, perStmt: min(maxStatementRows, maxStatementValues/2), rows: len(c.ids)}
	for start := 0; start < len(c.ids); start += out.perStmt {
		end := min(start+out.perStmt, len(c.ids))
		args := make([]any, 0, 2*(end-start))
		for i := start; i < end; i++ {
			args = append(args, c.ids[i], c.terms[i])
		}
		out.stmts = append(out.stmts, args)
	}
	return out
}

// readTexts returns the chunk of rows that query (a page of rows after a
// row id) reads. It returns an internal error if SQLite fails or a value
// is neither text nor a blob.
func readTexts(ctx context.Context, tx *Tx, query string, after int64) (textChunk, error) {
	rows, err := tx.Query(ctx, query, after)
	if err != nil {
		return textChunk{}, internal("build full-text index", err)
	}
	defer rows.Close()
	c := textChunk{ids: make([]int64, 0, textFillRows), texts: make([]string, 0, textFillRows)}
	for rows.Next() {
		var id int64
		var v any
		if err := rows.Scan(&id, &v); err != nil {
			return textChunk{}, internal("build full-text index", err)
		}
		switch x := v.(type) {
		case string:
			c.texts = append(c.texts, x)
		case []byte:
			c.texts = append(c.texts, string(x))
		default:
			return textChunk{}, internal("build full-text index", fmt.Errorf("row %d holds %T, not text", id, v))
		}
		c.ids = append(c.ids, id)
	}
	if err := rows.Err(); err != nil {
		return textChunk{}, internal("build full-text index", err)
	}
	return c, nil
}

// storedTerms is how a terms table keeps the terms of text: the analyzer's
// terms joined by spaces (fts.Analyzer.StoredTerms splits them again).
func storedTerms(a fts.Analyzer, text string) string {
	return strings.Join(a.Terms(text), " ")
}

// textIndex is a built full-text index on one column.
type textIndex struct {
	uuid     string
	table    string
	column   string
	analyzer fts.Analyzer
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
		a, err := fts.NewAnalyzer(r.params.Text)
		if err != nil {
			return nil, err
		}
		out[r.columnPath] = textIndex{uuid: r.uuid, table: sqlIndexName(t, r), column: r.columnPath, analyzer: a}
	}
	return out, nil
}

// textSearch is the glue of one full-text search: it gives fts the
// posting indexes of the table's full-text indexes, from the memory cache,
// caught up with the table and read-locked until the search ends.
type textSearch struct {
	ctx      context.Context
	tx       *Tx
	db       *DB
	table    string // uuid
	indexes  map[string]textIndex
	postings map[string]*fts.Index // by index uuid, caught up and read-locked
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
	s := &textSearch{ctx: ctx, tx: tx, db: db, table: t.UUID, indexes: idx, postings: map[string]*fts.Index{}}
	defer s.release()
	search := fts.Search{
		Columns:   map[string]fts.Column{},
		Default:   q.Text.Columns,
		Canonical: func(path string) string { return formatPath(splitPath(path)) },
		Open:      s.index,
		Key:       fmt.Sprintf("%s@%d", t.UUID, v),
		Visible:   fts.RowSet(visible),
		Allowed:   fts.RowSet(visible),
	}
	for path, ix := range idx {
		search.Columns[path] = fts.Column{Name: ix.column, Analyzer: ix.analyzer}
	}
	if len(search.Default) == 0 {
		search.Default = slices.Sorted(maps.Keys(idx))
	}
	if q.Filter != "" {
		// The filter is evaluated over the visible rows only.
		allowed, err := db.filterRows(ctx, tx, t, ts, v, q.Filter)
		if err != nil {
			return nil, err
		}
		search.Allowed = fts.RowSet(allowed)
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
		hits[i] = hit{id: h.ID, value: h.Score}
	}
	return fetchHits(ctx, tx, t, ts, q, v, hits, "_score", false)
}

// index returns the posting index of column c, caught up with the rows
// written since it was last used and read-locked until the search ends.
func (s *textSearch) index(c fts.Column) (*fts.Index, error) {
	ix := s.indexes[c.Name]
	if p, ok := s.postings[ix.uuid]; ok {
		return p, nil
	}
	key := cacheIndex{table: s.table, index: ix.uuid}.postingsKey()
	loaded := false
	val, err := s.db.cache.get(s.ctx, key, func() (cached, error) {
		p := cachedPostings{fts.NewIndex(ix.analyzer.WithPosition)}
		if _, err := catchUp(s.ctx, s.tx, p.Index, ix.table, ix.analyzer.StoredTerms); err != nil {
			return nil, err
		}
		loaded = true
		return p, nil
	})
	if err != nil {
		return nil, err
	}
	p := val.(cachedPostings)
	if !loaded {
		grew, err := catchUp(s.ctx, s.tx, p.Index, ix.table, ix.analyzer.StoredTerms)
		if err != nil {
			return nil, err
		}
		if grew {
			s.db.cache.resize(key, p)
		}
	}
	p.RLock()
	s.postings[ix.uuid] = p.Index
	return p.Index, nil
}

// release unlocks the posting indexes the search used.
func (s *textSearch) release() {
	for _, p := range s.postings {
		p.RUnlock()
	}
}

// cachedPostings is a posting index in the memory cache, which counts its
// size as it grows.
type cachedPostings struct{ *fts.Index }

func (p cachedPostings) cacheBytes() int64 { return p.Bytes() }

// catchUp adds to p the rows of the index table written since it last
// did, their stored terms split by split. It reports whether there were
// any.
func catchUp(ctx context.Context, tx *Tx, p *fts.Index, table string, split func(string) []string) (bool, error) {
	var newest int64
	if err := tx.QueryRow(ctx, fmt.Sprintf(`SELECT coalesce(max(rowid), -1) FROM %s`, table)).Scan(&newest); err != nil {
		return false, internal("full-text index", err)
	}
	if newest <= p.LastRowID() {
		return false, nil
	}
	grew, err := p.CatchUp(func(after int64, add func(int64, []string)) error {
		rows, err := tx.Query(ctx, fmt.Sprintf(`SELECT rowid, terms FROM %s WHERE rowid > ? ORDER BY rowid`, table), after)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id int64
			var text string
			if err := rows.Scan(&id, &text); err != nil {
				return err
			}
			add(id, split(text))
		}
		return rows.Err()
	})
	if err != nil {
		return false, internal("full-text index", err)
	}
	return grew, nil
}

// analyzers holds analyzers decoded from their JSON form, for the SQL
// function that fills full-text indexes.
var analyzers sync.Map

// registerAnalyzer registers lance_fts_terms(text, analyzer_json): the
// terms of text, space-separated (see fts.Analyzer.StoredTerms), which the
// terms table of a full-text index keeps.
var registerAnalyzer = sync.OnceValue(func() error {
	return sqlite.RegisterDeterministicScalarFunction("lance_fts_terms", 2, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		text, ok := args[0].(string)
		if !ok {
			if b, isBytes := args[0].([]byte); isBytes {
				text = string(b)
			} else {
				return nil, nil
			}
		}
		cfg, _ := args[1].(string)
		a, ok := analyzers.Load(cfg)
		if !ok {
			var an fts.Analyzer
			if err := json.Unmarshal([]byte(cfg), &an); err != nil {
				return nil, fmt.Errorf("bad analyzer: %w", err)
			}
			a, _ = analyzers.LoadOrStore(cfg, an)
		}
		return storedTerms(a.(fts.Analyzer), text), nil
	})
})
