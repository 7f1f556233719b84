package progress

import (
	"context"
	"sync"
	"testing"
)

// TestCounter checks that a counter shared by goroutines reports a start at
// zero and a last report of the whole total, and that work under a context
// without a Func reports nothing and costs nothing.
func TestCounter(t *testing.T) {
	var mu sync.Mutex
	var reports [][2]int64
	ctx := With(context.Background(), func(stage string, done, total int64) {
		if stage != "assign" {
			t.Errorf("stage %q", stage)
		}
		mu.Lock()
		reports = append(reports, [2]int64{done, total})
		mu.Unlock()
	})
	c := NewCounter(ctx, "assign", 1000)
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			for range 10 {
				c.Add(10)
			}
		})
	}
	wg.Wait()
	if len(reports) != 101 || reports[0] != [2]int64{0, 1000} {
		t.Fatalf("%d reports, first %v", len(reports), reports[0])
	}
	maxDone := int64(0)
	for _, r := range reports {
		maxDone = max(maxDone, r[0])
	}
	if maxDone != 1000 {
		t.Fatalf("most done reported %d, want 1000", maxDone)
	}

	none := NewCounter(context.Background(), "assign", 10)
	if none != nil {
		t.Fatal("a counter without a Func")
	}
	none.Add(5) // must not panic
	Report(context.Background(), "x", 1, 2)
}
