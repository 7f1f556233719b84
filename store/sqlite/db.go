package sqlite

import (
	"context"
	"embed"
	"errors"
	"time"

	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/store/sqlcatalog"
	"github.com/lancens/lancens/store/sqlite/internal/sqlitedb"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Options tune how the database file is opened.
type Options struct {
	// Synchronous is the SQLite synchronous pragma: "FULL" (the default)
	// makes every commit durable across a power loss; "NORMAL" is faster and
	// still survives a crash of the process.
	Synchronous string
	// Readers is the size of the read connection pool (default: 2×CPUs, at least 4).
	Readers int
	// Now is the clock; tests set it. Default time.Now.
	Now func() time.Time
	// OnJobQueued, when set, is called after every commit that leaves a
	// job queued (see store.Jobs): a job runner waiting for work passes
	// its wake-up here. It must not block.
	OnJobQueued func()
	// CommitDurability is what the records of version commits
	// (CommitVersion, CommitBatch) survive once they return:
	// store.DurabilityFull (the default) commits them with Synchronous,
	// store.DurabilityProcess with synchronous NORMAL, which survives a
	// crash of the process, not necessarily a power loss. Every other
	// write commits with Synchronous.
	CommitDurability store.CommitDurability
}

// DB is an open lancens catalog.
type DB struct {
	// catalog implements the catalog interfaces of store; ops runs its
	// operations inside the store's own transactions.
	*catalog
	// commits is the catalog whose writes (commitTx) have
	// Options.CommitDurability: it makes the version commits (see
	// CommitVersion).
	commits  *catalog
	commitTx transactions
	ops      *sqlcatalog.Ops
	base     *sqlitedb.DB
	// lock keeps any other DB, in this process or another, from opening
	// the same file while this one is open.
	lock *dbLock
	// onJobQueued is Options.OnJobQueued (nil: none).
	onJobQueued func()
}

// Open opens (creating if needed) the database at path and applies pending
// migrations. It holds an exclusive lock on the database (the file
// path+".lock", which records the holder's pid) until Close: one server per
// database. It returns an error if another DB, in this process or another,
// has the database open (naming the holder), if the file cannot be opened,
// a pragma does not take effect, or a migration fails; a database lancens
// cannot write (a read-only file or directory) or cannot open is a
// ServiceUnavailable (17) error saying so in plain words.
func Open(ctx context.Context, path string, opts Options) (*DB, error) {
	if path == "" || path == ":memory:" {
		return nil, errors.New("sqlite: a file path is required (an in-memory database cannot be shared by a connection pool)")
	}
	lock, err := lockDatabase(path)
	if err != nil {
		return nil, err
	}
	db := &DB{lock: lock, onJobQueued: opts.OnJobQueued}
	db.openCatalog(opts.CommitDurability)
	// Recovery runs on the writer alone, before any read: tables recorded
	// before location keys existed get theirs.
	var recoverErr error
	base, err := sqlitedb.Open(ctx, path, sqlitedb.Options{
		Synchronous: opts.Synchronous, Readers: opts.Readers, Now: opts.Now, Migrations: migrationFiles,
		Recover: func(ctx context.Context, base *sqlitedb.DB) error {
			db.base = base
			recoverErr = db.keyLocations(ctx)
			return recoverErr
		},
	})
	if err != nil {
		lock.release()
		if recoverErr != nil {
			return nil, recoverErr
		}
		return nil, openError(path, err)
	}
	db.base = base
	return db, nil
}

// Close stops the checkpointer, closes the connection pools and releases
// the database's lock. It returns the errors met.
func (db *DB) Close() error {
	return errors.Join(db.base.Close(), db.lock.release())
}

// Tx is a transaction of the store: a sqlitedb transaction (fixed catalog
// statements go through its ExecCached, QueryCached and QueryRowCached, SQL
// built at run time through Exec, Query and QueryRow) and what the store
// tracks about it. Each write of a group commit gets its own Tx.
type Tx struct {
	*sqlitedb.Tx
	db *DB
	// jobQueued says the write queued a job: once it commits, the store
	// calls Options.OnJobQueued.
	jobQueued bool
}

// queuedJob records that the transaction leaves a job queued.
func (tx *Tx) queuedJob() {
	if tx.jobQueued || tx.db.onJobQueued == nil {
		return
	}
	tx.jobQueued = true
	tx.OnCommit(tx.db.onJobQueued)
}

// write runs fn in a write transaction and commits it if fn returns nil; an
// error undoes everything fn did. A full disk or a read-only database is
// ServiceUnavailable (17), see storageError. Writes that arrive while
// another is committing are grouped (sqlitedb group commit).
func (db *DB) write(ctx context.Context, fn func(tx *Tx) error) error {
	return db.writeWith(ctx, db.base.Write, fn)
}

// writeWith is write through a given write of the base: its Write, or
// its WriteRelaxed.
func (db *DB) writeWith(ctx context.Context, baseWrite func(context.Context, func(*sqlitedb.Tx) error) error, fn func(tx *Tx) error) error {
	return storeError(baseWrite(ctx, func(base *sqlitedb.Tx) error {
		return fn(&Tx{Tx: base, db: db})
	}))
}

// read runs fn in a read-only transaction: one consistent snapshot. Its
// errors are classified as write's are.
func (db *DB) read(ctx context.Context, fn func(tx *Tx) error) error {
	return storeError(db.base.Read(ctx, func(base *sqlitedb.Tx) error {
		return fn(&Tx{Tx: base, db: db})
	}))
}
