// Package progress lets long work (an index build, a backfill) report how
// far it has got to whoever started it, through the context it runs under,
// so that the layers in between need not know.
package progress

import (
	"context"
	"sync/atomic"
)

// Func receives progress: done of total units (rows, or iterations for a
// training stage) of the named stage of the work. Work may call it from
// several goroutines at once.
type Func func(stage string, done, total int64)

type key struct{}

// With returns a context that carries f to the work run under it.
func With(ctx context.Context, f Func) context.Context {
	return context.WithValue(ctx, key{}, f)
}

// Report passes progress to the Func ctx carries, if any.
func Report(ctx context.Context, stage string, done, total int64) {
	if f, _ := ctx.Value(key{}).(Func); f != nil {
		f(stage, done, total)
	}
}

// Counter counts the units of one stage that several goroutines complete,
// reporting the sum after each addition. A nil Counter counts nothing.
type Counter struct {
	f     Func
	stage string
	total int64
	done  atomic.Int64
}

// NewCounter reports that stage starts (0 of total done) and returns its
// counter, or nil when ctx carries no Func.
func NewCounter(ctx context.Context, stage string, total int64) *Counter {
	f, _ := ctx.Value(key{}).(Func)
	if f == nil {
		return nil
	}
	f(stage, 0, total)
	return &Counter{f: f, stage: stage, total: total}
}

// Add counts n more units done and reports the sum.
func (c *Counter) Add(n int64) {
	if c == nil {
		return
	}
	c.f(c.stage, c.done.Add(n), c.total)
}
