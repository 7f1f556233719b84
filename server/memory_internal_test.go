package server

import (
	"testing"
	"time"
)

// TestMemoryReturnedAfterPeaks: a peak above releaseAfter returns memory
// to the operating system, at most once every `every`; peaks inside that
// time are returned together when it ends; small peaks are not. The clock
// and the timer are the test's.
func TestMemoryReturnedAfterPeaks(t *testing.T) {
	now := time.Unix(1000, 0)
	var scheduled []time.Duration
	var run []func()
	frees := 0
	m := &memoryReturner{every: 5 * time.Second, free: func() { frees++ }, now: func() time.Time { return now },
		after: func(d time.Duration, f func()) { scheduled, run = append(scheduled, d), append(run, f) }}
	fire := func() {
		f := run[0]
		run = run[1:]
		f()
	}
	m.peaked(releaseAfter - 1)
	if len(run) != 0 {
		t.Fatal("a small peak scheduled a release")
	}
	m.peaked(releaseAfter)
	m.peaked(2 * releaseAfter) // while the first is pending: nothing more
	if len(run) != 1 || scheduled[0] != 0 {
		t.Fatalf("scheduled %v after a large peak, want one release at once", scheduled)
	}
	fire()
	now = now.Add(time.Second)
	m.peaked(releaseAfter)
	if frees != 1 || len(run) != 1 || scheduled[1] != 4*time.Second {
		t.Fatalf("%d releases, then %v scheduled; want 1, then one 4s later (5s after the first)", frees, scheduled)
	}
	now = now.Add(4 * time.Second)
	fire()
	if frees != 2 {
		t.Fatalf("%d releases, want 2", frees)
	}
}
