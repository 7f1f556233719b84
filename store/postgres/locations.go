package postgres

import (
	"context"
	"errors"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/lancens/lancens/store"
)

// clashTable is a table whose location clashes with another.
type clashTable struct {
	uuid, location string
}

// findLocationClash returns a table other than rowID whose location is the
// same as the one with key, contains it or lies inside it, or nil.
func findLocationClash(ctx context.Context, tx *tx, key string, rowID int64) (*clashTable, error) {
	var c clashTable
	err := tx.QueryRow(ctx, `SELECT uuid, location FROM tables
		WHERE ((location_key >= $1 AND location_key < $2) OR location_key = ANY($3::text[])) AND id <> $4 LIMIT 1`,
		key, store.LocationKeyRangeEnd(key), store.LocationKeyAncestors(key), rowID).Scan(&c.uuid, &c.location)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, internal("check location", err)
	}
	return &c, nil
}

// clashMessage describes how location clashes with table c.
func clashMessage(ctx context.Context, tx *tx, location string, c *clashTable) string {
	name := c.uuid
	if id, err := tableIDByUUID(ctx, tx, c.uuid); err == nil {
		name = displayID(id)
	}
	mine, theirs := store.LocationKey(location), store.LocationKey(c.location)
	switch {
	case mine == theirs:
		return "location " + location + " is the location of table " + name
	case strings.HasPrefix(mine, theirs):
		return "location " + location + " lies inside " + c.location + ", the location of table " + name
	default:
		return "location " + location + " contains " + c.location + ", the location of table " + name
	}
}

// checkLocationFree returns InvalidInput (13) when location is the location
// of another table, lies inside one or contains one: two tables never share
// files, so that dropping one never deletes the other's data.
func checkLocationFree(ctx context.Context, tx *tx, location string) error {
	c, err := findLocationClash(ctx, tx, store.LocationKey(location), 0)
	if err != nil {
		return err
	}
	if c != nil {
		return store.Errorf(store.CodeInvalidInput, "%s; two tables cannot share files", clashMessage(ctx, tx, location, c))
	}
	return nil
}
