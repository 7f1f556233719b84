package coord

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/lancens/lancens/store"
)

// Handler does one job of the kind it is registered for; payload is the
// job's input as queued. Its error fails the job (see store.Jobs.FinishJob),
// unless it returns because ctx ended: then the job runs again later.
type Handler func(ctx context.Context, payload json.RawMessage) error

// Decode returns the Handler that decodes a job's JSON payload into a P and
// passes it to do. A payload that does not decode fails the job.
func Decode[P any](do func(ctx context.Context, p P) error) Handler {
	return func(ctx context.Context, payload json.RawMessage) error {
		var p P
		if err := json.Unmarshal(payload, &p); err != nil {
			return fmt.Errorf("bad payload: %w", err)
		}
		return do(ctx, p)
	}
}

// Signal tells a Runner that jobs were queued. A store takes Notify as its
// hook when it opens (for example sqlite.Options.OnJobQueued) and the
// runner waits on the signal, so no caller of the store has to remember to
// wake the runner.
type Signal struct{ c chan struct{} }

// NewSignal returns a signal nobody has notified yet.
func NewSignal() *Signal { return &Signal{c: make(chan struct{}, 1)} }

// Notify wakes the runner waiting on the signal, or the next one to wait.
// It never blocks.
func (s *Signal) Notify() {
	select {
	case s.c <- struct{}{}:
	default: // a wake-up is already pending
	}
}

// DefaultPoll is how often a Runner looks for queued jobs besides when it
// is signalled.
const DefaultPoll = 5 * time.Second

// Runner does the work queued in transaction records, one job at a time, in
// the background: when signalled, every Poll, and at start (which also
// resumes jobs a previous process left running or lost). A job interrupted
// by Stop goes back in the queue. Kinds join by Register before Start; the
// runner claims only jobs of registered kinds.
type Runner struct {
	jobs     store.Jobs
	log      *slog.Logger
	queued   *Signal
	handlers map[string]Handler
	kinds    []string // in the order registered
	// Poll is how often the runner looks for jobs without a signal
	// (default DefaultPoll). Set it before Start.
	Poll time.Duration
	// ProgressEvery is how often, at most, a running job's progress is
	// logged and recorded in its transaction, when the job store is also
	// a store.Transactions (default DefaultProgressInterval). Set it
	// before Start.
	ProgressEvery time.Duration
	started       bool
	cancel        context.CancelFunc
	done          sync.WaitGroup
}

// NewRunner returns a runner of the jobs queued in jobs, woken by queued
// (nil: a signal only Wake notifies), logging to log. It has no kinds yet.
func NewRunner(jobs store.Jobs, queued *Signal, log *slog.Logger) *Runner {
	if queued == nil {
		queued = NewSignal()
	}
	return &Runner{jobs: jobs, log: log, queued: queued, handlers: map[string]Handler{}, Poll: DefaultPoll, ProgressEvery: DefaultProgressInterval}
}

// Register makes h the handler of jobs of kind. It panics when kind has a
// handler already or the runner has started: both are programming errors.
func (r *Runner) Register(kind string, h Handler) {
	if r.started {
		panic("coord: Register after Start")
	}
	if _, dup := r.handlers[kind]; dup {
		panic(fmt.Sprintf("coord: job kind %q registered twice", kind))
	}
	r.handlers[kind] = h
	r.kinds = append(r.kinds, kind)
}

// Kinds returns the registered job kinds in the order they were
// registered, which is the order of preference when jobs of several kinds
// are queued.
func (r *Runner) Kinds() []string { return slices.Clone(r.kinds) }

// Start starts the runner's goroutine. Start it once.
func (r *Runner) Start() {
	r.started = true
	kinds := r.Kinds()
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	r.done.Add(1)
	go func() {
		defer r.done.Done()
		if n, err := r.jobs.RecoverJobs(ctx); err != nil {
			r.log.Error("requeue jobs", slog.Any("error", err))
		} else if n > 0 {
			r.log.Info("resuming interrupted jobs", slog.Int("jobs", n))
		}
		tick := time.NewTicker(r.Poll)
		defer tick.Stop()
		for {
			r.drain(ctx, kinds)
			select {
			case <-ctx.Done():
				return
			case <-r.queued.c:
			case <-tick.C:
			}
		}
	}()
}

// Wake asks the runner to look for queued jobs now.
func (r *Runner) Wake() { r.queued.Notify() }

// Stop stops the runner and waits for the job in progress, which goes back
// in the queue when its handler returns because it was stopped.
func (r *Runner) Stop() {
	if r.cancel != nil {
		r.cancel()
		r.done.Wait()
	}
}

// drain runs queued jobs of kinds until none is left or ctx ends.
func (r *Runner) drain(ctx context.Context, kinds []string) {
	for ctx.Err() == nil {
		job, err := r.jobs.ClaimJob(ctx, kinds...)
		if err != nil {
			if ctx.Err() == nil {
				r.log.Error("claim job", slog.Any("error", err))
			}
			return
		}
		if job == nil {
			return
		}
		txs, _ := r.jobs.(store.Transactions)
		tracker, jobCtx := startJobProgress(ctx, txs, r.log, job, r.ProgressEvery)
		jobCtx, span := tracer().Start(jobCtx, "job "+job.Kind, trace.WithSpanKind(trace.SpanKindConsumer), trace.WithNewRoot(),
			trace.WithAttributes(attrJobKind.String(job.Kind), attrTransactionID.String(job.TransactionID)))
		jobErr := r.Run(jobCtx, job)
		endSpan(span, jobErr)
		tracker.finish(jobErr)
		if jobErr != nil && ctx.Err() != nil {
			// Stopping: the job runs again from the start next time.
			r.log.Info("job interrupted, queued again", slog.String("transaction_id", job.TransactionID), slog.String("kind", job.Kind))
			if err := r.jobs.ReleaseJob(context.WithoutCancel(ctx), job.TransactionID); err != nil {
				r.log.Error("release job", slog.String("transaction_id", job.TransactionID), slog.Any("error", err))
			}
			return
		}
		if jobErr != nil {
			r.log.Error("job failed", slog.String("transaction_id", job.TransactionID), slog.String("kind", job.Kind), slog.Any("error", jobErr))
		}
		if err := r.jobs.FinishJob(context.WithoutCancel(ctx), job.TransactionID, jobErr); err != nil {
			r.log.Error("finish job", slog.String("transaction_id", job.TransactionID), slog.Any("error", err))
		}
	}
}

// Run does one claimed job with its kind's handler and returns the
// handler's error, or an error when the kind has none. The runner calls it
// for the jobs it claims; a caller that claims jobs itself (a test running
// them inline) may too.
func (r *Runner) Run(ctx context.Context, job *store.Job) error {
	h, ok := r.handlers[job.Kind]
	if !ok {
		return fmt.Errorf("unknown job kind %q", job.Kind)
	}
	return h(ctx, job.Payload)
}
