package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/lancens/lancens/store"
)

// clashTable is a table whose location clashes with another.
type clashTable struct {
	uuid, location string
}

// findLocationClash returns a table other than rowID whose location is
// the same as the one with key, contains it or lies inside it, or nil.
func findLocationClash(ctx context.Context, tx *Tx, key string, rowID int64) (*clashTable, error) {
	scan := func(row *sql.Row) (*clashTable, error) {
		var c clashTable
		err := row.Scan(&c.uuid, &c.location)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, nil
		}
		if err != nil {
			return nil, internal("check location", err)
		}
		return &c, nil
	}
	// The same place, or one inside it.
	c, err := scan(tx.QueryRowCached(ctx, `SELECT uuid, location FROM tables
		WHERE location_key >= ? AND location_key < ? AND id != ? LIMIT 1`, key, store.LocationKeyRangeEnd(key), rowID))
	if c != nil || err != nil {
		return c, err
	}
	// A place that contains it.
	ancestors, err := json.Marshal(store.LocationKeyAncestors(key))
	if err != nil {
		return nil, internal("check location", err)
	}
	c, err = scan(tx.QueryRowCached(ctx, `SELECT uuid, location FROM tables
		WHERE location_key IN (SELECT value FROM json_each(?)) AND id != ? LIMIT 1`, string(ancestors), rowID))
	if c != nil || err != nil {
		return c, err
	}
	// Tables of an older database that shared a location have no key.
	rows, err := tx.QueryCached(ctx, `SELECT uuid, location FROM tables WHERE location_key IS NULL AND id != ?`, rowID)
	if err != nil {
		return nil, internal("check location", err)
	}
	defer rows.Close()
	for rows.Next() {
		var c clashTable
		if err := rows.Scan(&c.uuid, &c.location); err != nil {
			return nil, internal("check location", err)
		}
		if other := store.LocationKey(c.location); strings.HasPrefix(other, key) || strings.HasPrefix(key, other) {
			return &c, nil
		}
	}
	if err := rows.Err(); err != nil {
		return nil, internal("check location", err)
	}
	return nil, nil
}

// clashMessage describes, for the record of a drop, how location clashes
// with table c, naming it.
func clashMessage(ctx context.Context, tx *Tx, location string, c *clashTable) string {
	name := c.uuid
	if id, err := tableIDByUUID(ctx, tx, c.uuid); err == nil {
		name = displayID(id)
	}
	return store.ClashMessage(location, c.location, name)
}

// checkLocationFree returns InvalidInput (13) when location is the location
// of another table, lies inside one or contains one: two tables never share
// files, so that dropping one never deletes the other's data. The same
// holds for the location of a dropped table whose data is still queued
// for deletion or being deleted: that deletion would remove the new
// table's files.
func checkLocationFree(ctx context.Context, tx *Tx, location string) error {
	key := store.LocationKey(location)
	c, err := findLocationClash(ctx, tx, key, 0)
	if err != nil {
		return err
	}
	if c != nil {
		return store.Errorf(store.CodeInvalidInput, "%s; two tables cannot share files", store.ClashMessage(location, c.location, ""))
	}
	txID, pending, err := findPendingDeletion(ctx, tx, key)
	if err != nil {
		return err
	}
	if txID != "" {
		return store.Errorf(store.CodeInvalidInput, "location %s overlaps %s, the location of a dropped table whose files are being deleted "+
			"(transaction %s); use it again once that transaction has finished", location, pending, txID)
	}
	return nil
}

// findPendingDeletion returns the transaction and the location of a
// deletion of table data, queued or running, whose location is the one
// with key, contains it or lies inside it; txID is "" when there is none.
func findPendingDeletion(ctx context.Context, tx *Tx, key string) (txID, location string, err error) {
	rows, err := tx.QueryCached(ctx, `SELECT id, json_extract(payload, '$.location') FROM transactions
		WHERE status IN ('Queued', 'Running') AND kind = ?`, store.JobDeleteTableData)
	if err != nil {
		return "", "", internal("check location", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var loc sql.NullString
		if err := rows.Scan(&id, &loc); err != nil {
			return "", "", internal("check location", err)
		}
		if !loc.Valid {
			continue
		}
		if other := store.LocationKey(loc.String); strings.HasPrefix(other, key) || strings.HasPrefix(key, other) {
			return id, loc.String, nil
		}
	}
	if err := rows.Err(); err != nil {
		return "", "", internal("check location", err)
	}
	return "", "", nil
}

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
			clashTable
			key string
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
				a, errA := tableIDByUUID(ctx, tx, outer.uuid)
				b, errB := tableIDByUUID(ctx, tx, k.uuid)
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
