package conformance

import (
	"context"
	"time"

	"github.com/lancens/lancens/store"
)

// probeTarget is a target that answers operators' probes.
type probeTarget interface {
	store.Catalog
	store.Probe
}

func (s *suite) probe(t T) {
	tg := implementing[probeTarget](t, s.target(t), "Probe")
	noErr(t, tg.Ready(ctx(t)))
	queueDeletion(t, tg, "old", remote("probe/old"))
	counts := must(tg.PendingJobs(ctx(t)))(t)
	var queued int64
	for _, c := range counts {
		if c.Count <= 0 {
			t.Errorf("pending jobs list a count of %d: %+v", c.Count, c)
		}
		if c.Kind == store.JobDeleteTableData && c.Status == store.TxQueued {
			queued = c.Count
		}
	}
	if queued < 1 {
		t.Fatalf("pending jobs %+v do not count the queued deletion", counts)
	}
	if size := must(tg.SizeBytes(ctx(t)))(t); size <= 0 {
		t.Fatalf("the store takes %d bytes", size)
	}
}

func (s *suite) locationLocks(t T) {
	tg := implementing[store.LocationLocker](t, s.target(t), "LocationLocks")
	lock := func(t T, locations ...string) func() {
		t.Helper()
		c, cancel := context.WithTimeout(ctx(t), 30*time.Second)
		defer cancel()
		unlock, err := tg.LockLocations(c, locations)
		noErr(t, err)
		return unlock
	}
	Subtest(t, "ReleasedAndTakenAgain", func(t T) {
		// One location spelled twice, and another.
		unlock := lock(t, remote("locks/a"), remote("locks/a/"), remote("locks/b"))
		unlock()
		lock(t, remote("locks/b"), remote("locks/a"))()
	})
	Subtest(t, "None", func(t T) {
		lock(t)()
	})
}
