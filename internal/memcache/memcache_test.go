package memcache

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

type sized int64

func (s sized) CacheBytes() int64 { return int64(s) }

func value(n int64) func() (Value, error) { return func() (Value, error) { return sized(n), nil } }

func TestEvictsLeastRecentlyUsed(t *testing.T) {
	c := New(100)
	ctx := context.Background()
	for _, k := range []string{"a", "b", "c"} {
		if _, err := c.Get(ctx, k, value(40)); err != nil {
			t.Fatal(err)
		}
		if k == "b" {
			c.Peek("a") // a is now more recent than b
		}
	}
	for k, want := range map[string]bool{"a": true, "b": false, "c": true} {
		if _, ok := c.Peek(k); ok != want {
			t.Errorf("%s cached: %v, want %v", k, ok, want)
		}
	}
	if s := c.Stats(); s.Bytes != 80 || s.Entries != 2 {
		t.Fatalf("stats %+v, want 80 bytes in 2 entries", s)
	}
}

func TestOversizeAndFailedLoadsAreNotKept(t *testing.T) {
	c := New(100)
	ctx := context.Background()
	v, err := c.Get(ctx, "big", value(101))
	if err != nil || v != sized(101) {
		t.Fatalf("big value: %v, %v", v, err)
	}
	if _, ok := c.Peek("big"); ok {
		t.Fatal("a value larger than the budget was kept")
	}
	boom := errors.New("boom")
	if _, err := c.Get(ctx, "k", func() (Value, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Fatalf("failed load: %v", err)
	}
	if v, err := c.Get(ctx, "k", value(1)); err != nil || v != sized(1) {
		t.Fatalf("load after a failure: %v, %v", v, err)
	}
}

func TestLoadsOnce(t *testing.T) {
	c := New(100)
	var loads atomic.Int32
	release := make(chan struct{})
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := c.Get(context.Background(), "k", func() (Value, error) {
				loads.Add(1)
				<-release
				return sized(5), nil
			})
			if err != nil || v != sized(5) {
				t.Errorf("got %v, %v", v, err)
			}
		}()
	}
	time.Sleep(20 * time.Millisecond)
	close(release)
	wg.Wait()
	if n := loads.Load(); n != 1 {
		t.Fatalf("%d loads, want 1", n)
	}
}

func TestWaiterLeavesWithItsContext(t *testing.T) {
	c := New(100)
	started := make(chan struct{})
	release := make(chan struct{})
	go c.Get(context.Background(), "k", func() (Value, error) {
		close(started)
		<-release
		return sized(1), nil
	})
	<-started
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Get(ctx, "k", value(1)); !errors.Is(err, context.Canceled) {
		t.Fatalf("waiting caller with a cancelled context: %v", err)
	}
	close(release)
}

func TestForgetPrefix(t *testing.T) {
	c := New(100)
	ctx := context.Background()
	for _, k := range []string{"t1/a", "t1/b", "t2/a"} {
		c.Get(ctx, k, value(1))
	}
	c.ForgetPrefix("t1/")
	if _, ok := c.Peek("t1/a"); ok {
		t.Fatal("t1/a survived")
	}
	if _, ok := c.Peek("t2/a"); !ok {
		t.Fatal("t2/a was dropped")
	}
}
