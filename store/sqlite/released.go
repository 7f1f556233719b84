package sqlite

import (
	"context"
	"encoding/json"

	"github.com/lancens/lancens/store"
)

var _ store.LocationHistory = (*DB)(nil)

// recordReleased remembers that t, whose catalog entry is being deleted,
// lay at its location in its namespace.
func recordReleased(ctx context.Context, tx *Tx, t *tableRow) error {
	ns, err := json.Marshal(t.Namespace())
	if err != nil {
		return internal("record released location", err)
	}
	if _, err := tx.ExecCached(ctx, `INSERT INTO released_locations (location_key, namespace, released_at) VALUES (?, ?, ?)
		ON CONFLICT (location_key, namespace) DO UPDATE SET released_at = excluded.released_at`,
		store.LocationKey(t.Location), string(ns), tx.Now().UnixMilli()); err != nil {
		return internal("record released location", err)
	}
	return nil
}

// ReleasedLocationNamespaces implements store.LocationHistory.
func (db *DB) ReleasedLocationNamespaces(ctx context.Context, location string) ([][]string, error) {
	q := store.ReleasedKeys(location)
	seen := map[string]bool{}
	var out [][]string
	add := func(raw string) error {
		if seen[raw] {
			return nil
		}
		seen[raw] = true
		var ns []string
		if err := json.Unmarshal([]byte(raw), &ns); err != nil {
			return internal("read released locations", err)
		}
		out = append(out, ns)
		return nil
	}
	err := db.read(ctx, func(tx *Tx) error {
		rows, err := tx.QueryCached(ctx, `SELECT namespace FROM released_locations WHERE location_key >= ? AND location_key < ?`, q.From, q.To)
		if err != nil {
			return internal("read released locations", err)
		}
		defer rows.Close()
		for rows.Next() {
			var raw string
			if err := rows.Scan(&raw); err != nil {
				return internal("read released locations", err)
			}
			if err := add(raw); err != nil {
				return err
			}
		}
		if err := rows.Err(); err != nil {
			return internal("read released locations", err)
		}
		for _, key := range q.Ancestors {
			rows, err := tx.QueryCached(ctx, `SELECT namespace FROM released_locations WHERE location_key = ?`, key)
			if err != nil {
				return internal("read released locations", err)
			}
			for rows.Next() {
				var raw string
				if err := rows.Scan(&raw); err != nil {
					rows.Close()
					return internal("read released locations", err)
				}
				if err := add(raw); err != nil {
					rows.Close()
					return err
				}
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return internal("read released locations", err)
			}
		}
		return nil
	})
	return out, err
}
