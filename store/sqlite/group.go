package sqlite

import (
	"context"
	"errors"
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
//
// A write that finds its table held by a staged write (see staging.go)
// waits, outside the writer, until the staged write ends, and then runs
// again.
type writeQueue struct {
	mu      sync.Mutex
	pending []*writeRequest
	leading bool
	// held are the tables staged writes hold.
	held tableLocks
	// chunk bounds the rows a staged write adds per transaction.
	chunk chunkLimits
	hooks stagingHooks
}

type writeRequest struct {
	ctx  context.Context
	fn   func(tx *Tx) error
	done chan error
}

func (q *writeQueue) do(ctx context.Context, db *DB, fn func(tx *Tx) error) error {
	for {
		err := q.submit(ctx, db, fn)
		var busy *tableBusy
		if !errors.As(err, &busy) {
			return err
		}
		if q.hooks.waiting != nil {
			q.hooks.waiting()
		}
		if err := busy.held.wait(ctx); err != nil {
			return err
		}
	}
}

// submit runs fn once in a group and returns its result.
func (q *writeQueue) submit(ctx context.Context, db *DB, fn func(tx *Tx) error) error {
	req := &writeRequest{ctx: ctx, fn: fn, done: make(chan error, 1)}
	q.mu.Lock()
	q.pending = append(q.pending, req)
	lead := !q.leading
	q.leading = true
	q.mu.Unlock()
	if lead {
		q.lead(db)
	}
	return <-req.done
}

// lead commits groups until no write is waiting.
func (q *writeQueue) lead(db *DB) {
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
	err := db.run(context.Background(), &db.writeStmts, func(tx *Tx) error {
		tx.uninterruptible = true
		tx.writes = &db.writes
		for i, req := range group {
			if err := req.ctx.Err(); err != nil {
				results[i] = err
				continue
			}
			if _, err := tx.Tx.ExecContext(context.Background(), `SAVEPOINT write_request`); err != nil {
				return internal("savepoint", err)
			}
			queued := tx.jobQueued
			results[i] = runProtected(tx, req.fn)
			if results[i] != nil {
				tx.jobQueued = queued // the request's jobs are undone
			}
			undo := `RELEASE write_request`
			if results[i] != nil {
				undo = `ROLLBACK TO write_request; RELEASE write_request`
			}
			if _, err := tx.Tx.ExecContext(context.Background(), undo); err != nil {
				if results[i] != nil {
					// SQLite rolls the whole transaction back after some
					// failures (a full disk, an I/O error): the request's
					// error says why, for every request of the group.
					return fmt.Errorf("sqlite: end savepoint after %w: %v", results[i], err)
				}
				return internal("end savepoint", err)
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
		req.done <- storeError(results[i])
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
