// Package budget is a byte budget shared by concurrent requests: each
// reserves the memory it is about to spend (decoding a body, parsing a
// filter) before spending it and returns it when done, so that however
// many requests arrive at once, what they hold together stays under the
// limit. A request that does not fit waits for others to return theirs;
// after a bounded wait it gives up (ErrBusy), and one larger than the whole
// budget gives up at once (ErrTooLarge). Returned bytes go to the waiters
// that fit, in arrival order: a large request waiting for room does not
// hold up smaller ones behind it, so a few large requests cannot stall
// every other (they may wait in vain instead, and are told to try again).
// Nothing in the budget is memory: it only counts, and holds callers to
// their word.
package budget

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// ErrBusy is the error of a reservation that did not fit within the wait:
// the budget is taken by other requests; the same request may fit later.
var ErrBusy = errors.New("the memory budget is taken by other requests")

// ErrTooLarge is the error of a reservation larger than the whole budget:
// it can never fit.
var ErrTooLarge = errors.New("larger than the whole memory budget")

// Budget is a byte budget. The zero value is not usable; see New.
type Budget struct {
	limit int64
	wait  time.Duration

	mu    sync.Mutex
	used  int64
	queue []*waiter // in arrival order
	// peak is the most used since the budget was last idle (used 0).
	peak int64
	// idle, when set, runs (outside the lock) each time the budget
	// becomes idle, with the peak since it was last idle.
	idle func(peak int64)
}

// waiter is a reservation waiting for room.
type waiter struct {
	n       int64
	granted chan struct{} // closed once the bytes are reserved for it
}

// New returns a budget of limit bytes whose reservations wait at most wait
// for room. idle, when not nil, runs each time the budget becomes idle
// again, with the most that was used meanwhile (to give memory back to the
// operating system after a peak, say); it must not block.
func New(limit int64, wait time.Duration, idle func(peak int64)) *Budget {
	return &Budget{limit: limit, wait: wait, idle: idle}
}

// Limit returns the budget's size in bytes.
func (b *Budget) Limit() int64 { return b.limit }

// Used returns the bytes reserved now.
func (b *Budget) Used() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// Reserve reserves n bytes, waiting up to the budget's wait for room. It
// returns ErrTooLarge (wrapped,
// with the sizes) when n exceeds the whole budget, ErrBusy when the wait
// ends first, and ctx's error when ctx ends first; nothing is reserved
// then. A reservation of n <= 0 takes nothing.
func (b *Budget) Reserve(ctx context.Context, n int64) error {
	if n <= 0 {
		return nil
	}
	if n > b.limit {
		return fmt.Errorf("%w: %d bytes asked of %d", ErrTooLarge, n, b.limit)
	}
	b.mu.Lock()
	if b.used+n <= b.limit {
		b.take(n)
		b.mu.Unlock()
		return nil
	}
	w := &waiter{n: n, granted: make(chan struct{})}
	b.queue = append(b.queue, w)
	b.mu.Unlock()

	timer := time.NewTimer(b.wait)
	defer timer.Stop()
	var err error
	select {
	case <-w.granted:
		return nil
	case <-timer.C:
		err = ErrBusy
	case <-ctx.Done():
		err = ctx.Err()
	}
	b.mu.Lock()
	select {
	case <-w.granted:
		// Granted as the wait ended: keep it.
		b.mu.Unlock()
		return nil
	default:
	}
	for i, q := range b.queue {
		if q == w {
			b.queue = append(b.queue[:i], b.queue[i+1:]...)
			break
		}
	}
	b.mu.Unlock()
	return err
}

// Return gives back n bytes a reservation took.
func (b *Budget) Return(n int64) {
	if n <= 0 {
		return
	}
	b.mu.Lock()
	b.used -= n
	if b.used < 0 {
		b.mu.Unlock()
		panic(fmt.Sprintf("budget: %d bytes returned beyond those reserved", -b.used))
	}
	b.grant()
	var peak int64
	if b.used == 0 {
		peak, b.peak = b.peak, 0
	}
	b.mu.Unlock()
	if peak > 0 && b.idle != nil {
		b.idle(peak)
	}
}

// take counts n bytes as reserved; b.mu is held.
func (b *Budget) take(n int64) {
	b.used += n
	b.peak = max(b.peak, b.used)
}

// grant reserves for the waiters that fit, in arrival order; b.mu is held.
func (b *Budget) grant() {
	waiting := b.queue[:0]
	for _, w := range b.queue {
		if b.used+w.n <= b.limit {
			b.take(w.n)
			close(w.granted)
			continue
		}
		waiting = append(waiting, w)
	}
	clear(b.queue[len(waiting):])
	b.queue = waiting
}
