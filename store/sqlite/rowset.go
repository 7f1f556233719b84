package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/lancens/lancens/fts"
)

// rowSet is a set of row ids as a bitmap: the rows of a table version, or
// those passing a filter. It is the bitmap of fts.RowSet, and converts to
// it for full-text searches.
type rowSet []uint64

// has reports whether id is in the set.
func (s rowSet) has(id int64) bool { return fts.RowSet(s).Has(id) }

// count returns the number of rows in the set.
func (s rowSet) count() int { return fts.RowSet(s).Count() }

// cacheBytes is the memory the set holds.
func (s rowSet) cacheBytes() int64 { return int64(cap(s)) * 8 }

// collectRows reads a query of row ids into a set and closes it.
func collectRows(rows *sql.Rows) (rowSet, error) {
	defer rows.Close()
	set := rowSet{} // not nil: nil means "no filter" to the searches
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		for int(id>>6) >= len(set) {
			set = append(set, 0)
		}
		set[id>>6] |= 1 << (id & 63)
	}
	return set, rows.Err()
}

// visibleRows returns the rows of t visible at version v, through the
// memory cache.
func (db *DB) visibleRows(ctx context.Context, tx *Tx, t *tableRow, v int64) (rowSet, error) {
	val, err := db.cache.get(ctx, cacheKey{table: t.cacheID(), name: "visible", version: v}, func() (cached, error) {
		rows, err := tx.Query(ctx, fmt.Sprintf("SELECT _rowid FROM %s WHERE %s", dataTable(t), visibleAt), v, v)
		if err != nil {
			return nil, internal("visible rows", err)
		}
		set, err := collectRows(rows)
		if err != nil {
			return nil, internal("visible rows", err)
		}
		return rowSet(fit(set)), nil
	})
	if err != nil {
		return nil, err
	}
	return val.(rowSet), nil
}

// filterRows returns the rows of t visible at v that match filter.
func (db *DB) filterRows(ctx context.Context, tx *Tx, t *tableRow, ts *tableSchema, v int64, filter string) (rowSet, error) {
	if matched, cols, ok, err := db.evalFilter(ctx, tx, t, ts, v, filter); err != nil {
		return nil, err
	} else if ok {
		ids := cols.matchedIDs(matched, 0, -1)
		if len(ids) == 0 {
			return rowSet{}, nil
		}
		set := make(rowSet, ids[len(ids)-1]/64+1)
		for _, id := range ids {
			set[id>>6] |= 1 << (id & 63)
		}
		return set, nil
	}
	where, err := compileFilter(filter, resolver{schema: ts})
	if err != nil {
		return nil, err
	}
	rows, err := tx.Query(ctx, fmt.Sprintf("SELECT _rowid FROM %s WHERE %s AND (%s)", dataTable(t), visibleAt, where.SQL),
		append([]any{v, v}, where.Args...)...)
	if err != nil {
		return nil, queryError(ctx, err)
	}
	set, err := collectRows(rows)
	if err != nil {
		return nil, queryError(ctx, err)
	}
	return set, nil
}
