package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancens/lancens/expr"
	"github.com/lancens/lancens/store"
)

// visibleAt is the SQL condition of rows visible at version ?1 (bound twice).
const visibleAt = `_from <= ? AND _to > ?`

// plannedQuery is a query compiled to SQL, ready to run.
type plannedQuery struct {
	sql     string
	args    []any
	schema  *arrow.Schema
	readers func() []*fieldReader
	version int64
	// note tells explain_plan how the filter was evaluated.
	note string
}

// projection is the output part of a query: its fields and the SQL that
// reads them.
type projection struct {
	fields []arrow.Field
	cols   []string
	args   []any
}

func (p *projection) add(f arrow.Field, cols []string, args []any) {
	p.fields = append(p.fields, f)
	p.cols = append(p.cols, cols...)
	p.args = append(p.args, args...)
}

// readers returns a fresh reader per output field.
func (p *projection) readers() []*fieldReader {
	rs := make([]*fieldReader, len(p.fields))
	for i, f := range p.fields {
		rs[i] = newFieldReader(memory.DefaultAllocator, f.Type)
	}
	return rs
}

// buildProjection compiles the output columns of q against schema ts.
func buildProjection(ts *tableSchema, q store.Query) (*projection, error) {
	r := resolver{schema: ts}
	p := &projection{}
	switch {
	case q.Projection.Columns == nil && q.Projection.Aliases == nil:
		for i, f := range ts.arrow.Fields() {
			p.add(f, quoteAll(ts.fields[i].columns()), nil)
		}
	case q.Projection.Aliases != nil:
		for _, a := range q.Projection.Aliases {
			if f, fl, ok := ts.lookup(splitPath(a.Expr)); ok {
				f.Name = a.Name
				p.add(f, quoteAll(fl.columns()), nil)
				continue
			}
			c, err := compileValue(a.Expr, r)
			if err != nil {
				return nil, err
			}
			dt, err := arrowType(c.Type)
			if err != nil {
				return nil, err
			}
			p.add(arrow.Field{Name: a.Name, Type: dt, Nullable: true}, []string{c.SQL}, c.Args)
		}
	default:
		for _, name := range q.Projection.Columns {
			path := splitPath(name)
			f, fl, ok := ts.lookup(path)
			if !ok {
				return nil, store.Errorf(store.CodeTableColumnNotFound, "column %s not found", name)
			}
			if len(path) > 1 {
				f.Name = name
			}
			p.add(f, quoteAll(fl.columns()), nil)
		}
	}
	return p, nil
}

// planQuery compiles a scan q against table t. A filter the in-memory
// evaluator covers is applied before the SQL, which then reads the matching
// rows by id.
func (db *DB) planQuery(ctx context.Context, tx *Tx, t *tableRow, q store.Query) (*plannedQuery, error) {
	v, ts, err := schemaAt(ctx, tx, t, q.Version)
	if err != nil {
		return nil, err
	}
	p, err := buildProjection(ts, q)
	if err != nil {
		return nil, err
	}
	if q.WithRowID {
		p.add(arrow.Field{Name: "_rowid", Type: arrow.PrimitiveTypes.Uint64}, []string{"_rowid"}, nil)
	}
	if len(p.cols) == 0 {
		return nil, store.Errorf(store.CodeInvalidInput, "the query selects no columns")
	}
	md := ts.arrow.Metadata()
	pq := &plannedQuery{schema: arrow.NewSchema(p.fields, &md), version: v, readers: p.readers}
	var sb strings.Builder
	fmt.Fprintf(&sb, "SELECT %s FROM %s WHERE ", strings.Join(p.cols, ", "), dataTable(t))
	args := p.args
	order, err := orderBy(ts, q.OrderBy)
	if err != nil {
		return nil, err
	}
	var ids []int64
	var note string
	if order == "" {
		if ids, note, err = db.filteredWindow(ctx, tx, t, ts, v, q); err != nil {
			return nil, err
		}
	}
	pq.note = note
	if ids != nil {
		idJSON, _ := json.Marshal(ids)
		sb.WriteString("_rowid IN (SELECT value FROM json_each(?)) ORDER BY _rowid")
		pq.sql, pq.args = sb.String(), append(args, string(idJSON))
		return pq, nil
	}
	// The filter runs in SQLite: with order_by, or beyond the evaluator.
	where, err := compileFilter(q.Filter, resolver{schema: ts})
	if err != nil {
		return nil, err
	}
	sb.WriteString(visibleAt)
	args = append(args, v, v)
	if where.SQL != "" {
		sb.WriteString(" AND (" + where.SQL + ")")
		args = append(args, where.Args...)
	}
	sb.WriteString(" ORDER BY " + order + "_rowid")
	if q.Limit > 0 || q.Offset > 0 {
		limit := q.Limit
		if limit <= 0 {
			limit = -1
		}
		sb.WriteString(" LIMIT ? OFFSET ?")
		args = append(args, limit, q.Offset)
	}
	pq.sql, pq.args = sb.String(), args
	return pq, nil
}

// orderBy compiles the sort keys of a scan into the start of an ORDER BY
// clause ("" for none). Returns TableColumnNotFound (12)
// for unknown columns and InvalidInput (13) for columns that do not sort
// (vectors, lists, structs, maps).
func orderBy(ts *tableSchema, keys []store.SortKey) (string, error) {
	var sb strings.Builder
	for _, k := range keys {
		c, err := resolver{schema: ts}.Resolve(splitPath(k.Column))
		if err != nil {
			return "", err
		}
		switch c.Type.Kind {
		case expr.KindVector, expr.KindList, expr.KindStruct, expr.KindMap:
			return "", store.Errorf(store.CodeInvalidInput, "cannot sort by %s, a value of type %s", k.Column, c.Type)
		}
		sb.WriteString(c.SQL)
		if k.Descending {
			sb.WriteString(" DESC")
		}
		if k.NullsFirst {
			sb.WriteString(" NULLS FIRST, ")
		} else {
			sb.WriteString(" NULLS LAST, ")
		}
	}
	return sb.String(), nil
}

// maxFetchByID bounds the rows a query reads by id after an in-memory
// filter; larger answers scan with the filter in SQL, which costs no more.
const maxFetchByID = 1 << 16

// filteredWindow evaluates the filter of q in memory and returns the ids of
// the rows q answers (after offset, up to the limit), and a line for
// explain_plan saying how the filter ran. ids is nil when the filter is
// empty, not covered by the evaluator, or matches more than maxFetchByID
// rows in the window. Returns the filter's compile errors.
func (db *DB) filteredWindow(ctx context.Context, tx *Tx, t *tableRow, ts *tableSchema, v int64, q store.Query) (ids []int64, note string, err error) {
	if q.Filter == "" {
		return nil, "", nil
	}
	start := time.Now()
	matched, cols, ok, err := db.evalFilter(ctx, tx, t, ts, v, q.Filter)
	if err != nil || !ok {
		return nil, "filter: evaluated by SQLite", err
	}
	limit := int(q.Limit)
	if limit <= 0 || limit > maxFetchByID {
		limit = maxFetchByID + 1
	}
	ids = cols.matchedIDs(matched, int(q.Offset), limit)
	if len(ids) > maxFetchByID {
		return nil, "filter: evaluated by SQLite (too many matching rows to read by id)", nil
	}
	if ids == nil {
		ids = []int64{}
	}
	return ids, fmt.Sprintf("filter: evaluated in memory over %d rows in %s, %d rows read by id", cols.Len(), time.Since(start).Round(time.Microsecond), len(ids)), nil
}

func quoteAll(cols []string) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = quoteColumn(c)
	}
	return out
}

// splitPath splits a field path on dots outside backticks, removing the
// backtick quoting (a doubled backtick is a literal one).
func splitPath(p string) []string {
	var out []string
	var cur strings.Builder
	quoted := false
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '`' && quoted && i+1 < len(p) && p[i+1] == '`':
			cur.WriteByte('`')
			i++
		case c == '`':
			quoted = !quoted
		case c == '.' && !quoted:
			out = append(out, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(c)
		}
	}
	return append(out, cur.String())
}

// Query implements store.ManagedData.
func (db *DB) Query(ctx context.Context, id []string, q store.Query) (*store.Result, error) {
	var out *store.Result
	err := db.read(ctx, func(tx *Tx) error {
		t, err := findManaged(ctx, tx, id)
		if err != nil {
			return err
		}
		switch {
		case len(q.OrderBy) > 0 && (q.Vector != nil || q.Text != nil):
			return store.Errorf(store.CodeInvalidInput, "order_by sorts plain queries; searches are ordered by _distance or _score")
		case q.Vector != nil && q.Text != nil:
			return store.Errorf(store.CodeInvalidInput, "a query cannot be both a vector and a full-text search; run them separately (hybrid search fuses the two)")
		case q.Vector != nil:
			out, err = db.searchVectors(ctx, tx, t, q)
			return err
		case q.Text != nil:
			out, err = db.searchText(ctx, tx, t, q)
			return err
		}
		pq, err := db.planQuery(ctx, tx, t, q)
		if err != nil {
			return err
		}
		out, err = runQuery(ctx, tx, pq)
		return err
	})
	return out, err
}

func runQuery(ctx context.Context, tx *Tx, pq *plannedQuery) (*store.Result, error) {
	rows, err := tx.Tx.QueryContext(ctx, pq.sql, pq.args...)
	if err != nil {
		return nil, queryError(ctx, err)
	}
	defer rows.Close()
	batches, err := readBatches(rows, pq.schema, pq.readers())
	if err != nil {
		return nil, queryError(ctx, err)
	}
	return &store.Result{Schema: pq.schema, Batches: batches, Version: pq.version}, nil
}

// ExplainQuery implements store.ManagedData.
func (db *DB) ExplainQuery(ctx context.Context, id []string, q store.Query, analyze bool) (string, error) {
	var out string
	err := db.read(ctx, func(tx *Tx) error {
		t, err := findManaged(ctx, tx, id)
		if err != nil {
			return err
		}
		if q.Vector != nil || q.Text != nil {
			out, err = db.explainSearch(ctx, tx, t, q, analyze)
			return err
		}
		pq, err := db.planQuery(ctx, tx, t, q)
		if err != nil {
			return err
		}
		var sb strings.Builder
		fmt.Fprintf(&sb, "Query of table %s at version %d\n", displayID(t.ID), pq.version)
		fmt.Fprintf(&sb, "  output: %s\n", pq.schema)
		if pq.note != "" {
			fmt.Fprintf(&sb, "  %s\n", pq.note)
		}
		fmt.Fprintf(&sb, "  sql: %s\n", pq.sql)
		rows, err := tx.Tx.QueryContext(ctx, "EXPLAIN QUERY PLAN "+pq.sql, pq.args...)
		if err != nil {
			return queryError(ctx, err)
		}
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				rows.Close()
				return internal("explain", err)
			}
			fmt.Fprintf(&sb, "  plan: %s\n", detail)
		}
		rows.Close()
		if analyze {
			start := time.Now()
			res, err := runQuery(ctx, tx, pq)
			if err != nil {
				return err
			}
			var n int64
			for _, b := range res.Batches {
				n += b.NumRows()
			}
			fmt.Fprintf(&sb, "  metrics: output_rows=%d batches=%d elapsed=%s\n", n, len(res.Batches), time.Since(start))
		}
		out = sb.String()
		return nil
	})
	return out, err
}

// explainSearch describes a vector or full-text search; with analyze it
// runs it and reports the rows and time.
func (db *DB) explainSearch(ctx context.Context, tx *Tx, t *tableRow, q store.Query, analyze bool) (string, error) {
	v, ts, err := schemaAt(ctx, tx, t, q.Version)
	if err != nil {
		return "", err
	}
	var sb strings.Builder
	k := q.Limit
	if k <= 0 {
		k = defaultK
	}
	if vs := q.Vector; vs != nil {
		f, fl, err := vectorColumn(ts, vs.Column)
		if err != nil {
			return "", err
		}
		idx, err := db.usableIndex(ctx, tx, t, fl.Column, vs)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&sb, "Vector search of table %s at version %d\n  column: %s (%s)\n  k: %d, queries: %d\n",
			displayID(t.ID), v, f.Name, f.Type, k, len(vs.Vectors))
		if idx != nil {
			p := idx.ix.Params()
			fmt.Fprintf(&sb, "  index: %v, metric %s, rows up to id %d indexed, nprobes %d, ef %d, refine %d\n",
				p.Kind, metricName(p.Metric), idx.maxRowID, vs.Nprobes, vs.Ef, vs.RefineFactor)
			if !vs.FastSearch {
				sb.WriteString("  unindexed rows: exact scan\n")
			}
		} else {
			sb.WriteString("  exact search (no index or bypassed)\n")
		}
		if q.Filter != "" {
			mode := "prefilter"
			if vs.Postfilter {
				mode = "postfilter"
			}
			fmt.Fprintf(&sb, "  filter (%s): %s\n", mode, q.Filter)
		}
	} else {
		fmt.Fprintf(&sb, "Full-text search of table %s at version %d (FTS5, BM25 scores)\n  k: %d\n", displayID(t.ID), v, k)
		if q.Filter != "" {
			fmt.Fprintf(&sb, "  filter: %s\n", q.Filter)
		}
	}
	if analyze {
		start := time.Now()
		var res *store.Result
		if q.Vector != nil {
			res, err = db.searchVectors(ctx, tx, t, q)
		} else {
			res, err = db.searchText(ctx, tx, t, q)
		}
		if err != nil {
			return "", err
		}
		var n int64
		for _, b := range res.Batches {
			n += b.NumRows()
		}
		fmt.Fprintf(&sb, "  metrics: output_rows=%d elapsed=%s\n", n, time.Since(start))
	}
	return sb.String(), nil
}

// CountRows implements store.ManagedData.
func (db *DB) CountRows(ctx context.Context, id []string, version *int64, predicate string) (n, counted int64, err error) {
	err = db.read(ctx, func(tx *Tx) error {
		t, err := findManaged(ctx, tx, id)
		if err != nil {
			return err
		}
		v, ts, err := schemaAt(ctx, tx, t, version)
		if err != nil {
			return err
		}
		counted = v
		if predicate == "" {
			cols, err := db.columnsAt(ctx, tx, t, ts, v)
			if err != nil {
				return err
			}
			n = int64(cols.Len())
			return nil
		}
		if matched, _, ok, err := db.evalFilter(ctx, tx, t, ts, v, predicate); err != nil || ok {
			n = int64(rowSet(matched).count())
			return err
		}
		where, err := compileFilter(predicate, resolver{schema: ts})
		if err != nil {
			return err
		}
		q := fmt.Sprintf("SELECT count(*) FROM %s WHERE %s AND (%s)", dataTable(t), visibleAt, where.SQL)
		if err := tx.Tx.QueryRowContext(ctx, q, append([]any{v, v}, where.Args...)...).Scan(&n); err != nil {
			return queryError(ctx, err)
		}
		return nil
	})
	return n, counted, err
}

// writeVersion prepares a write on managed table id: it returns the table,
// the new version number and the latest schema.
func writeVersion(ctx context.Context, tx *Tx, id []string) (*tableRow, int64, *tableSchema, error) {
	t, err := findManaged(ctx, tx, id)
	if err != nil {
		return nil, 0, nil, err
	}
	if err := refuseViewWrite(ctx, tx, t); err != nil {
		return nil, 0, nil, err
	}
	v, ts, err := schemaAt(ctx, tx, t, nil)
	if err != nil {
		return nil, 0, nil, err
	}
	return t, v + 1, ts, nil
}

// Delete implements store.ManagedData.
func (db *DB) Delete(ctx context.Context, id []string, predicate string) (store.WriteResult, error) {
	if strings.TrimSpace(predicate) == "" {
		return store.WriteResult{}, store.Errorf(store.CodeInvalidInput, "a predicate is required (use 'true' to delete every row)")
	}
	var res store.WriteResult
	err := db.write(ctx, func(tx *Tx) error {
		t, v, ts, err := writeVersion(ctx, tx, id)
		if err != nil {
			return err
		}
		where, err := compileFilter(predicate, resolver{schema: ts})
		if err != nil {
			return err
		}
		r, err := tx.Tx.ExecContext(tx.context(ctx), fmt.Sprintf("UPDATE %s SET _to = ? WHERE _to = ? AND (%s)", dataTable(t), where.SQL),
			append([]any{v, maxVersion}, where.Args...)...)
		if err != nil {
			return queryError(ctx, err)
		}
		if res.Deleted, err = r.RowsAffected(); err != nil {
			return internal("delete", err)
		}
		return finishWrite(ctx, tx, t, v, &res, "Delete")
	})
	return res, err
}

// finishWrite records version v when the write changed rows; otherwise the
// write made no version and res reports the latest.
func finishWrite(ctx context.Context, tx *Tx, t *tableRow, v int64, res *store.WriteResult, op string) error {
	if res.Inserted == 0 && res.Updated == 0 && res.Deleted == 0 {
		res.Version = v - 1
		return nil
	}
	res.Version = v
	var err error
	res.TransactionID, err = recordManagedVersion(ctx, tx, t, v, op)
	return err
}

// Update implements store.ManagedData.
func (db *DB) Update(ctx context.Context, id []string, updates []store.ColumnUpdate, predicate string) (store.WriteResult, error) {
	var res store.WriteResult
	err := db.write(ctx, func(tx *Tx) error {
		t, v, ts, err := writeVersion(ctx, tx, id)
		if err != nil {
			return err
		}
		res, err = updateRows(ctx, tx, t, v, ts, updates, predicate, "Update")
		return err
	})
	return res, err
}

// updateRows writes, as version v of t, new versions of the rows matching
// predicate with the updates applied, and ends the old ones.
func updateRows(ctx context.Context, tx *Tx, t *tableRow, v int64, ts *tableSchema, updates []store.ColumnUpdate, predicate, op string) (store.WriteResult, error) {
	var res store.WriteResult
	if len(updates) == 0 {
		return res, store.Errorf(store.CodeInvalidInput, "at least one column must be updated")
	}
	r := resolver{schema: ts}
	set := map[string]expr.Compiled{} // physical column → new value
	for _, u := range updates {
		path := splitPath(u.Path)
		f, fl, ok := ts.lookup(path)
		if u.Path == "" || !ok {
			return res, store.Errorf(store.CodeTableColumnNotFound, "column %s not found", u.Path)
		}
		if len(fl.Children) > 0 {
			return res, store.Errorf(store.CodeInvalidInput, "column %s is a struct; update its fields one by one", u.Path)
		}
		if _, dup := set[fl.Column]; dup {
			return res, store.Errorf(store.CodeInvalidInput, "column %s is updated twice", u.Path)
		}
		c, err := compileValue(u.Expr, r)
		if err != nil {
			return res, err
		}
		if err := assignable(u.Path, f, c.Type); err != nil {
			return res, err
		}
		set[fl.Column] = c
	}
	where, err := compileFilter(predicate, r)
	if err != nil {
		return res, err
	}
	cond, condArgs := "_to = ?", []any{maxVersion}
	if where.SQL != "" {
		cond += " AND (" + where.SQL + ")"
		condArgs = append(condArgs, where.Args...)
	}
	// New row versions take the updated values; then the old ones end.
	phys, err := physicalColumns(ctx, tx, t)
	if err != nil {
		return res, err
	}
	var sel []string
	args := []any{v}
	for _, c := range phys {
		if nv, ok := set[c]; ok {
			sel = append(sel, "("+nv.SQL+")")
			args = append(args, nv.Args...)
		} else {
			sel = append(sel, quoteColumn(c))
		}
	}
	q := fmt.Sprintf("INSERT INTO %s (_from, %s) SELECT ?, %s FROM %s WHERE %s ORDER BY _rowid",
		dataTable(t), strings.Join(quoteAll(phys), ", "), strings.Join(sel, ", "), dataTable(t), cond)
	ins, err := tx.Tx.ExecContext(tx.context(ctx), q, append(args, condArgs...)...)
	if err != nil {
		return res, queryError(ctx, err)
	}
	if res.Updated, err = ins.RowsAffected(); err != nil {
		return res, internal("update", err)
	}
	if _, err := tx.Tx.ExecContext(tx.context(ctx), fmt.Sprintf("UPDATE %s SET _to = ? WHERE _from < ? AND %s", dataTable(t), cond),
		append([]any{v, v}, condArgs...)...); err != nil {
		return res, queryError(ctx, err)
	}
	return res, finishWrite(ctx, tx, t, v, &res, op)
}

// assignable checks that a value of type got can be stored in field f,
// returning InvalidInput (13) otherwise.
func assignable(path string, f arrow.Field, got expr.Type) error {
	want := exprType(f.Type)
	if got.Kind == expr.KindNull {
		if !f.Nullable {
			return store.Errorf(store.CodeInvalidInput, "column %s is not nullable", path)
		}
		return nil
	}
	ok := got.Kind == want.Kind
	switch want.Kind {
	case expr.KindFloat:
		ok = ok || got.Kind == expr.KindInt || got.Kind == expr.KindDecimal
	case expr.KindTimestamp, expr.KindTime, expr.KindDuration:
		ok = ok && got.Unit == want.Unit
	case expr.KindDecimal:
		ok = ok && got.Scale == want.Scale && got.Precision == want.Precision
	case expr.KindVector, expr.KindStruct, expr.KindMap:
		ok = false
	}
	if !ok {
		return store.Errorf(store.CodeInvalidInput, "cannot set column %s of type %s to a value of type %s", path, f.Type, got)
	}
	return nil
}

// physicalColumns returns the data columns of t's rows table (c0, c1, …).
func physicalColumns(ctx context.Context, tx *Tx, t *tableRow) ([]string, error) {
	var next int
	if err := tx.QueryRowContext(ctx, `SELECT next_column FROM managed_tables WHERE table_id = ?`, t.rowID).Scan(&next); err != nil {
		return nil, internal("columns", err)
	}
	out := make([]string, next)
	for i := range out {
		out[i] = fmt.Sprintf("c%d", i)
	}
	return out, nil
}

// Restore implements store.ManagedData.
func (db *DB) Restore(ctx context.Context, id []string, version int64) (store.WriteResult, error) {
	var res store.WriteResult
	err := db.write(ctx, func(tx *Tx) error {
		t, v, _, err := writeVersion(ctx, tx, id)
		if err != nil {
			return err
		}
		if _, err := getVersion(ctx, tx, t, t.branch, version); err != nil {
			return err
		}
		old, err := loadSchema(ctx, tx, t, version)
		if err != nil {
			return err
		}
		if res.Deleted, err = retireAll(ctx, tx, t, v); err != nil {
			return err
		}
		phys, err := physicalColumns(ctx, tx, t)
		if err != nil {
			return err
		}
		cols := strings.Join(quoteAll(phys), ", ")
		ins, err := tx.Tx.ExecContext(tx.context(ctx), fmt.Sprintf("INSERT INTO %s (_from, %s) SELECT ?, %s FROM %s WHERE %s ORDER BY _rowid",
			dataTable(t), cols, cols, dataTable(t), visibleAt), v, version, version)
		if err != nil {
			return internal("restore", err)
		}
		if res.Inserted, err = ins.RowsAffected(); err != nil {
			return internal("restore", err)
		}
		if err := saveSchema(ctx, tx, t, v, old.arrow, old.fields); err != nil {
			return err
		}
		res.Version = v
		res.TransactionID, err = recordManagedVersion(ctx, tx, t, v, "Restore")
		return err
	})
	return res, err
}

// Describe implements store.ManagedData.
func (db *DB) Describe(ctx context.Context, id []string, version *int64) (*store.TableData, error) {
	var out *store.TableData
	err := db.read(ctx, func(tx *Tx) error {
		t, err := findManaged(ctx, tx, id)
		if err != nil {
			return err
		}
		v, ts, err := schemaAt(ctx, tx, t, version)
		if err != nil {
			return err
		}
		rec, err := getVersion(ctx, tx, t, t.branch, v)
		if err != nil {
			return err
		}
		out = &store.TableData{Version: v, Schema: ts.arrow, Timestamp: rec.Timestamp}
		if out.View, err = findView(ctx, tx, t); err != nil {
			return err
		}
		q := fmt.Sprintf(`SELECT count(*) FILTER (WHERE _from <= ?1 AND _to > ?1), count(*) FILTER (WHERE _to <= ?1),
			count(DISTINCT _from) FILTER (WHERE _from <= ?1 AND _to > ?1) FROM %s`, dataTable(t))
		if err := tx.Tx.QueryRowContext(ctx, q, v).Scan(&out.NumRows, &out.Deleted, &out.Fragments); err != nil {
			return internal("describe", err)
		}
		return nil
	})
	return out, err
}

// Stats implements store.ManagedData.
func (db *DB) Stats(ctx context.Context, id []string) (*store.TableStats, error) {
	out := &store.TableStats{FragmentRows: []int64{}}
	err := db.read(ctx, func(tx *Tx) error {
		t, err := findManaged(ctx, tx, id)
		if err != nil {
			return err
		}
		v, ts, err := schemaAt(ctx, tx, t, nil)
		if err != nil {
			return err
		}
		// Fixed-width values count 8 bytes; text and blobs their length.
		var size []string
		for _, fl := range ts.fields {
			for _, c := range fl.columns() {
				size = append(size, fmt.Sprintf("coalesce(CASE typeof(%[1]s) WHEN 'text' THEN length(CAST(%[1]s AS BLOB)) WHEN 'blob' THEN length(%[1]s) ELSE 8 END, 0)", quoteColumn(c)))
			}
		}
		// Rows a staged write is adding (_from past the latest version)
		// are not counted.
		rows, err := tx.Tx.QueryContext(ctx, fmt.Sprintf(`SELECT count(*), sum(%s) FROM %s WHERE _to = ? AND _from <= ? GROUP BY _from ORDER BY _from`,
			strings.Join(size, " + "), dataTable(t)), maxVersion, v)
		if err != nil {
			return internal("stats", err)
		}
		defer rows.Close()
		for rows.Next() {
			var n, bytes int64
			if err := rows.Scan(&n, &bytes); err != nil {
				return internal("stats", err)
			}
			out.NumRows += n
			out.TotalBytes += bytes
			out.FragmentRows = append(out.FragmentRows, n)
		}
		if err := rows.Err(); err != nil {
			return internal("stats", err)
		}
		out.NumIndices, err = numIndices(ctx, tx, t)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
