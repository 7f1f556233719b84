package sqlcatalog

import (
	"context"
	"encoding/json"

	"github.com/lancens/lancens/store"
)

var _ store.LocationHistory = (*Catalog)(nil)

// recordReleased remembers that t, whose catalog entry is being deleted,
// lay at its location in its namespace (a JSON array of names, which both
// backends store as text).
func recordReleased(ctx context.Context, tx Tx, t *Table) error {
	ns, err := json.Marshal(t.Namespace())
	if err != nil {
		return internal("record released location", err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO released_locations (location_key, namespace, released_at) VALUES (?, ?, ?)
		ON CONFLICT (location_key, namespace) DO UPDATE SET released_at = excluded.released_at`,
		store.LocationKey(t.Location), string(ns), tx.Now().UnixMilli()); err != nil {
		return internal("record released location", err)
	}
	return nil
}

// ReleasedLocationNamespaces implements store.LocationHistory.
func (c *Catalog) ReleasedLocationNamespaces(ctx context.Context, location string) ([][]string, error) {
	q := store.ReleasedKeys(location)
	var out [][]string
	err := c.db.Read(ctx, func(tx Tx) error {
		out = nil
		seen := map[string]bool{}
		collect := func(query string, args ...any) error {
			rows, err := tx.Query(ctx, query, args...)
			if err != nil {
				return internal("read released locations", err)
			}
			defer rows.Close()
			for rows.Next() {
				var raw string
				if err := rows.Scan(&raw); err != nil {
					return internal("read released locations", err)
				}
				if seen[raw] {
					continue
				}
				seen[raw] = true
				var ns []string
				if err := json.Unmarshal([]byte(raw), &ns); err != nil {
					return internal("read released locations", err)
				}
				out = append(out, ns)
			}
			if err := rows.Err(); err != nil {
				return internal("read released locations", err)
			}
			return nil
		}
		if err := collect(`SELECT namespace FROM released_locations WHERE location_key >= ? AND location_key < ?`, q.From, q.To); err != nil {
			return err
		}
		for _, key := range q.Ancestors {
			if err := collect(`SELECT namespace FROM released_locations WHERE location_key = ?`, key); err != nil {
				return err
			}
		}
		return nil
	})
	return out, err
}
