package sqlite

import (
	"context"
	"fmt"
	"math/bits"

	"github.com/lancens/lancens/expr"
	"github.com/lancens/lancens/store"
)

// Filters on managed tables are evaluated in memory when they can be: the
// columns a filter reads are loaded once per table version into the memory
// cache and expr.EvalFilter scans them, which is an order of magnitude
// faster than SQLite stepping through rows. Filters the evaluator does not
// cover run as SQL.

// rowIDs is the ascending list of the row ids visible at one table version:
// position i of every filter column of that version is row ids[i].
type rowIDs []int64

func (r rowIDs) cacheBytes() int64 { return int64(len(r)) * 8 }

// filterColumn is one physical column's values for the rows of a table
// version, in row id order. values is nil when the stored values do not
// fit expr.Values (such a column is evaluated in SQL).
type filterColumn struct {
	values *expr.Values
	size   int64
}

func (c *filterColumn) cacheBytes() int64 { return c.size }

// snapshotColumns gives expr.EvalFilter the columns of table t at version v,
// loading them through the cache.
type snapshotColumns struct {
	ctx context.Context
	db  *DB
	tx  *Tx
	t   *tableRow
	ts  *tableSchema
	v   int64
	ids rowIDs
}

var _ expr.Columns = (*snapshotColumns)(nil)

// columnsAt returns the columns of t at version v (schema ts).
// Returns Internal (18) when the visible rows cannot be read.
func (db *DB) columnsAt(ctx context.Context, tx *Tx, t *tableRow, ts *tableSchema, v int64) (*snapshotColumns, error) {
	val, err := db.cache.get(ctx, cacheKey{table: t.cacheID(), name: "rows", version: v}, func() (cached, error) {
		set, err := db.visibleRows(ctx, tx, t, v)
		if err != nil {
			return nil, err
		}
		ids := make(rowIDs, 0, set.count())
		for w, word := range set {
			for word != 0 {
				ids = append(ids, int64(w*64+bits.TrailingZeros64(word)))
				word &= word - 1
			}
		}
		return ids, nil
	})
	if err != nil {
		return nil, err
	}
	return &snapshotColumns{ctx: ctx, db: db, tx: tx, t: t, ts: ts, v: v, ids: val.(rowIDs)}, nil
}

// Len implements expr.Columns.
func (c *snapshotColumns) Len() int { return len(c.ids) }

// Column implements expr.Columns. Unknown paths are TableColumnNotFound
// (12), as the resolver reports them; ok is false for columns whose values
// are not kept in memory.
func (c *snapshotColumns) Column(path []string) (*expr.Values, bool, error) {
	if len(path) == 1 && path[0] == "_rowid" {
		return &expr.Values{Type: expr.Type{Kind: expr.KindInt}, Ints: c.ids}, true, nil
	}
	f, fl, ok := c.ts.lookup(path)
	if !ok {
		return nil, false, store.Errorf(store.CodeTableColumnNotFound, "column %s not found", formatPath(path))
	}
	typ := exprType(f.Type)
	switch typ.Kind {
	case expr.KindBool, expr.KindInt, expr.KindFloat, expr.KindString, expr.KindDate32, expr.KindDate64,
		expr.KindTimestamp, expr.KindTime, expr.KindDuration:
	case expr.KindDecimal:
		if typ.Precision > 18 {
			return nil, false, nil // stored as text
		}
	default:
		return nil, false, nil
	}
	val, err := c.db.cache.get(c.ctx, cacheKey{table: c.t.cacheID(), name: "column/" + fl.Column, version: c.v}, func() (cached, error) {
		return loadFilterColumn(c.ctx, c.tx, c.t, fl.Column, c.v, typ, c.ids)
	})
	if err != nil {
		return nil, false, err
	}
	col := val.(*filterColumn)
	return col.values, col.values != nil, nil
}

// loadFilterColumn reads physical column col of t for the rows visible at
// v, which must be ids. A value whose SQLite storage class is not the one
// typ's Values field holds (a REAL in an integer column, a BLOB) leaves the
// column to SQL. Returns Internal (18) when the rows cannot be read.
func loadFilterColumn(ctx context.Context, tx *Tx, t *tableRow, col string, v int64, typ expr.Type, ids rowIDs) (*filterColumn, error) {
	rows, err := tx.Query(ctx, fmt.Sprintf("SELECT _rowid, %s FROM %s WHERE %s ORDER BY _rowid",
		quoteColumn(col), dataTable(t), visibleAt), v, v)
	if err != nil {
		return nil, queryError(ctx, err)
	}
	defer rows.Close()
	n := len(ids)
	vals := &expr.Values{Type: typ}
	switch typ.Kind {
	case expr.KindBool:
		vals.Bools = make([]bool, n)
	case expr.KindFloat:
		vals.Floats = make([]float64, n)
	case expr.KindString:
		vals.Strings = make([]string, n)
	default:
		vals.Ints = make([]int64, n)
	}
	var valid []bool
	size := int64(n) * 9
	fits, i := true, 0
	for rows.Next() {
		var id int64
		var x any
		if err := rows.Scan(&id, &x); err != nil {
			return nil, internal("load filter column", err)
		}
		if i >= n || ids[i] != id {
			return nil, store.Errorf(store.CodeInternal, "load filter column: the rows of version %d changed while read", v)
		}
		if !fits {
			i++
			continue
		}
		switch x := x.(type) {
		case nil:
			if valid == nil {
				valid = make([]bool, n)
				for j := range i {
					valid[j] = true
				}
			}
		case int64:
			switch {
			case vals.Ints != nil:
				vals.Ints[i] = x
			case vals.Bools != nil:
				vals.Bools[i] = x != 0
			default:
				fits = false
			}
		case float64:
			if vals.Floats == nil {
				fits = false
				break
			}
			vals.Floats[i] = x
		case string:
			if vals.Strings == nil {
				fits = false
				break
			}
			vals.Strings[i] = x
			size += int64(len(x)) + 16
		default:
			fits = false
		}
		if valid != nil && x != nil {
			valid[i] = true
		}
		i++
	}
	if err := rows.Err(); err != nil {
		return nil, queryError(ctx, err)
	}
	if i != n {
		return nil, store.Errorf(store.CodeInternal, "load filter column: the rows of version %d changed while read", v)
	}
	if !fits {
		return &filterColumn{size: 64}, nil
	}
	vals.Valid = valid
	return &filterColumn{values: vals, size: size}, nil
}

// evalFilter evaluates filter over the rows of t visible at v. ok is false
// when the evaluator does not cover it (run it as SQL then). Returns the
// parse and compile errors of filter: InvalidInput (13), or
// TableColumnNotFound (12) for unknown columns.
func (db *DB) evalFilter(ctx context.Context, tx *Tx, t *tableRow, ts *tableSchema, v int64, filter string) (matched []uint64, cols *snapshotColumns, ok bool, err error) {
	e, err := expr.Parse(filter)
	if err != nil {
		return nil, nil, false, err
	}
	if cols, err = db.columnsAt(ctx, tx, t, ts, v); err != nil {
		return nil, nil, false, err
	}
	matched, ok, err = expr.EvalFilter(e, cols)
	return matched, cols, ok, err
}

// matchedIDs returns the row ids of the set positions of matched, from the
// skip-th on and at most limit of them (all when limit < 0).
func (c *snapshotColumns) matchedIDs(matched []uint64, skip, limit int) []int64 {
	var out []int64
	for w, word := range matched {
		for word != 0 {
			if limit >= 0 && len(out) == limit {
				return out
			}
			pos := w*64 + bits.TrailingZeros64(word)
			word &= word - 1
			if skip > 0 {
				skip--
				continue
			}
			out = append(out, c.ids[pos])
		}
	}
	return out
}
