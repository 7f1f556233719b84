package sqlite

// The catalog (namespaces, table entries, versions, batches, tags,
// branches, transaction records) is package sqlcatalog's, shared with
// store/postgres. This file gives it SQLite's transactions and dialect,
// and the hooks through which the rows of managed tables follow their
// catalog entries in the same transaction.

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/store/sqlcatalog"
	"github.com/lancens/lancens/store/sqlite/internal/sqlitedb"
)

var _ store.ManagedBackend = (*DB)(nil)

// catalog is the name under which DB embeds the shared catalog, whose
// methods implement the catalog interfaces of store.
type catalog = sqlcatalog.Catalog

// openCatalog gives db the shared catalog, and the same catalog making
// version commits with durability d.
func (db *DB) openCatalog(d store.CommitDurability) {
	db.ops = sqlcatalog.NewOps(dialect{}, managedRows{})
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

// managedRows keeps the rows of managed tables in step with the catalog.
type managedRows struct{}

// Found refuses, in a write, a table a staged write holds (tableBusy).
func (managedRows) Found(_ context.Context, tx sqlcatalog.Tx, t *sqlcatalog.Table) error {
	held := tableRow{rowID: t.RowID} // what notHeld reads, on the stack
	held.UUID = t.UUID
	return storeTx(tx).notHeld(&held)
}

// Deleting lets the cached data of t go once the transaction commits and
// drops the rows, lines and indexes of a managed table; its schemas go
// with its entry (ON DELETE CASCADE).
func (managedRows) Deleting(ctx context.Context, tx sqlcatalog.Tx, e *sqlcatalog.Table) error {
	stx, t := storeTx(tx), rowOf(e)
	stx.release(t.UUID)
	if t.Kind != store.Managed {
		return nil
	}
	if err := dropAllIndexes(ctx, stx, t); err != nil {
		return err
	}
	if err := dropLines(ctx, stx, t); err != nil {
		return err
	}
	if _, err := stx.Exec(ctx, `DROP TABLE IF EXISTS `+dataTable(t)); err != nil {
		return internal("drop rows", err)
	}
	return nil
}

func (managedRows) DeleteVersions(ctx context.Context, tx sqlcatalog.Tx, t *sqlcatalog.Table, branch string, ranges []store.VersionRange) (int64, error) {
	return removeManagedVersions(ctx, storeTx(tx), rowOf(t), branch, ranges)
}

// BranchCreated gives a new branch of a managed table its line of rows.
func (managedRows) BranchCreated(ctx context.Context, tx sqlcatalog.Tx, t *sqlcatalog.Table, name, from string, v int64, txID string) error {
	if t.Kind != store.Managed {
		return nil
	}
	return forkLine(ctx, storeTx(tx), rowOf(t), name, from, v, txID)
}

// BranchDeleting drops the line of the branch, if it has one.
func (managedRows) BranchDeleting(ctx context.Context, tx sqlcatalog.Tx, t *sqlcatalog.Table, name string) error {
	return dropLine(ctx, storeTx(tx), rowOf(t), name)
}

// LockLocations implements store.LocationLocker. One process at a time
// has a SQLite store open (Open locks the database), so there is no other
// process to keep out: it returns at once, and the caller's own locks
// order the commits of this process.
func (db *DB) LockLocations(context.Context, []string) (func(), error) {
	return func() {}, nil
}

// tableRow is a catalog entry as the managed-table code uses it.
type tableRow struct {
	rowID int64
	nsID  int64
	store.Table
	// branch and line say which line of a managed table's rows an
	// operation acts on: "" and 0 for main (see branches.go).
	branch string
	line   int64
}

// rowOf returns the catalog entry e as a tableRow on main.
func rowOf(e *sqlcatalog.Table) *tableRow {
	return &tableRow{rowID: e.RowID, nsID: e.NamespaceID, Table: e.Table}
}

// entry returns t as the catalog's entry.
func (t *tableRow) entry() *sqlcatalog.Table {
	return &sqlcatalog.Table{RowID: t.rowID, NamespaceID: t.nsID, Table: t.Table}
}

// The catalog's operations inside a transaction of the store, for the
// managed-table code: see sqlcatalog.Ops for what each returns.

// findTable returns table id on the branch of ctx's data operation, if
// any (see bindBranch). Besides the errors of sqlcatalog.Ops.FindTable it
// returns, in a write, tableBusy while a staged write holds the table.
func findTable(ctx context.Context, tx *Tx, id []string) (*tableRow, error) {
	e, err := tx.db.ops.FindTable(ctx, catalogTx{tx}, id)
	if err != nil {
		return nil, err
	}
	t := rowOf(e)
	if err := bindBranch(ctx, tx, t); err != nil {
		return nil, err
	}
	return t, nil
}

func insertTable(ctx context.Context, tx *Tx, id []string, t store.Table) (*store.Table, error) {
	return tx.db.ops.InsertTable(ctx, catalogTx{tx}, id, t)
}

func deleteTableRow(ctx context.Context, tx *Tx, t *tableRow) error {
	return tx.db.ops.DeleteTable(ctx, catalogTx{tx}, t.entry())
}

func queueDataDeletion(ctx context.Context, tx *Tx, t *tableRow) (string, error) {
	return tx.db.ops.QueueDataDeletion(ctx, catalogTx{tx}, t.entry())
}

func recordTx(ctx context.Context, tx *Tx, kind string, t *store.Table, status store.TransactionStatus, props map[string]string, payload any) (string, error) {
	return tx.db.ops.RecordTx(ctx, catalogTx{tx}, kind, t, status, props, payload)
}

func latestVersion(ctx context.Context, tx *Tx, t *tableRow, branch string) (*store.TableVersion, error) {
	return tx.db.ops.LatestVersion(ctx, catalogTx{tx}, t.entry(), branch)
}

func getVersion(ctx context.Context, tx *Tx, t *tableRow, branch string, v int64) (*store.TableVersion, error) {
	return tx.db.ops.GetVersion(ctx, catalogTx{tx}, t.entry(), branch, v)
}

func checkBranch(ctx context.Context, tx *Tx, t *tableRow, branch string) error {
	return tx.db.ops.CheckBranch(ctx, catalogTx{tx}, t.entry(), branch)
}

func tableIDByUUID(ctx context.Context, tx *Tx, uuid string) ([]string, error) {
	return tx.db.ops.TableIDByUUID(ctx, catalogTx{tx}, uuid)
}

// queryStrings runs a fixed query of one string column and returns its
// values.
func queryStrings(ctx context.Context, tx *Tx, query sqlitedb.Const, args ...any) ([]string, error) {
	return sqlcatalog.QueryStrings(ctx, catalogTx{tx}, string(query), args...)
}

// displayID renders an identifier for messages.
func displayID(id []string) string { return sqlcatalog.DisplayID(id) }

// newUUID returns a random (version 4) UUID.
func newUUID() string { return sqlcatalog.NewUUID() }
