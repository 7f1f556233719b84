// Package postgres implements the lancens catalog on PostgreSQL (15 or
// newer, through jackc/pgx): namespaces, tables, version records, batch
// commits, tags, branches, transaction records and the job queue. Any
// number of lancens processes may share one database: every answer comes
// from the database (nothing is cached in the process), writes run as
// SERIALIZABLE transactions retried a bounded number of times when
// PostgreSQL reports a conflict, and jobs are claimed under leases.
//
// Tables whose rows lancens keeps itself (managed tables) need the
// embedded SQLite store; this store keeps external tables only.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/store/sqlcatalog"
)

// Options tune the store.
type Options struct {
	// MaxConns is the size of the connection pool (default: the URL's
	// pool_max_conns, else pgx's default, the larger of 4 and the number of
	// CPUs). Commits to tables on local disk also hold, while they move
	// the manifest file, a connection of a second pool of this size.
	MaxConns int
	// Now is the clock of recorded times; tests set it. Default time.Now.
	// Leases use the database's clock, which every replica shares.
	Now func() time.Time
	// JobLease is how long a claimed job stays claimed without its
	// replica renewing the lease (it does, every third of it, while the
	// job runs): a replica that dies mid-job leaves the job to be claimed
	// again once the lease has run out. Default 30 s.
	JobLease time.Duration
	// Attempts bounds how many times a write runs when PostgreSQL reports
	// a conflict with a concurrent one (default 10); after the last, the
	// write fails with ConcurrentModification (14).
	Attempts int
	// OnJobQueued, when set, is called after every commit of this store
	// that leaves a job queued (see store.Jobs), and whenever another
	// process on the same database commits one: a job runner waiting for
	// work passes its wake-up here. The store then keeps one more
	// connection, which listens for the other processes' notifications
	// (LISTEN/NOTIFY) from when Open returns, and is made again, followed
	// by a call, when it is lost. It must not block; it is called from
	// several goroutines.
	OnJobQueued func()
}

// DB is an open catalog on a PostgreSQL database.
type DB struct {
	// catalog implements the catalog interfaces of store.
	*catalog
	pool *pgxpool.Pool
	// locks holds the sessions of advisory locks (see LockLocations).
	locks    *pgxpool.Pool
	now      func() time.Time
	attempts int
	// owner names this process in the leases of the jobs it claims.
	owner string
	jobs  *leases
	// onJobQueued is Options.OnJobQueued (nil: none), which wakeups also
	// calls.
	onJobQueued func()
	wakeups     *wakeups
}

// Open connects to the database at url (a postgres:// or postgresql://
// connection string), checks that the server is PostgreSQL 15 or newer
// with UTF-8 encoding, and applies pending migrations under an advisory
// lock, so that replicas starting together migrate once. It returns a
// ServiceUnavailable (17) error when the server cannot be reached, and an
// error saying what is wrong otherwise.
func Open(ctx context.Context, url string, opts Options) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("postgres: bad connection string: %w", err)
	}
	if opts.MaxConns > 0 {
		cfg.MaxConns = int32(opts.MaxConns)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.JobLease <= 0 {
		opts.JobLease = 30 * time.Second
	}
	if opts.Attempts <= 0 {
		opts.Attempts = 10
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	locks, err := pgxpool.NewWithConfig(ctx, cfg.Copy())
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: %w", err)
	}
	db := &DB{pool: pool, locks: locks, now: opts.Now, attempts: opts.Attempts, owner: newOwner(), onJobQueued: opts.OnJobQueued}
	db.catalog = sqlcatalog.New(transactions{db}, sqlcatalog.NewOps(dialect{}, nil))
	if err := db.checkServer(ctx); err != nil {
		db.closePools()
		return nil, err
	}
	if err := db.migrate(ctx); err != nil {
		db.closePools()
		return nil, err
	}
	if opts.OnJobQueued != nil {
		if db.wakeups, err = listenForJobs(ctx, cfg.ConnConfig, db.owner, opts.OnJobQueued); err != nil {
			db.closePools()
			return nil, classify(err)
		}
	}
	db.jobs = startLeases(db, opts.JobLease)
	return db, nil
}

// newOwner returns a name for this process that no other shares: host,
// pid and a random part.
func newOwner() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s:%d:%s", host, os.Getpid(), sqlcatalog.NewUUID()[:8])
}

// checkServer checks the server's version and encoding.
func (db *DB) checkServer(ctx context.Context) error {
	var version int
	var encoding string
	err := db.pool.QueryRow(ctx, `SELECT current_setting('server_version_num')::int, current_setting('server_encoding')`).Scan(&version, &encoding)
	if err != nil {
		return classify(err)
	}
	if version < 150000 {
		return fmt.Errorf("postgres: lancens needs PostgreSQL 15 or newer; the server is version %d.%d", version/10000, version%10000)
	}
	if encoding != "UTF8" {
		return fmt.Errorf("postgres: the database's encoding is %s; lancens needs UTF8 (CREATE DATABASE … ENCODING 'UTF8')", encoding)
	}
	return nil
}

// Close stops renewing job leases and listening for queued jobs, and
// closes the connection pools. Jobs still claimed are left to their
// leases.
func (db *DB) Close() error {
	db.jobs.stop()
	if db.wakeups != nil {
		db.wakeups.stop()
	}
	db.closePools()
	return nil
}

func (db *DB) closePools() {
	db.pool.Close()
	db.locks.Close()
}

// tx is one database transaction with the time it started, so every
// timestamp written by one operation agrees.
type tx struct {
	pgx.Tx
	now time.Time
	// owner is the DB's owner name.
	owner string
	// jobQueued says the transaction leaves a job queued (see
	// tx.queueJob): once it commits, the store calls Options.OnJobQueued.
	jobQueued bool
}

// write runs fn in a SERIALIZABLE transaction and commits it if fn returns
// nil; an error undoes everything fn did. It is for changes to the shape of
// the catalog (namespaces, table entries, batches), whose rules span many
// rows. When PostgreSQL reports a conflict with a concurrent transaction (a
// serialization failure, a deadlock, a unique or foreign key violation), fn
// runs again on the new state, up to the configured number of attempts: its
// checks then give the precise answer (the row that won the race exists
// now). fn must therefore set its results on every run.
func (db *DB) write(ctx context.Context, fn func(tx *tx) error) error {
	return db.retry(ctx, pgx.Serializable, fn)
}

// writeTable runs fn, a change to one table's versions, tags or branches,
// like write but at READ COMMITTED: fn takes the table's row lock
// (lockTable) before it reads what it checks, so that writers of one table
// run one after the other and each statement sees the last committed
// state, while writers of different tables never conflict (SERIALIZABLE's
// predicate locks cover index pages that tables share, and made concurrent
// commits to different tables abort each other).
func (db *DB) writeTable(ctx context.Context, fn func(tx *tx) error) error {
	return db.retry(ctx, pgx.ReadCommitted, fn)
}

func (db *DB) retry(ctx context.Context, level pgx.TxIsoLevel, fn func(tx *tx) error) error {
	var err error
	for attempt := 1; ; attempt++ {
		err = db.run(ctx, pgx.TxOptions{IsoLevel: level}, fn)
		if !retryable(err) || attempt >= db.attempts || ctx.Err() != nil {
			break
		}
		// Back off a little, at random, so that racing writers spread out.
		backoff := time.Duration(min(1<<attempt, 64)) * time.Millisecond
		select {
		case <-time.After(rand.N(backoff) + backoff/2):
		case <-ctx.Done():
		}
	}
	return classify(err)
}

// read runs fn in a read-only REPEATABLE READ transaction: one consistent
// snapshot of the catalog.
func (db *DB) read(ctx context.Context, fn func(tx *tx) error) error {
	return classify(db.run(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, fn))
}

func (db *DB) run(ctx context.Context, opts pgx.TxOptions, fn func(tx *tx) error) error {
	pgTx, err := db.pool.BeginTx(ctx, opts)
	if err != nil {
		return err
	}
	t := &tx{Tx: pgTx, now: db.now().UTC(), owner: db.owner}
	if err := fn(t); err != nil {
		_ = pgTx.Rollback(context.WithoutCancel(ctx))
		return err
	}
	if err := pgTx.Commit(ctx); err != nil {
		return err
	}
	if t.jobQueued {
		db.jobsQueued()
	}
	return nil
}

// SQLSTATE codes the store handles.
const (
	serializationFailure = "40001"
	deadlockDetected     = "40P01"
	uniqueViolation      = "23505"
	foreignKeyViolation  = "23503"
)

// retryable reports whether err is a conflict with a concurrent
// transaction, which running the transaction again resolves.
func retryable(err error) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return false
	}
	switch pe.Code {
	case serializationFailure, deadlockDetected, uniqueViolation, foreignKeyViolation:
		return true
	}
	return false
}

// alreadyExists maps the unique constraints of the schema to the error
// their violation means, should one still be violated after the last
// attempt.
var alreadyExists = map[string]store.Code{
	"namespaces_parent_name": store.CodeNamespaceAlreadyExists,
	"tables_namespace_name":  store.CodeTableAlreadyExists,
	"tables_location_key":    store.CodeInvalidInput,
	"table_tags_pkey":        store.CodeTableTagAlreadyExists,
	"table_branches_pkey":    store.CodeTableBranchAlreadyExists,
}

// classify gives a database failure its Lance code: errors that carry one
// are returned as they are; a conflict that outlasted every attempt is
// ConcurrentModification (14), or the AlreadyExists error of the unique
// constraint it violates; an unreachable, overloaded or read-only server
// is ServiceUnavailable (17) with a message saying so; a cancelled
// request reports its context's error. Anything else is internal.
func classify(err error) error {
	var se *store.Error
	if err == nil || errors.As(err, &se) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case pe.Code == uniqueViolation && alreadyExists[pe.ConstraintName] != 0:
			return &store.Error{Code: alreadyExists[pe.ConstraintName], Message: "the object already exists (" + pe.ConstraintName + ")", Cause: err}
		case retryable(err):
			return &store.Error{Code: store.CodeConcurrentModification, Cause: err,
				Message: "the catalog kept changing under this operation (concurrent writes); retry it"}
		case pe.Code == "25006" || pe.Code == "53100" || pe.Code == "53300" || pe.Code[:2] == "57" || pe.Code[:2] == "08":
			// read-only transaction, disk full, too many connections,
			// operator intervention (shutdown), connection exception.
			return &store.Error{Code: store.CodeServiceUnavailable, Cause: err,
				Message: "the catalog database cannot serve the request now (" + pe.Code + "): " + pe.Message}
		}
		return err
	}
	if pgconn.SafeToRetry(err) || pgconn.Timeout(err) || isConnectError(err) {
		return &store.Error{Code: store.CodeServiceUnavailable, Cause: err, Message: "the catalog database is unreachable; retry later"}
	}
	return err
}

// isConnectError reports whether err is a failure to reach the server or a
// connection lost mid-way.
func isConnectError(err error) bool {
	var ce *pgconn.ConnectError
	var ne net.Error
	return errors.As(err, &ce) || errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// internal wraps an unexpected error of operation op; it returns nil for
// nil.
func internal(op string, err error) error {
	var se *store.Error
	if err == nil || errors.As(err, &se) {
		return err
	}
	return fmt.Errorf("postgres: %s: %w", op, err)
}
