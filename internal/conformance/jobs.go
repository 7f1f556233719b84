package conformance

import (
	"context"
	"log/slog"

	"github.com/lancens/lancens/coord"
	"github.com/lancens/lancens/store"
)

// JobStore is a store that queues work in transaction records.
type JobStore interface {
	DataTarget
	store.Jobs
	coord.JobStore
}

// InlineJobs returns st with the work it queues done before the queuing
// call returns: vector index builds after CreateIndex and column backfills
// after QueueBackfill, by the handlers a server's job runner uses in the
// background (coord.RegisterStoreJobs). It is how the suite tests a store
// directly. Deletions of dropped tables' data stay queued.
func InlineJobs(st JobStore) DataTarget {
	r := coord.NewRunner(st, nil, slog.New(slog.DiscardHandler))
	coord.RegisterStoreJobs(r, st, nil)
	return inlineJobs{st, r}
}

type inlineJobs struct {
	JobStore
	runner *coord.Runner
}

// CreateIndex records the index and builds it.
func (s inlineJobs) CreateIndex(ctx context.Context, id []string, spec store.IndexSpec) (string, error) {
	txID, err := s.JobStore.CreateIndex(ctx, id, spec)
	if err != nil {
		return "", err
	}
	return txID, s.drain(ctx)
}

// QueueBackfill queues the backfill and runs it.
func (s inlineJobs) QueueBackfill(ctx context.Context, id []string, column, where string) (string, error) {
	txID, err := s.JobStore.QueueBackfill(ctx, id, column, where)
	if err != nil {
		return "", err
	}
	return txID, s.drain(ctx)
}

// drain runs the queued jobs of the runner's kinds; a job's own failure is
// recorded in its transaction, as the job runner records it. It returns an
// error only when the queue itself fails.
func (s inlineJobs) drain(ctx context.Context) error {
	for {
		job, err := s.ClaimJob(ctx, s.runner.Kinds()...)
		if err != nil || job == nil {
			return err
		}
		if err := s.FinishJob(ctx, job.TransactionID, s.runner.Run(ctx, job)); err != nil {
			return err
		}
	}
}
