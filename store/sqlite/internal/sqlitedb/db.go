// Package sqlitedb is the SQLite plumbing of the store, with no knowledge
// of what the database holds: one writer connection whose writes are
// grouped into shared commits (group commit), a pool of readers, the
// pragmas every connection gets, a cache of prepared statements for fixed
// queries, a background checkpointer and a migration runner.
//
// A Tx separates the two kinds of SQL a store runs: fixed statements
// (ExecCached, QueryCached, QueryRowCached) are prepared once per
// connection and reused, and take a Const, which only a string constant
// converts to implicitly; SQL built at run time (Exec, Query, QueryRow,
// Prepare) is never cached.
package sqlitedb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"runtime"
	"strings"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" driver
)

// Options tune how the database is opened.
type Options struct {
	// Synchronous is the SQLite synchronous pragma: FULL (the default),
	// NORMAL or EXTRA. Relaxed writes (WriteRelaxed) commit with NORMAL
	// whatever it is.
	Synchronous string
	// Readers is the size of the read connection pool (default: 2×CPUs, at
	// least 4).
	Readers int
	// Now is the clock of Tx.Now. Default time.Now.
	Now func() time.Time
	// Migrations holds the schema: every migrations/*.sql file, applied in
	// name order (see Migrate).
	Migrations fs.FS
	// Recover, when set, runs after the migrations, with the writer alone
	// open (before the read pool and the checkpointer): repairs that must
	// come before any read.
	Recover func(ctx context.Context, db *DB) error
}

// DB is an open SQLite database. Writes go through one connection, so they
// queue in Go instead of contending for SQLite's write lock; reads use a pool
// and see the last committed state (WAL).
type DB struct {
	path   string
	writer *sql.DB
	reader *sql.DB
	now    func() time.Time
	// synchronous is Options.Synchronous; writerSync the mode the writer
	// connection was last given, which only the leader of the group
	// commit reads and sets (see syncGroup).
	synchronous, writerSync string
	// Prepared statements of the fixed queries, per pool: SQLite parses a
	// statement again each time it is not reused.
	writeStmts, readStmts stmtCache
	writes                writeQueue
	// checkpoints moves WAL frames into the database file after commits.
	checkpoints *checkpointer
}

// Open opens (creating if needed) the database at path: the writer, with
// its pragmas checked, the migrations, a check that the database can be
// written, opts.Recover, then the read pool and the checkpointer. It
// returns the first error met, unwrapped enough for the caller to classify
// SQLite's error codes (a read-only file, one that cannot be opened), and
// opts.Recover's error as it is.
func Open(ctx context.Context, path string, opts Options) (*DB, error) {
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
	writer, err := sql.Open("sqlite", dsn(path, opts.Synchronous, roleWriter))
	if err != nil {
		return nil, fmt.Errorf("sqlite: open writer: %w", err)
	}
	writer.SetMaxOpenConns(1)
	writer.SetMaxIdleConns(1)
	writer.SetConnMaxIdleTime(0)
	writer.SetConnMaxLifetime(0)
	db := &DB{path: path, writer: writer, now: opts.Now, synchronous: opts.Synchronous, writerSync: opts.Synchronous}
	db.writeStmts.pool = writer
	if err := db.checkPragmas(ctx, writer); err != nil {
		writer.Close()
		return nil, err
	}
	if opts.Migrations != nil {
		if err := db.Migrate(ctx, opts.Migrations); err != nil {
			writer.Close()
			return nil, err
		}
	}
	if err := db.convertVacuum(ctx); err != nil {
		writer.Close()
		return nil, err
	}
	if err := checkWritable(ctx, writer); err != nil {
		writer.Close()
		return nil, err
	}
	if opts.Recover != nil {
		if err := opts.Recover(ctx, db); err != nil {
			writer.Close()
			return nil, err
		}
	}
	reader, err := sql.Open("sqlite", dsn(path, opts.Synchronous, roleReader))
	if err != nil {
		writer.Close()
		return nil, fmt.Errorf("sqlite: open readers: %w", err)
	}
	reader.SetMaxOpenConns(opts.Readers)
	reader.SetMaxIdleConns(opts.Readers)
	db.reader = reader
	db.readStmts.pool = reader
	if err := db.checkPragmas(ctx, reader); err != nil {
		db.Close()
		return nil, err
	}
	if err := db.startCheckpointer(ctx, opts.Synchronous); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// Path returns the file the database was opened from.
func (db *DB) Path() string { return db.path }

// connRole says what a connection pool is for.
type connRole int

const (
	roleWriter connRole = iota
	roleReader
	roleCheckpoint
)

// dsn builds the connection string. Every pragma is in the DSN so that each
// connection the pool opens gets it; busy_timeout comes first so the
// connection waits rather than fails while another sets WAL mode.
func dsn(path, synchronous string, role connRole) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	if role == roleWriter {
		// Takes effect in a new database only, before WAL mode writes its
		// first page; see convertVacuum for older ones.
		q.Add("_pragma", "auto_vacuum(INCREMENTAL)")
	}
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous("+synchronous+")")
	q.Add("_pragma", "foreign_keys(ON)")
	q.Add("_pragma", "temp_store(MEMORY)")
	switch role {
	case roleWriter:
		q.Add("_pragma", "cache_size(-65536)")
		q.Add("_pragma", fmt.Sprintf("wal_autocheckpoint(%d)", walSafetyPages))
		q.Add("_pragma", fmt.Sprintf("journal_size_limit(%d)", walKeepBytes))
		// Take the write lock at BEGIN, so a transaction never fails with
		// SQLITE_BUSY half-way through.
		q.Add("_txlock", "immediate")
	case roleReader:
		q.Add("_pragma", "cache_size(-65536)")
		q.Add("_pragma", "query_only(ON)")
	}
	return FileURI(path, q)
}

// FileURI returns the SQLite URI of the database file at path with query
// parameters q. The characters a URI gives a meaning to (%, ? and #) are
// escaped in path, so that any file name opens that very file.
func FileURI(path string, q url.Values) string {
	return "file:" + uriPathEscaper.Replace(path) + "?" + q.Encode()
}

var uriPathEscaper = strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23")

// checkWritable makes a change to the database and undoes it, so that a
// database that cannot be written fails when it opens rather than at the
// first write (SQLite opens a file it may not write read-only, and a
// transaction may even begin). It returns the error of the change.
func checkWritable(ctx context.Context, pool *sql.DB) error {
	tx, err := pool.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	_, err = tx.ExecContext(ctx, `CREATE TABLE lancens_write_check (x)`)
	return err
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

// Close stops the checkpointer and closes the connection pools. It returns
// the errors met.
func (db *DB) Close() error {
	db.writeStmts.close()
	db.readStmts.close()
	var errs []error
	if db.checkpoints != nil {
		errs = append(errs, db.checkpoints.close())
	}
	if db.reader != nil {
		errs = append(errs, db.reader.Close())
	}
	errs = append(errs, db.writer.Close())
	return errors.Join(errs...)
}

// ExecOnWriter runs statement on the writer connection outside any
// transaction (a pragma that must not be inside one), waiting for the
// write in progress.
func (db *DB) ExecOnWriter(ctx context.Context, statement string) error {
	_, err := db.writer.ExecContext(ctx, statement)
	return err
}

// Read runs fn in a read-only transaction: one consistent snapshot. It
// returns fn's error as it is, or the failure to begin or end the
// transaction.
func (db *DB) Read(ctx context.Context, fn func(tx *Tx) error) error {
	return db.run(ctx, &db.readStmts, false, fn)
}

// run runs fn in a transaction on stmts's pool and commits it if fn returns
// nil, then runs the transaction's commit hooks (Tx.OnCommit); an error of
// fn rolls everything back. uninterruptible makes the transaction's
// statements ignore the cancellation of their context.
func (db *DB) run(ctx context.Context, stmts *stmtCache, uninterruptible bool, fn func(tx *Tx) error) error {
	sqlTx, err := stmts.pool.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: begin transaction: %w", err)
	}
	tx := &Tx{tx: sqlTx, now: db.now().UTC(), stmts: stmts, uninterruptible: uninterruptible}
	defer func() {
		if len(tx.missed) > 0 {
			stmts.prepare(context.WithoutCancel(ctx), tx.missed)
		}
	}()
	if err := fn(tx); err != nil {
		_ = sqlTx.Rollback()
		return err
	}
	if err := sqlTx.Commit(); err != nil {
		return fmt.Errorf("sqlite: commit: %w", err)
	}
	for _, f := range tx.onCommit {
		f()
	}
	return nil
}
