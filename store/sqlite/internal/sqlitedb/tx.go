package sqlitedb

import (
	"context"
	"database/sql"
	"sync"
	"time"
)

// Const is the text of a fixed statement, the only kind the statement
// cache takes (Tx.ExecCached, QueryCached, QueryRowCached). A string
// constant converts to it implicitly; a string built at run time does not,
// so SQL that names a table of its own cannot fill the cache by accident.
type Const string

// Tx is one database transaction with the time it started, so that every
// timestamp an operation writes agrees.
type Tx struct {
	tx     *sql.Tx
	now    time.Time
	stmts  *stmtCache
	missed []string // queries to prepare once the transaction is over
	// uninterruptible makes statements ignore the cancellation of the
	// context they are given.
	uninterruptible bool
	// onCommit runs, in order, once the transaction has committed.
	onCommit []func()
}

// Now returns the time the transaction started, in UTC.
func (tx *Tx) Now() time.Time { return tx.now }

// OnCommit makes f run once the transaction has committed. In a group
// commit, a write whose function fails is rolled back alone, and the
// functions it registered go with it.
func (tx *Tx) OnCommit(f func()) { tx.onCommit = append(tx.onCommit, f) }

// context returns the context a statement runs under.
func (tx *Tx) context(ctx context.Context) context.Context {
	if tx.uninterruptible {
		return context.WithoutCancel(ctx)
	}
	return ctx
}

func (tx *Tx) stmt(ctx context.Context, query Const) *sql.Stmt {
	if st := tx.stmts.lookup(string(query)); st != nil {
		return tx.tx.StmtContext(ctx, st)
	}
	tx.missed = append(tx.missed, string(query))
	return nil
}

// ExecCached runs a fixed statement, prepared when it was seen before.
func (tx *Tx) ExecCached(ctx context.Context, query Const, args ...any) (sql.Result, error) {
	ctx = tx.context(ctx)
	if st := tx.stmt(ctx, query); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return tx.tx.ExecContext(ctx, string(query), args...)
}

// QueryCached runs a fixed query, prepared when it was seen before.
func (tx *Tx) QueryCached(ctx context.Context, query Const, args ...any) (*sql.Rows, error) {
	ctx = tx.context(ctx)
	if st := tx.stmt(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return tx.tx.QueryContext(ctx, string(query), args...)
}

// QueryRowCached runs a fixed one-row query, prepared when it was seen
// before.
func (tx *Tx) QueryRowCached(ctx context.Context, query Const, args ...any) *sql.Row {
	ctx = tx.context(ctx)
	if st := tx.stmt(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return tx.tx.QueryRowContext(ctx, string(query), args...)
}

// Exec runs SQL built at run time (or a script of several statements),
// unprepared.
func (tx *Tx) Exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return tx.tx.ExecContext(tx.context(ctx), query, args...)
}

// Query runs a query built at run time, unprepared.
func (tx *Tx) Query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return tx.tx.QueryContext(tx.context(ctx), query, args...)
}

// QueryRow runs a one-row query built at run time, unprepared.
func (tx *Tx) QueryRow(ctx context.Context, query string, args ...any) *sql.Row {
	return tx.tx.QueryRowContext(tx.context(ctx), query, args...)
}

// Prepare prepares a statement built at run time for the rest of the
// transaction, to run many times; the caller closes it.
func (tx *Tx) Prepare(ctx context.Context, query string) (*Stmt, error) {
	st, err := tx.tx.PrepareContext(tx.context(ctx), query)
	if err != nil {
		return nil, err
	}
	return &Stmt{st: st, tx: tx}, nil
}

// Stmt is a statement prepared in a transaction.
type Stmt struct {
	st *sql.Stmt
	tx *Tx
}

// Exec runs the statement with args.
func (s *Stmt) Exec(ctx context.Context, args ...any) (sql.Result, error) {
	return s.st.ExecContext(s.tx.context(ctx), args...)
}

// Close releases the statement.
func (s *Stmt) Close() error { return s.st.Close() }

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
