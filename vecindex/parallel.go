package vecindex

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
)

// workers returns how many goroutines a build uses.
func workers() int { return runtime.GOMAXPROCS(0) }

// parallelFor calls fn(w, lo, hi) over consecutive chunks [lo, hi) of at
// most grain items covering [0, n), from up to nw goroutines; w in [0, nw)
// identifies the calling goroutine, so fn may use per-worker scratch. It
// returns ctx.Err() when ctx is cancelled before every chunk ran, else nil.
func parallelFor(ctx context.Context, nw, n, grain int, fn func(w, lo, hi int)) error {
	grain = max(grain, 1)
	chunks := (n + grain - 1) / grain
	nw = min(max(nw, 1), chunks)
	if nw <= 1 {
		for lo := 0; lo < n; lo += grain {
			if err := ctx.Err(); err != nil {
				return err
			}
			fn(0, lo, min(lo+grain, n))
		}
		return ctx.Err()
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range nw {
		wg.Go(func() {
			for ctx.Err() == nil {
				c := int(next.Add(1)) - 1
				if c >= chunks {
					return
				}
				lo := c * grain
				fn(w, lo, min(lo+grain, n))
			}
		})
	}
	wg.Wait()
	return ctx.Err()
}
