package sqlite

import (
	"context"

	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/store/sqlite/internal/sqlitedb"
)

// cutNames trims a listing of names fetched with one extra row to size and
// returns the token for the next page, its last name, when that extra row
// was there (see store.NameAfter).
func cutNames(names []string, size int) ([]string, string) {
	if len(names) <= size {
		return names, ""
	}
	return names[:size], names[size-1]
}

// cutPage trims a listing fetched with one extra row to size and returns the
// token for the next page, made from the key of its last item, when that
// extra row was there.
func cutPage[T any](items []T, size int, key func(T) string) ([]T, string) {
	if len(items) <= size {
		return items, ""
	}
	items = items[:size]
	return items, store.EncodePageToken(key(items[size-1]))
}

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
