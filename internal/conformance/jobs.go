package conformance

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/lancens/lancens/store"
)

// JobStore is a store that queues work in transaction records.
type JobStore interface {
	DataTarget
	store.Jobs
}

// InlineJobs returns st with the work it queues done before the queuing
// call returns: vector index builds after CreateIndex and column backfills
// after QueueBackfill, as a server's job runner would do them in the
// background. It is how the suite tests a store directly.
func InlineJobs(st JobStore) DataTarget {
	return inlineJobs{st}
}

type inlineJobs struct {
	JobStore
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

// drain runs the queued index builds and backfills; a job's own failure is
// recorded in its transaction, as a job runner records it. It returns an
// error only when the queue itself fails.
func (s inlineJobs) drain(ctx context.Context) error {
	for {
		job, err := s.ClaimJob(ctx, store.JobBuildIndex, store.JobBackfillColumn)
		if err != nil || job == nil {
			return err
		}
		if err := s.FinishJob(ctx, job.TransactionID, s.run(ctx, job)); err != nil {
			return err
		}
	}
}

func (s inlineJobs) run(ctx context.Context, job *store.Job) error {
	switch job.Kind {
	case store.JobBuildIndex:
		var p store.BuildIndex
		if err := json.Unmarshal(job.Payload, &p); err != nil {
			return fmt.Errorf("bad payload: %w", err)
		}
		return s.BuildIndex(ctx, p)
	case store.JobBackfillColumn:
		var p store.BackfillColumn
		if err := json.Unmarshal(job.Payload, &p); err != nil {
			return fmt.Errorf("bad payload: %w", err)
		}
		_, err := s.Backfill(ctx, p)
		return err
	}
	return fmt.Errorf("unknown job kind %q", job.Kind)
}
