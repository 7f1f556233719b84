package coord

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/lancens/lancens/internal/progress"
	"github.com/lancens/lancens/store"
)

// DefaultProgressInterval is how often, at most, a running job's progress
// is logged and recorded in its transaction (Runner.ProgressEvery).
const DefaultProgressInterval = 5 * time.Second

// Transaction properties that carry a running job's progress: the stage it
// is in and how many of its units (rows, for most stages) are done.
const (
	propProgressStage = "progress_stage"
	propProgressRows  = "progress_rows"
	propTotalRows     = "total_rows"
)

// jobProgress follows one job: it logs its start, its progress at most
// every interval and its end with the duration, and records the progress
// in the job's transaction (progress_stage, progress_rows, total_rows) so
// that describe_transaction shows it, when txs is not nil. The job reports through the Func of
// the context it runs under (see internal/progress).
type jobProgress struct {
	txs      store.Transactions
	log      *slog.Logger
	job      *store.Job
	start    time.Time
	interval time.Duration

	mu     sync.Mutex
	latest progressState // guarded by mu
	// record holds the latest state for the recorder to write; a newer
	// state replaces an unwritten one.
	record chan progressState
	stop   chan struct{}
	done   sync.WaitGroup
}

type progressState struct {
	stage       string
	done, total int64
}

// startJobProgress logs that job starts and begins following it; the
// returned context carries its progress Func.
func startJobProgress(ctx context.Context, txs store.Transactions, log *slog.Logger, job *store.Job, interval time.Duration) (*jobProgress, context.Context) {
	if interval <= 0 {
		interval = DefaultProgressInterval
	}
	p := &jobProgress{txs: txs, log: log, job: job, start: time.Now(), interval: interval,
		record: make(chan progressState, 1), stop: make(chan struct{})}
	log.Info("job started", slog.String("kind", job.Kind), slog.String("transaction_id", job.TransactionID))
	p.done.Add(2)
	go p.logEvery()
	go p.recordLatest()
	return p, progress.With(ctx, p.report)
}

// report is the job's progress.Func: it only remembers the state.
func (p *jobProgress) report(stage string, done, total int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if stage == p.latest.stage && done < p.latest.done {
		return // an older report from another goroutine
	}
	p.latest = progressState{stage, done, total}
}

func (p *jobProgress) current() progressState {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.latest
}

// logEvery logs and hands to the recorder each state that changed since
// the last interval.
func (p *jobProgress) logEvery() {
	defer p.done.Done()
	tick := time.NewTicker(p.interval)
	defer tick.Stop()
	var last progressState
	for {
		select {
		case <-p.stop:
			return
		case <-tick.C:
		}
		st := p.current()
		if st == last || st.stage == "" {
			continue
		}
		last = st
		p.log.Info("job progress", slog.String("kind", p.job.Kind), slog.String("transaction_id", p.job.TransactionID),
			slog.String("stage", st.stage), slog.Int64("done", st.done), slog.Int64("total", st.total),
			slog.Duration("elapsed", time.Since(p.start).Round(time.Millisecond)))
		select {
		case <-p.record: // drop the state not written yet
		default:
		}
		p.record <- st
	}
}

// recordLatest writes the states logEvery hands it into the transaction.
// A write waits while the job itself holds the database's writer (a
// backfill does), so it runs apart from the logging.
func (p *jobProgress) recordLatest() {
	defer p.done.Done()
	for {
		select {
		case <-p.stop:
			return
		case st := <-p.record:
			p.write(st)
		}
	}
}

// progressWriteTimeout bounds one write of a job's progress.
const progressWriteTimeout = 30 * time.Second

// write records st in the job's transaction; a failure is logged at level
// warn (the job goes on).
func (p *jobProgress) write(st progressState) {
	if p.txs == nil {
		return
	}
	set := func(k, v string) store.TransactionAction {
		return store.TransactionAction{SetProperty: &store.PropertyChange{Key: k, Value: v, Mode: store.PropertyOverwrite}}
	}
	// Bounded, so that a database that stops answering cannot hold the
	// job's end (and the runner's shutdown) behind a progress note.
	ctx, cancel := context.WithTimeout(context.Background(), progressWriteTimeout)
	defer cancel()
	_, err := p.txs.AlterTransaction(ctx, []string{p.job.TransactionID}, []store.TransactionAction{
		set(propProgressStage, st.stage), set(propProgressRows, strconv.FormatInt(st.done, 10)), set(propTotalRows, strconv.FormatInt(st.total, 10))})
	if err != nil {
		p.log.Warn("record job progress", slog.String("transaction_id", p.job.TransactionID), slog.Any("error", err))
	}
}

// finish stops following the job, records its last progress (before the
// job's end is recorded) and logs its end with its duration and outcome.
func (p *jobProgress) finish(jobErr error) {
	close(p.stop)
	p.done.Wait()
	st := p.current()
	if st.stage != "" {
		p.write(st)
	}
	attrs := []any{slog.String("kind", p.job.Kind), slog.String("transaction_id", p.job.TransactionID),
		slog.Duration("duration", time.Since(p.start).Round(time.Millisecond))}
	if st.stage != "" {
		attrs = append(attrs, slog.String("stage", st.stage), slog.Int64("done", st.done), slog.Int64("total", st.total))
	}
	if jobErr != nil {
		p.log.Info("job ended", append(attrs, slog.Any("error", jobErr))...)
		return
	}
	p.log.Info("job finished", attrs...)
}
