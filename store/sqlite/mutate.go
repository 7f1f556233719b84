package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/lancens/lancens/expr"
	"github.com/lancens/lancens/internal/progress"
	"github.com/lancens/lancens/store"
)

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
		r, err := tx.Exec(ctx, fmt.Sprintf("UPDATE %s SET _to = ? WHERE _to = ? AND (%s)", dataTable(t), where.SQL),
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
		res, err = updateRows(ctx, tx, t, v, ts, updates, predicate, "Update", "")
		return err
	})
	return res, err
}

// updateRows writes, as version v of t, new versions of the rows matching
// predicate with the updates applied, and ends the old ones. With a stage
// name, it rewrites the rows in chunks of row ids, in the same transaction,
// and reports the rows done after each (see internal/progress).
func updateRows(ctx context.Context, tx *Tx, t *tableRow, v int64, ts *tableSchema, updates []store.ColumnUpdate, predicate, op, stage string) (store.WriteResult, error) {
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
		if err := expr.CheckAssignable(u.Path, f, c.Type); err != nil {
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
	q := fmt.Sprintf("INSERT INTO %s (_from, %s) SELECT ?, %s FROM %s WHERE %s",
		dataTable(t), strings.Join(quoteAll(phys), ", "), strings.Join(sel, ", "), dataTable(t), cond)
	if stage == "" {
		ins, err := tx.Exec(ctx, q+" ORDER BY _rowid", append(args, condArgs...)...)
		if err != nil {
			return res, queryError(ctx, err)
		}
		if res.Updated, err = ins.RowsAffected(); err != nil {
			return res, internal("update", err)
		}
	} else if res.Updated, err = insertInChunks(ctx, tx, t, q, append(args, condArgs...), cond, condArgs, stage); err != nil {
		return res, err
	}
	if _, err := tx.Exec(ctx, fmt.Sprintf("UPDATE %s SET _to = ? WHERE _from < ? AND %s", dataTable(t), cond),
		append([]any{v, v}, condArgs...)...); err != nil {
		return res, queryError(ctx, err)
	}
	return res, finishWrite(ctx, tx, t, v, &res, op)
}

// updateChunkRows is how many row ids one statement of a chunked update
// covers (a variable for tests).
var updateChunkRows int64 = 50_000

// insertInChunks runs query q (an INSERT … SELECT … WHERE cond, with args)
// over consecutive ranges of row ids, up to the largest row id before the
// first insert (the rows it inserts come after it and are not selected
// again), reporting progress under stage: rows done of the rows matching
// cond (with condArgs). It returns the rows inserted.
func insertInChunks(ctx context.Context, tx *Tx, t *tableRow, q string, args []any, cond string, condArgs []any, stage string) (int64, error) {
	var total int64
	var lo, hi sql.NullInt64
	if err := tx.QueryRow(ctx, fmt.Sprintf("SELECT count(*), min(_rowid), max(_rowid) FROM %s WHERE %s", dataTable(t), cond),
		condArgs...).Scan(&total, &lo, &hi); err != nil {
		return 0, queryError(ctx, err)
	}
	done := progress.NewCounter(ctx, stage, total)
	var inserted int64
	for from := lo.Int64; lo.Valid && from <= hi.Int64; from += updateChunkRows {
		ins, err := tx.Exec(ctx, q+" AND _rowid BETWEEN ? AND ? ORDER BY _rowid",
			append(slices.Clone(args), from, min(from+updateChunkRows-1, hi.Int64))...)
		if err != nil {
			return 0, queryError(ctx, err)
		}
		n, err := ins.RowsAffected()
		if err != nil {
			return 0, internal("update", err)
		}
		inserted += n
		done.Add(n)
	}
	return inserted, nil
}

// physicalColumns returns the data columns of t's rows table (c0, c1, …).
func physicalColumns(ctx context.Context, tx *Tx, t *tableRow) ([]string, error) {
	var next int
	if err := tx.QueryRowCached(ctx, `SELECT next_column FROM managed_tables WHERE table_id = ?`, t.rowID).Scan(&next); err != nil {
		return nil, internal("columns", err)
	}
	out := make([]string, next)
	for i := range out {
		out[i] = fmt.Sprintf("c%d", i)
	}
	return out, nil
}

// Restore implements store.ManagedData. The restored rows are copies with
// new row ids, so vector indexes are built again (rebuildVectorIndexes).
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
		ins, err := tx.Exec(ctx, fmt.Sprintf("INSERT INTO %s (_from, %s) SELECT ?, %s FROM %s WHERE %s ORDER BY _rowid",
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
		if err := rebuildVectorIndexes(ctx, tx, t); err != nil {
			return err
		}
		res.Version = v
		res.TransactionID, err = recordManagedVersion(ctx, tx, t, v, "Restore")
		return err
	})
	return res, err
}
