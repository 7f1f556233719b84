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
	"sync"
	"time"

	"github.com/lancens/lancens/expr"
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
	// CacheBytes bounds the memory of everything kept for reads: the
	// visible rows of table versions, the columns filters are evaluated
	// on, the vectors of searched columns, loaded vector indexes and
	// full-text posting lists (default: DefaultCacheBytes).
	CacheBytes int64
	// WriteChunkRows and WriteChunkBytes bound how many rows, and about
	// how many bytes of values, one write transaction adds (defaults
	// 32768 rows, 8 MiB). A write of more is staged over several
	// transactions, so that other writes commit in between; it still
	// commits whole or not at all (see staging.go).
	WriteChunkRows  int
	WriteChunkBytes int64
	// OnJobQueued, when set, is called after every commit that leaves a
	// job queued (see store.Jobs): a job runner waiting for work passes
	// its wake-up here. It must not block.
	OnJobQueued func()
}

// DB is an open lancens database. Writes go through one connection, so they
// queue in Go instead of contending for SQLite's write lock; reads use a pool
// and see the last committed state (WAL).
type DB struct {
	path string
	// lock keeps any other DB, in this process or another, from opening
	// the same file while this one is open.
	lock   *dbLock
	writer *sql.DB
	reader *sql.DB
	now    func() time.Time
	// Prepared statements of the catalog's fixed queries, per pool: SQLite
	// parses a statement again each time it is not reused.
	writeStmts, readStmts stmtCache
	writes                writeQueue
	// cache keeps the visible rows, filter columns and vectors of table
	// versions, loaded vector indexes and posting lists, in one budget.
	cache *memCache
	// checkpoints moves WAL frames into the database file after commits.
	checkpoints *checkpointer
	// onJobQueued is Options.OnJobQueued (nil: none).
	onJobQueued func()
}

// stmtCache holds statements prepared on one connection pool, by query text.
// A statement is prepared on the pool after the first transaction that runs
// its query has ended (preparing needs a free connection, and the writer has
// only one); database/sql then prepares it on each connection the first time
// a transaction there uses it, and keeps it.
type stmtCache struct {
	pool  *sql.DB
	mu    sync.Mutex
	stmts map[string]*sql.Stmt
}

func (c *stmtCache) lookup(query string) *sql.Stmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stmts[query]
}

// prepare adds the queries to the cache. A query that fails to prepare is
// left out; running it unprepared reports the error.
func (c *stmtCache) prepare(ctx context.Context, queries []string) {
	for _, q := range queries {
		if c.lookup(q) != nil {
			continue
		}
		st, err := c.pool.PrepareContext(ctx, q)
		if err != nil {
			continue
		}
		c.mu.Lock()
		if c.stmts == nil {
			c.stmts = map[string]*sql.Stmt{}
		}
		if c.stmts[q] == nil {
			c.stmts[q] = st
		} else {
			st.Close()
		}
		c.mu.Unlock()
	}
}

func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, st := range c.stmts {
		st.Close()
	}
	c.stmts = nil
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
	if opts.CacheBytes <= 0 {
		opts.CacheBytes = DefaultCacheBytes()
	}
	if opts.WriteChunkRows <= 0 {
		opts.WriteChunkRows = 32768
	}
	if opts.WriteChunkBytes <= 0 {
		opts.WriteChunkBytes = 8 << 20
	}
	// The expression compiler's SQL functions must be registered before the
	// first connection opens.
	if err := expr.Register(); err != nil {
		return nil, fmt.Errorf("sqlite: register functions: %w", err)
	}
	if err := registerAnalyzer(); err != nil {
		return nil, fmt.Errorf("sqlite: register functions: %w", err)
	}
	lock, err := lockDatabase(path)
	if err != nil {
		return nil, err
	}
	db, err := open(ctx, path, opts)
	if err != nil {
		lock.release()
		return nil, err
	}
	db.lock = lock
	return db, nil
}

// open opens the database at path, whose lock the caller holds, and
// migrates it.
func open(ctx context.Context, path string, opts Options) (*DB, error) {
	writer, err := sql.Open("sqlite", dsn(path, opts.Synchronous, roleWriter))
	if err != nil {
		return nil, fmt.Errorf("sqlite: open writer: %w", err)
	}
	writer.SetMaxOpenConns(1)
	writer.SetMaxIdleConns(1)
	writer.SetConnMaxIdleTime(0)
	writer.SetConnMaxLifetime(0)
	db := &DB{path: path, writer: writer, now: opts.Now, cache: newMemCache(opts.CacheBytes), onJobQueued: opts.OnJobQueued}
	db.writes.chunk = chunkLimits{rows: opts.WriteChunkRows, bytes: opts.WriteChunkBytes}
	db.writeStmts.pool = writer
	if err := db.checkPragmas(ctx, writer); err != nil {
		writer.Close()
		return nil, openError(path, err)
	}
	if err := db.migrate(ctx); err != nil {
		writer.Close()
		return nil, openError(path, err)
	}
	if err := checkWritable(ctx, writer); err != nil {
		writer.Close()
		return nil, openError(path, err)
	}
	if err := db.keyLocations(ctx); err != nil {
		writer.Close()
		return nil, err
	}
	if err := db.sweepStaged(ctx); err != nil {
		writer.Close()
		return nil, err
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
		return nil, openError(path, err)
	}
	if err := db.startCheckpointer(ctx, opts.Synchronous); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

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
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous("+synchronous+")")
	q.Add("_pragma", "foreign_keys(ON)")
	q.Add("_pragma", "temp_store(MEMORY)")
	switch role {
	case roleWriter:
		q.Add("_pragma", "cache_size(-65536)")
		q.Add("_pragma", fmt.Sprintf("wal_autocheckpoint(%d)", walSafetyPages))
		q.Add("_pragma", fmt.Sprintf("journal_size_limit(%d)", walSafetyPages*pageSize))
		// Take the write lock at BEGIN, so a transaction never fails with
		// SQLITE_BUSY half-way through.
		q.Add("_txlock", "immediate")
	case roleReader:
		q.Add("_pragma", "cache_size(-65536)")
		q.Add("_pragma", "query_only(ON)")
	}
	return "file:" + path + "?" + q.Encode()
}

// checkWritable makes a change to the database and undoes it, so that a
// database lancens cannot write fails when it opens rather than at the
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

// Close stops the checkpointer, closes the connection pools and releases
// the database's lock. It returns the errors met.
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
	if db.lock != nil {
		errs = append(errs, db.lock.release())
	}
	return errors.Join(errs...)
}

// Tx is one database transaction with the time it started, so every
// timestamp written by one operation agrees. Its ExecContext, QueryContext
// and QueryRowContext reuse prepared statements, so they are for the fixed
// query texts of the catalog; SQL built at run time goes through the
// embedded *sql.Tx.
type Tx struct {
	*sql.Tx
	now    time.Time
	stmts  *stmtCache
	missed []string // queries to prepare once the transaction is over
	// uninterruptible makes statements ignore the cancellation of the
	// context they are given.
	uninterruptible bool
	// released lists the tables (by uuid) whose cached data the
	// transaction makes useless (dropped, overwritten): the memory cache
	// lets it go once the transaction commits.
	released []string
	// writes is the write queue in a write transaction (nil in a read):
	// finding a table a staged write holds there is tableBusy.
	writes *writeQueue
	// jobQueued says the transaction leaves a job queued: once it commits,
	// the store calls Options.OnJobQueued.
	jobQueued bool
}

// release marks the cached data of table uuid for release at commit.
func (tx *Tx) release(uuid string) { tx.released = append(tx.released, uuid) }

// context returns the context a statement runs under.
func (tx *Tx) context(ctx context.Context) context.Context {
	if tx.uninterruptible {
		return context.WithoutCancel(ctx)
	}
	return ctx
}

func (tx *Tx) stmt(ctx context.Context, query string) *sql.Stmt {
	if st := tx.stmts.lookup(query); st != nil {
		return tx.StmtContext(ctx, st)
	}
	tx.missed = append(tx.missed, query)
	return nil
}

// ExecContext runs a fixed statement, prepared when it was seen before.
func (tx *Tx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	ctx = tx.context(ctx)
	if st := tx.stmt(ctx, query); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return tx.Tx.ExecContext(ctx, query, args...)
}

// QueryContext runs a fixed query, prepared when it was seen before.
func (tx *Tx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	ctx = tx.context(ctx)
	if st := tx.stmt(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return tx.Tx.QueryContext(ctx, query, args...)
}

// QueryRowContext runs a fixed one-row query, prepared when it was seen
// before.
func (tx *Tx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	ctx = tx.context(ctx)
	if st := tx.stmt(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return tx.Tx.QueryRowContext(ctx, query, args...)
}

// write runs fn in a write transaction and commits it if fn returns nil; an
// error undoes everything fn did. A full disk or a read-only database is
// ServiceUnavailable (17), see storageError. Writes that arrive while another is
// committing are grouped (see writeQueue).
func (db *DB) write(ctx context.Context, fn func(tx *Tx) error) error {
	return db.writes.do(ctx, db, fn)
}

// read runs fn in a read-only transaction: one consistent snapshot. Its
// errors are classified as write's are.
func (db *DB) read(ctx context.Context, fn func(tx *Tx) error) error {
	return db.run(ctx, &db.readStmts, fn)
}

func (db *DB) run(ctx context.Context, stmts *stmtCache, fn func(tx *Tx) error) error {
	sqlTx, err := stmts.pool.BeginTx(ctx, nil)
	if err != nil {
		return internal("begin transaction", err)
	}
	tx := &Tx{Tx: sqlTx, now: db.now().UTC(), stmts: stmts}
	defer func() {
		if len(tx.missed) > 0 {
			stmts.prepare(context.WithoutCancel(ctx), tx.missed)
		}
	}()
	if err := fn(tx); err != nil {
		_ = sqlTx.Rollback()
		return storeError(err)
	}
	if err := sqlTx.Commit(); err != nil {
		return internal("commit", err)
	}
	db.cache.forgetTables(tx.released)
	if tx.jobQueued && db.onJobQueued != nil {
		db.onJobQueued()
	}
	return nil
}

// CacheBytes returns the bytes of memory the read cache holds now (at most
// CacheBudget).
func (db *DB) CacheBytes() int64 { return db.cache.bytes() }

// CacheBudget returns the byte budget of the read cache.
func (db *DB) CacheBudget() int64 { return db.cache.budget }

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
