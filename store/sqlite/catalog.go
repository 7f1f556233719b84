package sqlite

// The catalog (namespaces, table entries, versions, batches, tags,
// branches, transaction records) is package sqlcatalog's, shared with
// store/postgres. This file gives it SQLite's transactions and dialect,
// and the hooks through which the managed tables of earlier releases,
// until converted (package legacy), follow their catalog entries.

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/store/sqlcatalog"
	"github.com/lancens/lancens/store/sqlite/internal/sqlitedb"
	"github.com/lancens/lancens/store/sqlite/legacy"
)

var _ store.Backend = (*DB)(nil)

// catalog is the name under which DB embeds the shared catalog, whose
// methods implement the catalog interfaces of store.
type catalog = sqlcatalog.Catalog

// openCatalog gives db the shared catalog, and the same catalog making
// version commits with durability d.
func (db *DB) openCatalog(d store.CommitDurability) {
	db.ops = sqlcatalog.NewOps(dialect{}, legacyTables{})
	db.catalog = sqlcatalog.New(transactions{db: db}, db.ops)
	db.commitTx = transactions{db: db, relaxed: d == store.DurabilityProcess}
	db.commits = sqlcatalog.New(db.commitTx, db.ops)
}

// CommitVersion implements store.Versions, with the durability of
// Options.CommitDurability.
func (db *DB) CommitVersion(ctx context.Context, id []string, vc store.VersionCommit) (*store.TableVersion, string, error) {
	return db.commits.CommitVersion(ctx, id, vc)
}

// CommitBatch implements store.Batches, with the durability of
// Options.CommitDurability.
func (db *DB) CommitBatch(ctx context.Context, ops []store.BatchOperation) ([]store.BatchResult, string, error) {
	return db.commits.CommitBatch(ctx, ops)
}

// transactions runs the catalog's transactions on the store's writer and
// readers; relaxed writes need survive only a crash of the process
// (sqlitedb's WriteRelaxed).
type transactions struct {
	db      *DB
	relaxed bool
}

func (t transactions) Read(ctx context.Context, fn func(tx sqlcatalog.Tx) error) error {
	return t.db.read(ctx, func(tx *Tx) error { return fn(catalogTx{tx}) })
}

func (t transactions) Write(ctx context.Context, fn func(tx sqlcatalog.Tx) error) error {
	write := t.db.base.Write
	if t.relaxed {
		write = t.db.base.WriteRelaxed
	}
	return t.db.writeWith(ctx, write, func(tx *Tx) error { return fn(catalogTx{tx}) })
}

// WriteTable is Write: the one writer runs every write after the other.
func (t transactions) WriteTable(ctx context.Context, fn func(tx sqlcatalog.Tx) error) error {
	return t.Write(ctx, fn)
}

// catalogTx is a transaction of the store as the catalog uses it. The
// catalog's statements are fixed texts, so all of them go through the
// statement cache.
type catalogTx struct{ tx *Tx }

func (c catalogTx) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := c.tx.ExecCached(ctx, sqlitedb.Const(query), args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (c catalogTx) QueryRow(ctx context.Context, query string, args ...any) sqlcatalog.Row {
	return c.tx.QueryRowCached(ctx, sqlitedb.Const(query), args...)
}

func (c catalogTx) Query(ctx context.Context, query string, args ...any) (sqlcatalog.Rows, error) {
	rows, err := c.tx.QueryCached(ctx, sqlitedb.Const(query), args...)
	if err != nil {
		return nil, err
	}
	return rows, nil
}

func (c catalogTx) Now() time.Time { return c.tx.Now() }

func (c catalogTx) JobQueued(context.Context) error {
	c.tx.queuedJob()
	return nil
}

// storeTx returns the store's transaction a catalog transaction is.
func storeTx(tx sqlcatalog.Tx) *Tx { return tx.(catalogTx).tx }

// dialect is SQLite's SQL for the catalog.
type dialect struct{}

func (dialect) NoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }

func (dialect) UniqueViolation(err error) bool { return isConstraint(err) }

// RowLocks is false: the one writer runs every write after the other.
func (dialect) RowLocks() bool { return false }

// InList reads a list parameter as a JSON array.
func (dialect) InList(column string) string {
	return column + ` IN (SELECT value FROM json_each(?))`
}

func (dialect) List(values []string) any {
	if values == nil {
		values = []string{}
	}
	b, _ := json.Marshal(values) // a slice of strings always encodes
	return string(b)
}

// WalkNamespaces follows id one level at a time: each step is one lookup
// of a cached statement on the (parent_id, name) index.
func (dialect) WalkNamespaces(ctx context.Context, tx sqlcatalog.Tx, id []string) (int64, int, error) {
	rowID := int64(1)
	for i, name := range id {
		err := tx.QueryRow(ctx, `SELECT id FROM namespaces WHERE parent_id = ? AND name = ?`, rowID, name).Scan(&rowID)
		if errors.Is(err, sql.ErrNoRows) {
			return rowID, i, nil
		}
		if err != nil {
			return 0, 0, err
		}
	}
	return rowID, len(id), nil
}

// legacyTables keeps the managed tables an earlier release left in the
// file (kind 'managed', their rows in rows_N: see package legacy) in step
// with the catalog until they are converted into Lance datasets: a drop
// drops their rows too, and the changes that would need their rows
// answer InvalidTableState (19), as the engine's data operations do.
type legacyTables struct{}

// Deleting drops the rows of a legacy managed table; its other records go
// with its entry (ON DELETE CASCADE).
func (legacyTables) Deleting(ctx context.Context, tx sqlcatalog.Tx, t *sqlcatalog.Table) error {
	if t.Kind != store.Managed {
		return nil
	}
	stx := storeTx(tx)
	return legacy.DropRows(ctx, legacyTx{stx.Tx, stx}, t.RowID)
}

// DeleteVersions refuses: a legacy table's versions go once it is a
// Lance dataset.
func (legacyTables) DeleteVersions(_ context.Context, _ sqlcatalog.Tx, t *sqlcatalog.Table, _ string, _ []store.VersionRange) (int64, error) {
	return 0, unconverted(t)
}

// BranchCreated refuses a branch of a legacy table.
func (legacyTables) BranchCreated(_ context.Context, _ sqlcatalog.Tx, t *sqlcatalog.Table, _, _ string, _ int64, _ string) error {
	if t.Kind != store.Managed {
		return nil
	}
	return unconverted(t)
}

// BranchDeleting refuses to delete a branch of a legacy table.
func (legacyTables) BranchDeleting(_ context.Context, _ sqlcatalog.Tx, t *sqlcatalog.Table, _ string) error {
	if t.Kind != store.Managed {
		return nil
	}
	return unconverted(t)
}

// unconverted is InvalidTableState (19) for legacy table t.
func unconverted(t *sqlcatalog.Table) error {
	return store.Errorf(store.CodeInvalidTableState, "table %s keeps its rows in the database file of an earlier lancens and is not converted yet: "+
		"run lancens migrate (the server's log says why its conversion failed)", sqlcatalog.DisplayID(t.ID))
}

// LockLocations implements store.LocationLocker. One process at a time
// has a SQLite store open (Open locks the database), so there is no other
// process to keep out: it returns at once, and the caller's own locks
// order the commits of this process.
func (db *DB) LockLocations(context.Context, []string) (func(), error) {
	return func() {}, nil
}
