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
			p.add(f, quoteAll(ts.fields[i].Columns()), nil)
		}
	case q.Projection.Aliases != nil:
		for _, a := range q.Projection.Aliases {
			if f, fl, ok := ts.lookup(splitPath(a.Expr)); ok {
				f.Name = a.Name
				p.add(f, quoteAll(fl.Columns()), nil)
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
			p.add(f, quoteAll(fl.Columns()), nil)
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
	rows, err := tx.Query(ctx, pq.sql, pq.args...)
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
		if err := tx.QueryRow(ctx, q, append([]any{v, v}, where.Args...)...).Scan(&n); err != nil {
			return queryError(ctx, err)
		}
		return nil
	})
	return n, counted, err
}
