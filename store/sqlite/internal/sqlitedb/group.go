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
	ctx context.Context
	fn  func(tx *Tx) error
	// relaxed says the write need survive only a crash of the process
	// (WriteRelaxed).
	relaxed bool
	done    chan error
}

// Write runs fn in a write transaction and commits it if fn returns nil;
// an error undoes everything fn did. Writes that arrive while another is
// committing are grouped (see writeQueue). Once started, fn's statements
// ignore the cancellation of ctx: interrupting one would roll back the
// whole transaction, and with it the other writes of its group. It returns
// fn's error as it is (ctx's error when ctx ended before fn started), or
// the failure of the transaction, which then committed nothing.
func (db *DB) Write(ctx context.Context, fn func(tx *Tx) error) error {
	return db.write(ctx, fn, false)
}

// WriteRelaxed is Write for a change that need survive only a crash of
// the process, not a power loss: a group whose writes are all relaxed
// commits with synchronous NORMAL, which writes the group's frames to the
// log without syncing it (see syncGroup). A group that holds one durable
// write commits durably, relaxed writes included.
func (db *DB) WriteRelaxed(ctx context.Context, fn func(tx *Tx) error) error {
	return db.write(ctx, fn, true)
}

func (db *DB) write(ctx context.Context, fn func(tx *Tx) error, relaxed bool) error {
	q := &db.writes
	req := &writeRequest{ctx: ctx, fn: fn, relaxed: relaxed, done: make(chan error, 1)}
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
	if err := db.syncGroup(group); err != nil {
		for _, req := range group {
			req.done <- err
		}
		return
	}
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

// syncGroup gives the writer connection the synchronous mode group
// commits with: NORMAL when every write of the group is relaxed, the
// database's own mode (Options.Synchronous) otherwise. It returns the
// error of setting it, before anything of the group ran.
//
// In WAL mode, NORMAL writes a commit's frames to the log and does not
// sync the log: the operating system holds them, so they survive a crash
// of the process (the next open reads the log), not necessarily a power
// loss. A later sync of the log — by a group that is not relaxed, or
// before a checkpoint — makes them durable too: the log is one file, and
// a sync writes all of it.
//
// The mode is a pragma of the connection that SQLite refuses inside a
// transaction, so it is set between groups, and only when it changes.
// Should database/sql replace the writer connection, the new one starts
// in the database's own mode, whatever writerSync says: the next relaxed
// group may then commit durably, never the reverse.
func (db *DB) syncGroup(group []*writeRequest) error {
	mode := "NORMAL"
	for _, req := range group {
		if !req.relaxed {
			mode = db.synchronous
			break
		}
	}
	if mode == db.writerSync {
		return nil
	}
	if _, err := db.writer.ExecContext(context.Background(), `PRAGMA synchronous = `+mode); err != nil {
		db.writerSync = "" // unknown: set it again for the next group
		return fmt.Errorf("sqlite: set synchronous %s: %w", mode, err)
	}
	db.writerSync = mode
	return nil
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
