package coord

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// CleanupQueuer queues the cleanup of old versions (store.VersionCleanup).
type CleanupQueuer interface {
	QueueCleanups(ctx context.Context, before time.Time) (int, error)
}

// Retention queues, every Interval, a cleanup of every managed table with
// versions older than its retention period that nothing else keeps; the
// job runner does them (store.JobCleanupVersions).
type Retention struct {
	queuer CleanupQueuer
	keep   time.Duration
	log    *slog.Logger
	now    func() time.Time
	// Interval is how often it looks for tables to clean up. NewRetention
	// sets it from the retention period; set it before Start.
	Interval time.Duration
	cancel   context.CancelFunc
	done     sync.WaitGroup
}

// Bounds of Retention.Interval as NewRetention sets it: a twelfth of the
// retention period, within these.
const (
	minRetentionInterval = 10 * time.Second
	maxRetentionInterval = time.Hour
)

// NewRetention returns a Retention that keeps versions for keep (0 or
// less: only those something else keeps), queueing cleanups in q and
// logging to log.
func NewRetention(q CleanupQueuer, keep time.Duration, log *slog.Logger) *Retention {
	return &Retention{queuer: q, keep: max(keep, 0), log: log, now: time.Now,
		Interval: min(max(keep/12, minRetentionInterval), maxRetentionInterval)}
}

// Start starts looking for tables to clean up, at once and every Interval.
// Start it once.
func (r *Retention) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	r.done.Add(1)
	go func() {
		defer r.done.Done()
		tick := time.NewTicker(r.Interval)
		defer tick.Stop()
		for {
			if n, err := r.queuer.QueueCleanups(ctx, r.now().Add(-r.keep)); err != nil {
				if ctx.Err() == nil {
					r.log.Error("queue version cleanups", slog.Any("error", err))
				}
			} else if n > 0 {
				r.log.Info("queued version cleanups", slog.Int("tables", n))
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
}

// Stop stops it and waits until it has.
func (r *Retention) Stop() {
	if r.cancel != nil {
		r.cancel()
		r.done.Wait()
	}
}
