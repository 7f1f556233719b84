package budget

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

func TestReserveWithinAndBeyond(t *testing.T) {
	b := New(100, 10*time.Millisecond, nil)
	ctx := t.Context()
	for _, tc := range []struct {
		n    int64
		want error
	}{
		{60, nil},
		{40, nil},          // exactly full
		{1, ErrBusy},       // nothing returns within the wait
		{101, ErrTooLarge}, // can never fit, refused at once
		{0, nil},           // takes nothing
	} {
		if err := b.Reserve(ctx, tc.n); !errors.Is(err, tc.want) {
			t.Fatalf("reserve %d with %d used: got %v, want %v", tc.n, b.Used(), err, tc.want)
		}
	}
	if b.Used() != 100 {
		t.Fatalf("used %d, want 100: refused reservations took bytes", b.Used())
	}
}

// TestReserveWaitsForRoom: reservations that do not fit wait and are
// granted as bytes come back, in arrival order among those that fit: a
// small one does not wait behind a large one that does not fit yet.
func TestReserveWaitsForRoom(t *testing.T) {
	b := New(100, 5*time.Second, nil)
	ctx := t.Context()
	if err := b.Reserve(ctx, 100); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	granted := make(chan int64, 3)
	for i, n := range []int64{80, 10, 5} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := b.Reserve(ctx, n); err != nil {
				t.Error(err)
			}
			granted <- n
		}()
		waitFor(t, func() bool { b.mu.Lock(); defer b.mu.Unlock(); return len(b.queue) == i+1 })
	}
	b.Return(12) // room for the 10 only: it passes the 80, the 5 still waits
	if n := <-granted; n != 10 || b.Used() != 98 {
		t.Fatalf("granted %d first, %d used; want the 10, 98 used", n, b.Used())
	}
	b.Return(88) // 10 used: the 80 (first in line) and the 5 both fit
	wg.Wait()
	if b.Used() != 95 {
		t.Fatalf("used %d, want 95", b.Used())
	}
}

func TestReserveEndsWithContext(t *testing.T) {
	b := New(10, time.Minute, nil)
	if err := b.Reserve(t.Context(), 10); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	go func() { time.Sleep(10 * time.Millisecond); cancel() }()
	if err := b.Reserve(ctx, 5); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	b.Return(10)
	if b.Used() != 0 {
		t.Fatalf("used %d after the cancelled reservation left", b.Used())
	}
}

func TestIdleReportsPeak(t *testing.T) {
	var peaks []int64
	b := New(100, time.Millisecond, func(peak int64) { peaks = append(peaks, peak) })
	ctx := t.Context()
	_ = b.Reserve(ctx, 30)
	_ = b.Reserve(ctx, 50)
	b.Return(30)
	b.Return(50)
	_ = b.Reserve(ctx, 5)
	b.Return(5)
	if len(peaks) != 2 || peaks[0] != 80 || peaks[1] != 5 {
		t.Fatalf("idle peaks %v, want [80 5]", peaks)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for range 1000 {
		if cond() {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("condition never held")
}
