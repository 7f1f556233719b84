package sqlite

// Locations recorded before location keys: the catalog (package
// sqlcatalog) keeps two tables from sharing files; a database from before
// it may hold tables that do.

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/lancens/lancens/store"
)

// keyLocations fills in the location keys of tables recorded before keys
// existed. A table whose key another table has already is left without one:
// both stay as they are (LocationConflicts reports them).
func (db *DB) keyLocations(ctx context.Context) error {
	return db.write(ctx, func(tx *Tx) error {
		rows, err := tx.QueryCached(ctx, `SELECT id, location FROM tables WHERE location_key IS NULL ORDER BY id`)
		if err != nil {
			return internal("key locations", err)
		}
		type unkeyed struct {
			id       int64
			location string
		}
		var todo []unkeyed
		for rows.Next() {
			var u unkeyed
			if err := rows.Scan(&u.id, &u.location); err != nil {
				rows.Close()
				return internal("key locations", err)
			}
			todo = append(todo, u)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return internal("key locations", err)
		}
		for _, u := range todo {
			key := store.LocationKey(u.location)
			var taken int
			if err := tx.QueryRowCached(ctx, `SELECT count(*) FROM tables WHERE location_key = ?`, key).Scan(&taken); err != nil {
				return internal("key locations", err)
			}
			if taken > 0 {
				continue
			}
			if _, err := tx.ExecCached(ctx, `UPDATE tables SET location_key = ? WHERE id = ?`, key, u.id); err != nil {
				return internal("key locations", err)
			}
		}
		return nil
	})
}

// LocationConflict is a pair of tables whose locations are the same or one
// inside the other, which lancens refuses to create now but an older
// version may have recorded.
type LocationConflict struct {
	Tables    [2][]string
	Locations [2]string
}

// LocationConflicts returns every pair of tables whose locations clash,
// each table paired with the nearest table containing it. Dropping such a
// table keeps its data (see dropTable). It returns an error if the catalog
// cannot be read.
func (db *DB) LocationConflicts(ctx context.Context) ([]LocationConflict, error) {
	var out []LocationConflict
	err := db.read(ctx, func(tx *Tx) error {
		rows, err := tx.QueryCached(ctx, `SELECT uuid, location FROM tables`)
		if err != nil {
			return internal("list locations", err)
		}
		type keyed struct {
			uuid, location, key string
		}
		var all []keyed
		for rows.Next() {
			var k keyed
			if err := rows.Scan(&k.uuid, &k.location); err != nil {
				rows.Close()
				return internal("list locations", err)
			}
			k.key = store.LocationKey(k.location)
			all = append(all, k)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return internal("list locations", err)
		}
		// Sorted by key, a location comes right after those containing it:
		// a stack of the enclosing ones finds every clash in one pass.
		slices.SortFunc(all, func(a, b keyed) int { return strings.Compare(a.key, b.key) })
		var enclosing []keyed
		for _, k := range all {
			for len(enclosing) > 0 && !strings.HasPrefix(k.key, enclosing[len(enclosing)-1].key) {
				enclosing = enclosing[:len(enclosing)-1]
			}
			if len(enclosing) > 0 {
				outer := enclosing[len(enclosing)-1]
				a, errA := db.ops.TableIDByUUID(ctx, catalogTx{tx}, outer.uuid)
				b, errB := db.ops.TableIDByUUID(ctx, catalogTx{tx}, k.uuid)
				if err := errors.Join(errA, errB); err != nil {
					return err
				}
				out = append(out, LocationConflict{Tables: [2][]string{a, b}, Locations: [2]string{outer.location, k.location}})
			}
			enclosing = append(enclosing, k)
		}
		return nil
	})
	return out, err
}
