package server

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/warehouse"
)

// jobRunner does the work queued in transaction records, one job at a time,
// in the background: when woken after a request queued some, every few
// seconds, and at start (which also resumes jobs a previous process left
// running or lost). A job interrupted by stop goes back in the queue.
type jobRunner struct {
	store     Store
	warehouse *warehouse.Warehouse
	log       *slog.Logger
	wakeup    chan struct{}
	// progressEvery is how often a job's progress is logged and recorded.
	progressEvery time.Duration
	cancel        context.CancelFunc
	done          sync.WaitGroup
}

func newJobRunner(st Store, wh *warehouse.Warehouse, log *slog.Logger, progressEvery time.Duration) *jobRunner {
	return &jobRunner{store: st, warehouse: wh, log: log, wakeup: make(chan struct{}, 1), progressEvery: progressEvery}
}

func (r *jobRunner) start() {
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	r.done.Add(1)
	go func() {
		defer r.done.Done()
		if n, err := r.store.RecoverJobs(ctx); err != nil {
			r.log.Error("requeue jobs", slog.Any("error", err))
		} else if n > 0 {
			r.log.Info("resuming interrupted jobs", slog.Int("jobs", n))
		}
		tick := time.NewTicker(5 * time.Second)
		defer tick.Stop()
		for {
			r.drain(ctx)
			select {
			case <-ctx.Done():
				return
			case <-r.wakeup:
			case <-tick.C:
			}
		}
	}()
}

// wake asks the runner to look for queued jobs now.
func (r *jobRunner) wake() {
	select {
	case r.wakeup <- struct{}{}:
	default:
	}
}

// stop stops the runner and waits for the job in progress.
func (r *jobRunner) stop() {
	if r.cancel != nil {
		r.cancel()
		r.done.Wait()
	}
}

// drain runs queued jobs until none is left or ctx ends.
func (r *jobRunner) drain(ctx context.Context) {
	for ctx.Err() == nil {
		job, err := r.store.ClaimJob(ctx, store.JobDeleteTableData, store.JobBackfillColumn, store.JobBuildIndex)
		if err != nil {
			if ctx.Err() == nil {
				r.log.Error("claim job", slog.Any("error", err))
			}
			return
		}
		if job == nil {
			return
		}
		tracker, jobCtx := startJobProgress(ctx, r.store, r.log, job, r.progressEvery)
		jobErr := r.run(jobCtx, job)
		tracker.finish(jobErr)
		if jobErr != nil && ctx.Err() != nil {
			// Stopping: the job runs again from the start next time.
			r.log.Info("job interrupted, queued again", slog.String("transaction_id", job.TransactionID), slog.String("kind", job.Kind))
			if err := r.store.ReleaseJob(context.WithoutCancel(ctx), job.TransactionID); err != nil {
				r.log.Error("release job", slog.String("transaction_id", job.TransactionID), slog.Any("error", err))
			}
			return
		}
		if jobErr != nil {
			r.log.Error("job failed", slog.String("transaction_id", job.TransactionID), slog.String("kind", job.Kind), slog.Any("error", jobErr))
		}
		if err := r.store.FinishJob(context.WithoutCancel(ctx), job.TransactionID, jobErr); err != nil {
			r.log.Error("finish job", slog.String("transaction_id", job.TransactionID), slog.Any("error", err))
		}
	}
}

func (r *jobRunner) run(ctx context.Context, job *store.Job) error {
	switch job.Kind {
	case store.JobDeleteTableData:
		var p store.DeleteTableData
		if err := json.Unmarshal(job.Payload, &p); err != nil {
			return fmt.Errorf("bad payload: %w", err)
		}
		return r.warehouse.Remove(p.Location)
	case store.JobBackfillColumn:
		var p store.BackfillColumn
		if err := json.Unmarshal(job.Payload, &p); err != nil {
			return fmt.Errorf("bad payload: %w", err)
		}
		_, err := r.store.Backfill(ctx, p)
		return err
	case store.JobBuildIndex:
		var p store.BuildIndex
		if err := json.Unmarshal(job.Payload, &p); err != nil {
			return fmt.Errorf("bad payload: %w", err)
		}
		return r.store.BuildIndex(ctx, p)
	}
	return fmt.Errorf("unknown job kind %q", job.Kind)
}
