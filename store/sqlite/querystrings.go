package sqlite

import (
	"context"

	"github.com/lancens/lancens/store/sqlite/internal/sqlitedb"
)

// queryStrings runs a fixed query of one string column and returns its
// values.
func queryStrings(ctx context.Context, tx *Tx, query sqlitedb.Const, args ...any) ([]string, error) {
	rows, err := tx.QueryCached(ctx, query, args...)
	if err != nil {
		return nil, internal("query", err)
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, internal("scan", err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, internal("query", err)
	}
	return out, nil
}
