package postgres

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lancens/lancens/store"
)

var _ store.Jobs = (*DB)(nil)

// Jobs are claimed under leases. ClaimJob takes the oldest job that is
// queued, or running under a lease that has run out (its replica died),
// with FOR UPDATE SKIP LOCKED, so replicas claiming together never take
// the same job; the claiming replica renews the lease while the job runs.
// FinishJob and ReleaseJob act only on a job this process still holds: a
// replica that lost its lease (it stalled past it, and another replica
// claimed the job) cannot overwrite the new holder's outcome.

// ClaimJob implements store.Jobs.
func (db *DB) ClaimJob(ctx context.Context, kinds ...string) (*store.Job, error) {
	var j store.Job
	err := db.pool.QueryRow(ctx, `
		UPDATE transactions SET status = 'Running', lease_owner = $1,
			lease_expires = now() + $2 * interval '1 millisecond', updated_at = $3
		WHERE id = (
			SELECT id FROM transactions
			WHERE kind = ANY($4) AND (status = 'Queued' OR (status = 'Running' AND lease_expires < now()))
			ORDER BY array_position($4, kind), created_at, id
			LIMIT 1 FOR UPDATE SKIP LOCKED)
		RETURNING id, kind, payload`,
		db.owner, db.jobs.lease.Milliseconds(), db.now().UnixMilli(), kinds).Scan(&j.TransactionID, &j.Kind, &j.Payload)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, classify(err)
	}
	db.jobs.hold(j.TransactionID)
	return &j, nil
}

// FinishJob implements store.Jobs.
func (db *DB) FinishJob(ctx context.Context, transactionID string, jobErr error) error {
	status, patch, message := store.TxSucceeded, map[string]string{}, ""
	if jobErr != nil {
		status, message = store.TxFailed, jobErr.Error()
		patch = map[string]string{"error": message}
	}
	// A failed index build marks its index FAILED in the same statement
	// (see store.Jobs), unless it was dropped, replaced or built meanwhile.
	return db.endJob(ctx, transactionID, false, `WITH failed AS (
			UPDATE dataset_indexes SET status = 'FAILED', error = $6
			WHERE $3 = 'Failed' AND status = 'BUILDING' AND uuid = (
				SELECT payload->>'index_uuid' FROM transactions
				WHERE id = $1 AND status = 'Running' AND lease_owner = $2 AND kind = '`+store.JobBuildIndex+`'))
		UPDATE transactions SET status = $3, properties = properties || $4, updated_at = $5,
		lease_owner = NULL, lease_expires = NULL
		WHERE id = $1 AND status = 'Running' AND lease_owner = $2`, string(status), patch, db.now().UnixMilli(), message)
}

// ReleaseJob implements store.Jobs.
func (db *DB) ReleaseJob(ctx context.Context, transactionID string) error {
	return db.endJob(ctx, transactionID, true, `UPDATE transactions SET status = 'Queued', updated_at = $3,
		lease_owner = NULL, lease_expires = NULL
		WHERE id = $1 AND status = 'Running' AND lease_owner = $2`, db.now().UnixMilli())
}

// endJob runs query ($1 the job, $2 this process, then args) on a job this
// process holds and stops renewing its lease; requeue says the query puts
// the job back in the queue, which the store then announces. Returns
// TransactionNotFound (10) when the process does not hold the job.
func (db *DB) endJob(ctx context.Context, transactionID string, requeue bool, query string, args ...any) error {
	defer db.jobs.drop(transactionID)
	if requeue {
		query = announced(query, "$2")
	}
	tag, err := db.pool.Exec(ctx, query, append([]any{transactionID, db.owner}, args...)...)
	if err != nil {
		return classify(err)
	}
	if tag.RowsAffected() == 0 {
		return store.Errorf(store.CodeTransactionNotFound, "no running job %s held by this process", transactionID)
	}
	if requeue {
		db.jobsQueued()
	}
	return nil
}

// RecoverJobs implements store.Jobs: it puts back in the queue the jobs
// left running by replicas whose leases have run out (ClaimJob would take
// them anyway; this makes their status say so, and wakes the runners).
// Jobs that live replicas run are left alone.
func (db *DB) RecoverJobs(ctx context.Context) (int, error) {
	tag, err := db.pool.Exec(ctx, announced(`UPDATE transactions SET status = 'Queued', updated_at = $1, lease_owner = NULL, lease_expires = NULL
		WHERE status = 'Running' AND lease_expires < now()`, "$2"), db.now().UnixMilli(), db.owner)
	if err != nil {
		return 0, classify(err)
	}
	if tag.RowsAffected() > 0 {
		db.jobsQueued()
	}
	return int(tag.RowsAffected()), nil
}

// leases renews the leases of the jobs this process holds.
type leases struct {
	db     *DB
	lease  time.Duration
	mu     sync.Mutex
	held   map[string]bool
	cancel context.CancelFunc
	done   chan struct{}
}

// startLeases starts renewing, every third of lease, the leases of the
// jobs db claims.
func startLeases(db *DB, lease time.Duration) *leases {
	ctx, cancel := context.WithCancel(context.Background())
	l := &leases{db: db, lease: lease, held: map[string]bool{}, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(l.done)
		tick := time.NewTicker(lease / 3)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				l.renew(ctx)
			}
		}
	}()
	return l
}

func (l *leases) hold(id string) {
	l.mu.Lock()
	l.held[id] = true
	l.mu.Unlock()
}

func (l *leases) drop(id string) {
	l.mu.Lock()
	delete(l.held, id)
	l.mu.Unlock()
}

// renew extends the leases held. A failure is retried at the next tick; a
// lease that runs out meanwhile lets another replica take the job.
func (l *leases) renew(ctx context.Context) {
	l.mu.Lock()
	ids := make([]string, 0, len(l.held))
	for id := range l.held {
		ids = append(ids, id)
	}
	l.mu.Unlock()
	if len(ids) == 0 {
		return
	}
	_, _ = l.db.pool.Exec(ctx, `UPDATE transactions SET lease_expires = now() + $1 * interval '1 millisecond'
		WHERE id = ANY($2) AND status = 'Running' AND lease_owner = $3`, l.lease.Milliseconds(), ids, l.db.owner)
}

// stop stops renewing.
func (l *leases) stop() {
	l.cancel()
	<-l.done
}
