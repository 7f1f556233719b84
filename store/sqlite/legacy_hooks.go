package sqlite

import (
	"context"

	"github.com/lancens/lancens/store/sqlcatalog"
	"github.com/lancens/lancens/store/sqlite/internal/sqlitedb"
	"github.com/lancens/lancens/store/sqlite/legacy"
)

// The conversion of managed tables into Lance datasets (package legacy)
// runs in the store's own transactions: these give it the raw SQL it
// reads the row tables with and the catalog's operations.

var _ legacy.Store = (*DB)(nil)

// ReadLegacy implements legacy.Store.
func (db *DB) ReadLegacy(ctx context.Context, fn func(tx legacy.Tx) error) error {
	return db.read(ctx, func(tx *Tx) error { return fn(legacyTx{tx.Tx, tx}) })
}

// WriteLegacy implements legacy.Store.
func (db *DB) WriteLegacy(ctx context.Context, fn func(tx legacy.Tx) error) error {
	return db.write(ctx, func(tx *Tx) error { return fn(legacyTx{tx.Tx, tx}) })
}

// legacyTx is a transaction of the store as package legacy uses it.
type legacyTx struct {
	*sqlitedb.Tx
	tx *Tx
}

func (t legacyTx) Catalog() sqlcatalog.Tx { return catalogTx{t.tx} }
func (t legacyTx) Ops() *sqlcatalog.Ops   { return t.tx.db.ops }
