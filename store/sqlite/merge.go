package sqlite

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/lancens/lancens/expr"
	"github.com/lancens/lancens/store"
)

// mergeSource is the temporary table holding a merge's source rows, with the
// same physical columns as the target.
const mergeSource = "temp.merge_source"

// mergeResolver resolves "target.x" and "source.x" in merge filters; a bare
// path means the target.
type mergeResolver struct {
	schema *tableSchema
}

// Resolve implements expr.Resolver.
func (r mergeResolver) Resolve(path []string) (expr.Column, error) {
	alias := "t"
	if len(path) > 1 && (path[0] == "target" || path[0] == "source") {
		if path[0] == "source" {
			alias = "s"
		}
		path = path[1:]
	}
	return resolver{schema: r.schema, alias: alias}.Resolve(path)
}

// MergeInsert implements store.ManagedData. Everything that needs no
// database (the schema, the keys, the filters, the source rows' values) is
// checked and converted before the write takes the writer. Source rows of
// more than one chunk are staged into a staging table over several
// transactions (staging.go); the merge itself runs in the last one.
func (db *DB) MergeInsert(ctx context.Context, id []string, m store.Merge) (store.WriteResult, error) {
	if err := m.CheckKeys(); err != nil {
		return store.WriteResult{}, err
	}
	rows := replayOf(m.Data.Batches)
	defer rows.settle()
	for {
		res, err := db.mergeOnce(ctx, id, m, rows)
		if !errors.Is(err, errStale) {
			return res, err
		}
		if err := ctx.Err(); err != nil {
			return store.WriteResult{}, err
		}
		if err := rows.again(id); err != nil {
			return store.WriteResult{}, err
		}
	}
}

// mergeOnce tries MergeInsert once, reading the source rows from the
// start; it returns errStale when the table changed before the write took
// the writer. The source schema is checked before any row is read.
func (db *DB) mergeOnce(ctx context.Context, id []string, m store.Merge, rows *replay) (store.WriteResult, error) {
	t, ts, err := db.writeTarget(ctx, id)
	if errors.Is(err, errMaterialize) {
		_, res, err := db.CreateTable(ctx, id, store.NewTable{Mode: store.ModeCreate, Data: store.Data{Schema: m.Data.Schema, Batches: rows}})
		return res, err
	}
	if err != nil {
		return store.WriteResult{}, err
	}
	plan, err := planMerge(ts, m)
	if err != nil {
		return store.WriteResult{}, err
	}
	return db.merge(ctx, id, t.UUID, ts, plan, rows)
}

// mergePlan is a merge checked against the target's schema.
type mergePlan struct {
	m store.Merge
	// keys are the physical key columns, quoted; match is the condition on
	// them, over target t and source s.
	keys                       []string
	match                      string
	updateFilter, deleteFilter expr.Compiled
}

// planMerge checks merge m against the target schema ts. It returns
// TableSchemaValidationError (20) for source rows that do not fit,
// TableColumnNotFound (12) for a missing key and the filters' errors.
func planMerge(ts *tableSchema, m store.Merge) (*mergePlan, error) {
	if err := conform(ts, m.Data.Schema); err != nil {
		return nil, err
	}
	p := &mergePlan{m: m}
	var keys []string
	for _, on := range m.On {
		path := splitPath(on)
		_, fl, ok := ts.lookup(path)
		if !ok || len(fl.Children) > 0 {
			return nil, store.Errorf(store.CodeTableColumnNotFound, "key column %s not found", on)
		}
		if !m.Data.Schema.HasField(path[0]) {
			return nil, store.Errorf(store.CodeTableSchemaValidationError, "the source rows have no key column %s", on)
		}
		c := quoteColumn(fl.Column)
		if slices.Contains(p.keys, c) {
			return nil, store.Errorf(store.CodeInvalidInput, "merge_insert key column %s is given twice in on", on)
		}
		p.keys = append(p.keys, c)
		keys = append(keys, fmt.Sprintf("t.%s = s.%s", c, c))
	}
	p.match = strings.Join(keys, " AND ")
	var err error
	if p.updateFilter, err = compileFilter(m.WhenMatchedUpdateFilter, mergeResolver{schema: ts}); err != nil {
		return nil, err
	}
	if p.deleteFilter, err = compileFilter(m.WhenNotMatchedBySourceDeleteFilter, resolver{schema: ts, alias: "t"}); err != nil {
		return nil, err
	}
	return p, nil
}

// merge runs plan on table id, which must still be the table with the
// given uuid and schema that the plan was made for (errStale otherwise),
// with the source rows read from rows.
func (db *DB) merge(ctx context.Context, id []string, uuid string, ts *tableSchema, plan *mergePlan, rows *replay) (store.WriteResult, error) {
	src := db.staging.rows(ts, rows, false)
	defer src.close()
	first, err := src.next()
	if err != nil {
		return store.WriteResult{}, err
	}
	defer first.release()
	var res store.WriteResult
	if src.done() {
		err := db.write(ctx, func(tx *Tx) error {
			t, v, err := sameTable(ctx, tx, id, uuid, ts.version)
			if err != nil {
				return err
			}
			phys, err := plan.createSource(ctx, tx, t, mergeSource)
			if err != nil {
				return err
			}
			defer tx.Exec(context.WithoutCancel(ctx), `DROP TABLE IF EXISTS `+mergeSource)
			if err := first.insert(ctx, tx, mergeSource, layoutColumns(ts.fields), 0); err != nil {
				return err
			}
			res, err = plan.apply(ctx, tx, t, v+1, mergeSource, phys)
			return err
		})
		if err != nil {
			return store.WriteResult{}, err
		}
		return res, nil
	}
	held, t, v, err := db.holdTable(ctx, id, uuid, ts.version)
	if err != nil {
		return store.WriteResult{}, err
	}
	v++
	sw := &stagedWrite{db: db, held: held, table: stagingName(), columns: layoutColumns(ts.fields), staging: true}
	var phys []string
	last, err := sw.stage(ctx, first, src, func(tx *Tx) error {
		var err error
		phys, err = plan.createSource(ctx, tx, t, sw.table)
		return err
	})
	if err != nil {
		return store.WriteResult{}, sw.abort(ctx, err)
	}
	defer last.release()
	err = sw.finish(ctx, func(tx *Tx) error {
		if err := sw.add(ctx, tx, last); err != nil {
			return err
		}
		var err error
		res, err = plan.apply(ctx, tx, t, v, sw.table, phys)
		return err
	})
	if err != nil {
		return store.WriteResult{}, sw.abort(ctx, err)
	}
	// The merge has committed; a staging table left behind (this drop
	// failing) is invisible, and Open drops it.
	_ = db.write(context.WithoutCancel(ctx), func(tx *Tx) error { return dropStaging(ctx, tx, sw.table) })
	return res, nil
}

// createSource creates the table name (temp.x for a temporary one) that
// holds the merge's source rows: their order (_src), then the physical
// columns of target t, with their types, and it returns those columns. The
// table is indexed on the key columns, so that every merge statement finds
// a row's matches by lookup, not by scanning; the index only serves
// comparisons with the target's columns when both sides have the same
// column affinity, hence the types.
func (p *mergePlan) createSource(ctx context.Context, tx *Tx, t *tableRow, name string) ([]string, error) {
	phys, err := physicalColumns(ctx, tx, t)
	if err != nil {
		return nil, err
	}
	types := map[string]string{}
	rows, err := tx.Query(ctx, `SELECT name, type FROM pragma_table_info(?)`, dataTable(t))
	if err != nil {
		return nil, internal("merge source", err)
	}
	for rows.Next() {
		var col, typ string
		if err := rows.Scan(&col, &typ); err != nil {
			rows.Close()
			return nil, internal("merge source", err)
		}
		types[col] = typ
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, internal("merge source", err)
	}
	defs := make([]string, len(phys))
	for i, c := range phys {
		defs[i] = quoteColumn(c) + " " + types[c]
	}
	schema, table := "", name
	if s, t, ok := strings.Cut(name, "."); ok {
		schema, table = s+".", t
	}
	for _, q := range []string{
		fmt.Sprintf(`CREATE TABLE %s (_src INTEGER PRIMARY KEY, %s)`, name, strings.Join(defs, ", ")),
		fmt.Sprintf(`CREATE INDEX %s%s_key ON %s (%s)`, schema, table, table, strings.Join(p.keys, ", ")),
	} {
		if _, err := tx.Exec(ctx, q); err != nil {
			return nil, internal("merge source", err)
		}
	}
	return phys, nil
}

// apply merges the rows of the SQL table source (the target's physical
// columns phys) into t as version v.
func (p *mergePlan) apply(ctx context.Context, tx *Tx, t *tableRow, v int64, source string, phys []string) (store.WriteResult, error) {
	var res store.WriteResult
	m := p.m
	rows := dataTable(t)
	target := fmt.Sprintf("%s t", rows)
	live := "t._to = ? AND t._from < ?"
	match := p.match
	exec := func(q string, args ...any) (int64, error) {
		r, err := tx.Exec(ctx, q, args...)
		if err != nil {
			return 0, queryError(ctx, err)
		}
		return r.RowsAffected()
	}
	var ambiguous int64
	if err := tx.QueryRow(ctx, fmt.Sprintf(`SELECT count(*) FROM (SELECT t._rowid FROM %s JOIN %s s ON %s
		WHERE %s GROUP BY t._rowid HAVING count(*) > 1)`, target, source, match, live), maxVersion, v).Scan(&ambiguous); err != nil {
		return res, queryError(ctx, err)
	}
	if ambiguous > 0 {
		return res, store.Errorf(store.CodeInvalidInput, "%d target rows match more than one source row on the key columns", ambiguous)
	}
	cols := strings.Join(quoteAll(phys), ", ")
	sCols := "s." + strings.Join(quoteAll(phys), ", s.")
	var err error
	if m.WhenNotMatchedInsertAll {
		// The matched source rows are found from the target's live rows
		// (the source is indexed on the key, the target maybe not).
		if res.Inserted, err = exec(fmt.Sprintf(`INSERT INTO %s (_from, %s) SELECT ?, %s FROM %s s
			WHERE s._src NOT IN (SELECT s._src FROM %s JOIN %s s ON %s WHERE %s) ORDER BY s._src`, rows, cols, sCols, source, target, source, match, live),
			v, maxVersion, v); err != nil {
			return res, err
		}
	}
	if m.WhenNotMatchedBySourceDelete || p.deleteFilter.SQL != "" {
		cond := ""
		if p.deleteFilter.SQL != "" {
			cond = " AND (" + p.deleteFilter.SQL + ")"
		}
		if res.Deleted, err = exec(fmt.Sprintf(`UPDATE %s AS t SET _to = ? WHERE %s AND NOT EXISTS (SELECT 1 FROM %s s WHERE %s)%s`,
			rows, live, source, match, cond), append([]any{v, maxVersion, v}, p.deleteFilter.Args...)...); err != nil {
			return res, err
		}
	}
	if m.WhenMatchedUpdateAll || p.updateFilter.SQL != "" {
		cond := ""
		if p.updateFilter.SQL != "" {
			cond = " AND (" + p.updateFilter.SQL + ")"
		}
		args := append([]any{v, maxVersion, v}, p.updateFilter.Args...)
		if res.Updated, err = exec(fmt.Sprintf(`INSERT INTO %s (_from, %s) SELECT ?, %s FROM %s JOIN %s s ON %s WHERE %s%s ORDER BY t._rowid`,
			rows, cols, sCols, target, source, match, live, cond), args...); err != nil {
			return res, err
		}
		if _, err := exec(fmt.Sprintf(`UPDATE %s AS t SET _to = ? WHERE %s AND EXISTS (SELECT 1 FROM %s s WHERE %s%s)`,
			rows, live, source, match, cond), args...); err != nil {
			return res, err
		}
	}
	return res, finishWrite(ctx, tx, t, v, &res, "Merge")
}
