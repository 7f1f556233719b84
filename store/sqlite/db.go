// Package sqlite implements the lancens store on one SQLite file
// (modernc.org/sqlite, no cgo): the catalog, version records and table data
// commit together in one transaction.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"runtime"
	"time"

	sqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

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
}

// DB is an open lancens database. Writes go through one connection, so they
// queue in Go instead of contending for SQLite's write lock; reads use a pool
// and see the last committed state (WAL).
type DB struct {
	path   string
	writer *sql.DB
	reader *sql.DB
	now    func() time.Time
}

// Open opens (creating if needed) the database at path and applies pending
// migrations. It returns an error if the file cannot be opened, a pragma does
// not take effect, or a migration fails.
func Open(ctx context.Context, path string, opts Options) (*DB, error) {
	if path == "" || path == ":memory:" {
		return nil, errors.New("sqlite: a file path is required (an in-memory database cannot be shared by a connection pool)")
	}
	if opts.Synchronous == "" {
		opts.Synchronous = "FULL"
	}
	switch opts.Synchronous {
	case "FULL", "NORMAL", "EXTRA":
	default:
		return nil, fmt.Errorf("sqlite: unknown synchronous mode %q (FULL, NORMAL or EXTRA)", opts.Synchronous)
	}
	if opts.Readers <= 0 {
		opts.Readers = max(4, 2*runtime.NumCPU())
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	writer, err := sql.Open("sqlite", dsn(path, opts.Synchronous, true))
	if err != nil {
		return nil, fmt.Errorf("sqlite: open writer: %w", err)
	}
	writer.SetMaxOpenConns(1)
	writer.SetMaxIdleConns(1)
	writer.SetConnMaxIdleTime(0)
	writer.SetConnMaxLifetime(0)
	db := &DB{path: path, writer: writer, now: opts.Now}
	if err := db.checkPragmas(ctx, writer); err != nil {
		writer.Close()
		return nil, err
	}
	if err := db.migrate(ctx); err != nil {
		writer.Close()
		return nil, err
	}
	reader, err := sql.Open("sqlite", dsn(path, opts.Synchronous, false))
	if err != nil {
		writer.Close()
		return nil, fmt.Errorf("sqlite: open readers: %w", err)
	}
	reader.SetMaxOpenConns(opts.Readers)
	reader.SetMaxIdleConns(opts.Readers)
	db.reader = reader
	if err := db.checkPragmas(ctx, reader); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// dsn builds the connection string. Every pragma is in the DSN so that each
// connection the pool opens gets it; busy_timeout comes first so the
// connection waits rather than fails while another sets WAL mode.
func dsn(path, synchronous string, write bool) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous("+synchronous+")")
	q.Add("_pragma", "foreign_keys(ON)")
	q.Add("_pragma", "temp_store(MEMORY)")
	q.Add("_pragma", "cache_size(-65536)")
	if write {
		// Take the write lock at BEGIN, so a transaction never fails with
		// SQLITE_BUSY half-way through.
		q.Add("_txlock", "immediate")
	} else {
		q.Add("_pragma", "query_only(ON)")
	}
	return "file:" + path + "?" + q.Encode()
}

func (db *DB) checkPragmas(ctx context.Context, pool *sql.DB) error {
	var fk int
	var mode string
	if err := pool.QueryRowContext(ctx, "PRAGMA foreign_keys").Scan(&fk); err != nil {
		return fmt.Errorf("sqlite: open %s: %w", db.path, err)
	}
	if err := pool.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return fmt.Errorf("sqlite: open %s: %w", db.path, err)
	}
	if fk != 1 || mode != "wal" {
		return fmt.Errorf("sqlite: open %s: pragmas did not apply (foreign_keys=%d journal_mode=%s)", db.path, fk, mode)
	}
	return nil
}

// Close closes both connection pools. It returns the first error met.
func (db *DB) Close() error {
	var errs []error
	if db.reader != nil {
		errs = append(errs, db.reader.Close())
	}
	errs = append(errs, db.writer.Close())
	return errors.Join(errs...)
}

// Tx is one database transaction with the time it started, so every
// timestamp written by one operation agrees.
type Tx struct {
	*sql.Tx
	now time.Time
}

// write runs fn in a write transaction and commits it if fn returns nil. Any
// error rolls the whole transaction back.
func (db *DB) write(ctx context.Context, fn func(tx *Tx) error) error {
	return db.run(ctx, db.writer, fn)
}

// read runs fn in a read-only transaction: one consistent snapshot.
func (db *DB) read(ctx context.Context, fn func(tx *Tx) error) error {
	return db.run(ctx, db.reader, fn)
}

func (db *DB) run(ctx context.Context, pool *sql.DB, fn func(tx *Tx) error) error {
	sqlTx, err := pool.BeginTx(ctx, nil)
	if err != nil {
		return internal("begin transaction", err)
	}
	tx := &Tx{Tx: sqlTx, now: db.now().UTC()}
	if err := fn(tx); err != nil {
		_ = sqlTx.Rollback()
		return err
	}
	if err := sqlTx.Commit(); err != nil {
		return internal("commit", err)
	}
	return nil
}

// isConstraint reports whether err is a SQLite UNIQUE or PRIMARY KEY
// constraint violation.
func isConstraint(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() {
	case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
		return true
	}
	return false
}

// msTime converts milliseconds since the Unix epoch to a UTC time.
func msTime(ms int64) time.Time { return time.UnixMilli(ms).UTC() }
