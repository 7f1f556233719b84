package legacy

import (
	"context"
	"database/sql"

	"github.com/lancens/lancens/store/sqlcatalog"
)

// Store is a SQLite store whose file may hold managed tables of an earlier
// lancens; store/sqlite's DB is one. Its transactions are the store's own,
// so that what the conversion records commits as every catalog change does.
type Store interface {
	// ReadLegacy runs fn in a read-only transaction (one snapshot).
	ReadLegacy(ctx context.Context, fn func(tx Tx) error) error
	// WriteLegacy runs fn in a write transaction and commits it when fn
	// returns nil; fn's error undoes everything fn did.
	WriteLegacy(ctx context.Context, fn func(tx Tx) error) error
}

// Tx is one transaction of a Store.
type Tx interface {
	// Exec, Query and QueryRow run SQL built at run time (it names the
	// tables of one managed table), unprepared.
	Exec(ctx context.Context, query string, args ...any) (sql.Result, error)
	Query(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRow(ctx context.Context, query string, args ...any) *sql.Row
	// Catalog is the transaction as the shared catalog's operations (Ops)
	// take it.
	Catalog() sqlcatalog.Tx
	Ops() *sqlcatalog.Ops
}
