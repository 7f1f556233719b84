package postgres

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5"
)

// Job wake-ups across replicas: a transaction that leaves a job queued
// also sends a notification on jobChannel (PostgreSQL delivers it when,
// and only if, the transaction commits), whose payload is the owner name
// of the sending process. Every process with an OnJobQueued hook keeps one
// connection listening on the channel and calls the hook for each
// notification another process sent; its own commits call the hook
// directly.

// jobChannel is the channel of the notifications that say a job was
// queued.
const jobChannel = "lancens_jobs"

// notifyJobQueued is the statement that sends the notification; $1 is the
// sending process's owner name.
const notifyJobQueued = `SELECT pg_notify('` + jobChannel + `', $1)`

// queueJob notes that the transaction leaves a job queued: it sends the
// notification other processes listen for and, once the transaction
// commits, the store calls Options.OnJobQueued.
func (tx *tx) queueJob(ctx context.Context) error {
	if _, err := tx.Exec(ctx, notifyJobQueued, tx.owner); err != nil {
		return internal("notify queued job", err)
	}
	tx.jobQueued = true
	return nil
}

// announced turns update, an UPDATE that puts jobs back in the queue, into
// a statement that also sends the notification, once however many rows it
// changes and not at all when it changes none, and whose command tag
// counts the rows changed. owner is the parameter ($n) holding the
// process's owner name.
func announced(update, owner string) string {
	return `WITH requeued AS (` + update + ` RETURNING 1) SELECT pg_notify('` + jobChannel + `', ` + owner + `) FROM requeued`
}

// jobsQueued calls Options.OnJobQueued, if set, after a statement outside
// a transaction (see announced) queued jobs.
func (db *DB) jobsQueued() {
	if db.onJobQueued != nil {
		db.onJobQueued()
	}
}

// Tuning of the listening connection.
const (
	// listenCheck is how long the connection waits for a notification
	// before it checks that the server still answers: a connection cut
	// without a word (a network failure) is replaced within about this.
	listenCheck = 30 * time.Second
	// pingTimeout bounds that check.
	pingTimeout = 5 * time.Second
	// First and longest wait before connecting again after a failure; the
	// wait doubles with each failure in a row.
	minReconnect = 100 * time.Millisecond
	maxReconnect = 10 * time.Second
)

// wakeups is the listening connection of a process, run by a goroutine of
// its own.
type wakeups struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// listenForJobs starts listening, on a connection made with cfg, for the
// notifications of jobs queued by processes other than owner, and calls
// wake for each. It returns once the connection listens, or the error of
// connecting or listening. Afterwards, the connection is made again
// whenever it is lost, after a wait that grows with each failure in a row
// (see minReconnect, maxReconnect); since notifications sent meanwhile are
// lost, wake is called each time it listens again.
func listenForJobs(ctx context.Context, cfg *pgx.ConnConfig, owner string, wake func()) (*wakeups, error) {
	conn, err := startListening(ctx, cfg)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	w := &wakeups{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for {
			receive(ctx, conn, owner, wake)
			if conn = reconnect(ctx, cfg); conn == nil {
				return
			}
			wake()
		}
	}()
	return w, nil
}

// startListening connects and listens on jobChannel. It returns the
// connection, or the error of connecting or listening.
func startListening(ctx context.Context, cfg *pgx.ConnConfig) (*pgx.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, cfg.Copy())
	if err != nil {
		return nil, err
	}
	if _, err := conn.Exec(ctx, `LISTEN `+jobChannel); err != nil {
		conn.Close(context.WithoutCancel(ctx))
		return nil, err
	}
	return conn, nil
}

// reconnect calls startListening until it succeeds, waiting longer after
// each failure. It returns nil when ctx ends first.
func reconnect(ctx context.Context, cfg *pgx.ConnConfig) *pgx.Conn {
	for wait := minReconnect; ; wait = min(2*wait, maxReconnect) {
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait/2 + rand.N(wait)):
		}
		if conn, err := startListening(ctx, cfg); err == nil {
			return conn
		}
	}
}

// receive calls wake for every notification conn receives that owner did
// not send, until ctx ends or conn fails or stops answering; it closes
// conn.
func receive(ctx context.Context, conn *pgx.Conn, owner string, wake func()) {
	defer conn.Close(context.WithoutCancel(ctx))
	for {
		waitCtx, cancel := context.WithTimeout(ctx, listenCheck)
		n, err := conn.WaitForNotification(waitCtx)
		cancel()
		switch {
		case err == nil:
			if n.Payload != owner {
				wake()
			}
		case ctx.Err() != nil:
			return
		case errors.Is(err, context.DeadlineExceeded):
			pingCtx, cancel := context.WithTimeout(ctx, pingTimeout)
			err = conn.Ping(pingCtx)
			cancel()
			if err != nil {
				return
			}
		default:
			return
		}
	}
}

// stop stops listening and closes the connection.
func (w *wakeups) stop() {
	w.cancel()
	<-w.done
}
