package postgres

import (
	"context"

	"github.com/lancens/lancens/store"
)

var _ store.LocationHistory = (*DB)(nil)

// recordReleased remembers that t, whose catalog entry is being deleted,
// lay at its location in its namespace.
func recordReleased(ctx context.Context, tx *tx, t *tableRow) error {
	if _, err := tx.Exec(ctx, `INSERT INTO released_locations (location_key, namespace, released_at) VALUES ($1, $2, $3)
		ON CONFLICT (location_key, namespace) DO UPDATE SET released_at = excluded.released_at`,
		store.LocationKey(t.Location), t.Namespace(), tx.now.UnixMilli()); err != nil {
		return internal("record released location", err)
	}
	return nil
}

// ReleasedLocationNamespaces implements store.LocationHistory.
func (db *DB) ReleasedLocationNamespaces(ctx context.Context, location string) ([][]string, error) {
	q := store.ReleasedKeys(location)
	var out [][]string
	err := db.read(ctx, func(tx *tx) error {
		rows, err := tx.Query(ctx, `SELECT DISTINCT namespace FROM released_locations
			WHERE (location_key >= $1 AND location_key < $2) OR location_key = ANY($3)`, q.From, q.To, q.Ancestors)
		if err != nil {
			return internal("read released locations", err)
		}
		defer rows.Close()
		for rows.Next() {
			var ns []string
			if err := rows.Scan(&ns); err != nil {
				return internal("read released locations", err)
			}
			out = append(out, ns)
		}
		if err := rows.Err(); err != nil {
			return internal("read released locations", err)
		}
		return nil
	})
	return out, err
}
