package sqlite

import (
	"context"
	"errors"
	"fmt"
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

// MergeInsert implements store.ManagedData.
func (db *DB) MergeInsert(ctx context.Context, id []string, m store.Merge) (store.WriteResult, error) {
	if len(m.On) == 0 {
		return store.WriteResult{}, store.Errorf(store.CodeInvalidInput, "merge_insert needs at least one key column in on")
	}
	var res store.WriteResult
	err := db.write(ctx, func(tx *Tx) error {
		t, err := findTable(ctx, tx, id)
		if err != nil {
			return err
		}
		if t.Kind != store.Managed {
			if t.Declared {
				return errMaterialize
			}
			return notManaged(t)
		}
		res, err = mergeInto(ctx, tx, t, m)
		return err
	})
	if errors.Is(err, errMaterialize) {
		_, res, err = db.CreateTable(ctx, id, store.NewTable{Mode: store.ModeCreate, Data: m.Data})
	}
	return res, err
}

func mergeInto(ctx context.Context, tx *Tx, t *tableRow, m store.Merge) (store.WriteResult, error) {
	var res store.WriteResult
	v, ts, err := schemaAt(ctx, tx, t, nil)
	if err != nil {
		return res, err
	}
	v++
	if err := conform(ts, m.Data.Schema); err != nil {
		return res, err
	}
	// The match condition on the key columns.
	var keys []string
	for _, on := range m.On {
		path := splitPath(on)
		_, fl, ok := ts.lookup(path)
		if !ok || len(fl.Children) > 0 {
			return res, store.Errorf(store.CodeTableColumnNotFound, "key column %s not found", on)
		}
		if !m.Data.Schema.HasField(path[0]) {
			return res, store.Errorf(store.CodeTableSchemaValidationError, "the source rows have no key column %s", on)
		}
		c := quoteColumn(fl.Column)
		keys = append(keys, fmt.Sprintf("t.%s = s.%s", c, c))
	}
	match := strings.Join(keys, " AND ")
	mr := mergeResolver{schema: ts}
	updateFilter, err := compileFilter(m.WhenMatchedUpdateFilter, mr)
	if err != nil {
		return res, err
	}
	deleteFilter, err := compileFilter(m.WhenNotMatchedBySourceDeleteFilter, resolver{schema: ts, alias: "t"})
	if err != nil {
		return res, err
	}
	phys, err := physicalColumns(ctx, tx, t)
	if err != nil {
		return res, err
	}
	if err := createMergeSource(ctx, tx, ts, m, phys); err != nil {
		return res, err
	}
	defer tx.Tx.ExecContext(context.WithoutCancel(ctx), `DROP TABLE IF EXISTS `+mergeSource)

	rows := dataTable(t)
	target := fmt.Sprintf("%s t", rows)
	live := "t._to = ? AND t._from < ?"
	exec := func(q string, args ...any) (int64, error) {
		r, err := tx.Tx.ExecContext(tx.context(ctx), q, args...)
		if err != nil {
			return 0, queryError(ctx, err)
		}
		return r.RowsAffected()
	}
	var ambiguous int64
	if err := tx.Tx.QueryRowContext(ctx, fmt.Sprintf(`SELECT count(*) FROM (SELECT t._rowid FROM %s JOIN %s s ON %s
		WHERE %s GROUP BY t._rowid HAVING count(*) > 1)`, target, mergeSource, match, live), maxVersion, v).Scan(&ambiguous); err != nil {
		return res, queryError(ctx, err)
	}
	if ambiguous > 0 {
		return res, store.Errorf(store.CodeInvalidInput, "%d target rows match more than one source row on the key columns", ambiguous)
	}
	cols := strings.Join(quoteAll(phys), ", ")
	sCols := "s." + strings.Join(quoteAll(phys), ", s.")
	if m.WhenNotMatchedInsertAll {
		if res.Inserted, err = exec(fmt.Sprintf(`INSERT INTO %s (_from, %s) SELECT ?, %s FROM %s s
			WHERE NOT EXISTS (SELECT 1 FROM %s WHERE %s AND %s) ORDER BY s._src`, rows, cols, sCols, mergeSource, target, live, match),
			v, maxVersion, v); err != nil {
			return res, err
		}
	}
	if m.WhenNotMatchedBySourceDelete || deleteFilter.SQL != "" {
		cond := ""
		if deleteFilter.SQL != "" {
			cond = " AND (" + deleteFilter.SQL + ")"
		}
		if res.Deleted, err = exec(fmt.Sprintf(`UPDATE %s AS t SET _to = ? WHERE %s AND NOT EXISTS (SELECT 1 FROM %s s WHERE %s)%s`,
			rows, live, mergeSource, match, cond), append([]any{v, maxVersion, v}, deleteFilter.Args...)...); err != nil {
			return res, err
		}
	}
	if m.WhenMatchedUpdateAll || updateFilter.SQL != "" {
		cond := ""
		if updateFilter.SQL != "" {
			cond = " AND (" + updateFilter.SQL + ")"
		}
		args := append([]any{v, maxVersion, v}, updateFilter.Args...)
		if res.Updated, err = exec(fmt.Sprintf(`INSERT INTO %s (_from, %s) SELECT ?, %s FROM %s JOIN %s s ON %s WHERE %s%s ORDER BY t._rowid`,
			rows, cols, sCols, target, mergeSource, match, live, cond), args...); err != nil {
			return res, err
		}
		if _, err := exec(fmt.Sprintf(`UPDATE %s AS t SET _to = ? WHERE %s AND EXISTS (SELECT 1 FROM %s s WHERE %s%s)`,
			rows, live, mergeSource, match, cond), args...); err != nil {
			return res, err
		}
	}
	return res, finishWrite(ctx, tx, t, v, &res, "Merge")
}

// createMergeSource loads the merge's source rows into a temporary table with
// the target's physical columns.
func createMergeSource(ctx context.Context, tx *Tx, ts *tableSchema, m store.Merge, phys []string) error {
	defs := make([]string, len(phys))
	for i, c := range phys {
		defs[i] = quoteColumn(c)
	}
	if _, err := tx.Tx.ExecContext(ctx, fmt.Sprintf(`CREATE TEMP TABLE merge_source (_src INTEGER PRIMARY KEY, %s)`,
		strings.Join(defs, ", "))); err != nil {
		return internal("merge source", err)
	}
	_, err := insertRows(ctx, tx, mergeSource, ts, nil, m.Data.Batches)
	return err
}
