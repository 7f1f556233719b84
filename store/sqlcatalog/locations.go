package sqlcatalog

import (
	"context"
	"strings"

	"github.com/lancens/lancens/store"
)

// Two tables never share a location nor nest one inside the other (see
// store.LocationKey): every table records its location's key, unique, and
// a new location is checked against the keys inside it (a key range) and
// those containing it (its ancestors' keys).

// clashTable is a table whose location clashes with another.
type clashTable struct {
	uuid, location string
}

// findLocationClash returns a table other than rowID whose location is the
// same as the one with key, contains it or lies inside it, or nil.
func (o *Ops) findLocationClash(ctx context.Context, tx Tx, key string, rowID int64) (*clashTable, error) {
	scan := func(row Row) (*clashTable, error) {
		var c clashTable
		err := row.Scan(&c.uuid, &c.location)
		if o.d.NoRows(err) {
			return nil, nil
		}
		if err != nil {
			return nil, internal("check location", err)
		}
		return &c, nil
	}
	// The same place, or one inside it.
	c, err := scan(tx.QueryRow(ctx, `SELECT uuid, location FROM tables
		WHERE location_key >= ? AND location_key < ? AND id <> ? LIMIT 1`, key, store.LocationKeyRangeEnd(key), rowID))
	if c != nil || err != nil {
		return c, err
	}
	// A place that contains it.
	if c, err := scan(tx.QueryRow(ctx, o.q.locationAncestor, o.d.List(store.LocationKeyAncestors(key)), rowID)); c != nil || err != nil {
		return c, err
	}
	// A SQLite catalog from before location keys keeps the tables that
	// shared a location with an older one without a key (PostgreSQL's
	// catalog has none: its keys are required).
	rows, err := tx.Query(ctx, `SELECT uuid, location FROM tables WHERE location_key IS NULL AND id <> ?`, rowID)
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
func (o *Ops) clashMessage(ctx context.Context, tx Tx, location string, c *clashTable) string {
	name := c.uuid
	if id, err := o.TableIDByUUID(ctx, tx, c.uuid); err == nil {
		name = DisplayID(id)
	}
	return store.ClashMessage(location, c.location, name)
}

// checkLocationFree returns InvalidInput (13) when location is the location
// of another table, lies inside one or contains one: two tables never share
// files, so that dropping one never deletes the other's data. The same
// holds for the location of a dropped table whose data is still queued
// for deletion or being deleted (by any process): that deletion would
// remove the new table's files.
func (o *Ops) checkLocationFree(ctx context.Context, tx Tx, location string) error {
	key := store.LocationKey(location)
	c, err := o.findLocationClash(ctx, tx, key, 0)
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
func findPendingDeletion(ctx context.Context, tx Tx, key string) (txID, location string, err error) {
	rows, err := tx.Query(ctx, `SELECT id, coalesce(payload->>'location', '') FROM transactions
		WHERE status IN ('Queued', 'Running') AND kind = ?`, store.JobDeleteTableData)
	if err != nil {
		return "", "", internal("check location", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, loc string
		if err := rows.Scan(&id, &loc); err != nil {
			return "", "", internal("check location", err)
		}
		if loc == "" {
			continue
		}
		if other := store.LocationKey(loc); strings.HasPrefix(other, key) || strings.HasPrefix(key, other) {
			return id, loc, nil
		}
	}
	if err := rows.Err(); err != nil {
		return "", "", internal("check location", err)
	}
	return "", "", nil
}
