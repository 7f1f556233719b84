package sqlitedb

import (
	"context"
	"fmt"
	"sync"
)

// maxGroup bounds how many writes share one transaction.
const maxGroup = 64

// writeQueue is group commit. Every write transaction of SQLite ends with a
// sync of the log; when writes arrive while one is committing, the next
// transaction takes all of them, each inside its own savepoint, and commits
// them with one sync. A write whose function fails is rolled back to its
// savepoint alone; the others commit. The first writer to find no
// transaction in progress leads the group; the others wait for its result.
type writeQueue struct {
	mu      sync.Mutex
	pending []*writeRequest
	leading bool
}

type writeRequest struct {
	ctx  context.Context
	fn   func(tx *Tx) error
	done chan error
}

// Write runs fn in a write transaction and commits it if fn returns nil;
// an error undoes everything fn did. Writes that arrive while another is
// committing are grouped (see writeQueue). Once started, fn's statements
// ignore the cancellation of ctx: interrupting one would roll back the
// whole transaction, and with it the other writes of its group. It returns
// fn's error as it is (ctx's error when ctx ended before fn started), or
// the failure of the transaction, which then committed nothing.
func (db *DB) Write(ctx context.Context, fn func(tx *Tx) error) error {
	q := &db.writes
	req := &writeRequest{ctx: ctx, fn: fn, done: make(chan error, 1)}
	q.mu.Lock()
	q.pending = append(q.pending, req)
	lead := !q.leading
	q.leading = true
	q.mu.Unlock()
	if lead {
		db.lead()
	}
	return <-req.done
}

// lead commits groups until no write is waiting.
func (db *DB) lead() {
	q := &db.writes
	for {
		q.mu.Lock()
		n := min(len(q.pending), maxGroup)
		if n == 0 {
			q.leading = false
			q.mu.Unlock()
			return
		}
		group := q.pending[:n:n]
		q.pending = q.pending[n:]
		q.mu.Unlock()
		db.commitGroup(group)
	}
}

// commitGroup runs each request's function in a savepoint of one
// transaction and reports to each. Requests run without cancellation once
// started (the transaction's statements ignore their context's
// cancellation): interrupting a statement would roll back the whole
// transaction, and with it the other requests' work.
func (db *DB) commitGroup(group []*writeRequest) {
	results := make([]error, len(group))
	err := db.run(context.Background(), &db.writeStmts, true, func(tx *Tx) error {
		for i, req := range group {
			if err := req.ctx.Err(); err != nil {
				results[i] = err
				continue
			}
			if _, err := tx.tx.ExecContext(context.Background(), `SAVEPOINT write_request`); err != nil {
				return fmt.Errorf("sqlite: savepoint: %w", err)
			}
			hooks := len(tx.onCommit)
			results[i] = runProtected(tx, req.fn)
			undo := `RELEASE write_request`
			if results[i] != nil {
				undo = `ROLLBACK TO write_request; RELEASE write_request`
				tx.onCommit = tx.onCommit[:hooks]
			}
			if _, err := tx.tx.ExecContext(context.Background(), undo); err != nil {
				if results[i] != nil {
					// SQLite rolls the whole transaction back after some
					// failures (a full disk, an I/O error): the request's
					// error says why, for every request of the group.
					return fmt.Errorf("sqlite: end savepoint after %w: %v", results[i], err)
				}
				return fmt.Errorf("sqlite: end savepoint: %w", err)
			}
		}
		return nil
	})
	if err == nil {
		db.checkpoints.committed()
	}
	for i, req := range group {
		if err != nil {
			// Nothing was committed.
			results[i] = err
		}
		req.done <- results[i]
	}
}

// runProtected runs fn, turning a panic into an error so that one faulty
// request cannot leave the others waiting forever.
func runProtected(tx *Tx, fn func(tx *Tx) error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("sqlite: write panicked: %v", r)
		}
	}()
	return fn(tx)
}
