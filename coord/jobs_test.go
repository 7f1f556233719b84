package coord_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/lancens/lancens/coord"
	"github.com/lancens/lancens/engine"
	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/store/sqlite"
	"github.com/lancens/lancens/warehouse"
)

// fakeJobs is an in-memory job queue.
type fakeJobs struct {
	mu   sync.Mutex
	jobs []*fakeJob
}

type fakeJob struct {
	store.Job
	status store.TransactionStatus
	err    string
}

func (q *fakeJobs) queue(kind, payload string) string {
	q.mu.Lock()
	defer q.mu.Unlock()
	id := fmt.Sprint(len(q.jobs) + 1)
	q.jobs = append(q.jobs, &fakeJob{Job: store.Job{TransactionID: id, Kind: kind, Payload: json.RawMessage(payload)}, status: store.TxQueued})
	return id
}

func (q *fakeJobs) get(id string) fakeJob {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, j := range q.jobs {
		if j.TransactionID == id {
			return *j
		}
	}
	panic("no job " + id)
}

func (q *fakeJobs) ClaimJob(_ context.Context, kinds ...string) (*store.Job, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, k := range kinds {
		for _, j := range q.jobs {
			if j.Kind == k && j.status == store.TxQueued {
				j.status = store.TxRunning
				job := j.Job
				return &job, nil
			}
		}
	}
	return nil, nil
}

func (q *fakeJobs) running(id string) (*fakeJob, error) {
	for _, j := range q.jobs {
		if j.TransactionID == id && j.status == store.TxRunning {
			return j, nil
		}
	}
	return nil, store.Errorf(store.CodeTransactionNotFound, "no running job %s", id)
}

func (q *fakeJobs) FinishJob(_ context.Context, id string, jobErr error) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	j, err := q.running(id)
	if err != nil {
		return err
	}
	j.status = store.TxSucceeded
	if jobErr != nil {
		j.status, j.err = store.TxFailed, jobErr.Error()
	}
	return nil
}

func (q *fakeJobs) ReleaseJob(_ context.Context, id string) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	j, err := q.running(id)
	if err != nil {
		return err
	}
	j.status = store.TxQueued
	return nil
}

func (q *fakeJobs) RecoverJobs(context.Context) (int, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := 0
	for _, j := range q.jobs {
		if j.status == store.TxRunning {
			j.status = store.TxQueued
			n++
		}
	}
	return n, nil
}

// waitStatus waits until job id reaches one of the statuses and returns
// it; it fails t after 30 s.
func waitStatus(t *testing.T, status func() store.TransactionStatus, want ...store.TransactionStatus) store.TransactionStatus {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		s := status()
		if slices.Contains(want, s) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("job is %s, want one of %v", s, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func newRunner(q store.Jobs, sig *coord.Signal) *coord.Runner {
	return coord.NewRunner(q, sig, slog.New(slog.DiscardHandler))
}

// TestRunnerDispatch queues jobs of two registered kinds and one unknown
// kind: each registered job goes to its kind's handler with its payload
// decoded, a handler's error and an undecodable payload fail their job, and
// the job of the unknown kind is never claimed.
func TestRunnerDispatch(t *testing.T) {
	type payload struct {
		N int `json:"n"`
	}
	q := &fakeJobs{}
	var mu sync.Mutex
	var seen []string
	r := newRunner(q, nil)
	r.Register("A", coord.Decode(func(_ context.Context, p payload) error {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, fmt.Sprintf("A%d", p.N))
		if p.N == 2 {
			return errors.New("two is refused")
		}
		return nil
	}))
	r.Register("B", func(_ context.Context, p json.RawMessage) error {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, "B"+string(p))
		return nil
	})
	if got := r.Kinds(); !slices.Equal(got, []string{"A", "B"}) {
		t.Fatalf("kinds %v", got)
	}
	ids := map[string]string{
		"a1":      q.queue("A", `{"n":1}`),
		"a2":      q.queue("A", `{"n":2}`),
		"bad":     q.queue("A", `not json`),
		"b":       q.queue("B", `"x"`),
		"unknown": q.queue("C", `{}`),
	}
	r.Start()
	defer r.Stop()
	for name, want := range map[string]store.TransactionStatus{"a1": store.TxSucceeded, "a2": store.TxFailed, "bad": store.TxFailed, "b": store.TxSucceeded} {
		id := ids[name]
		if got := waitStatus(t, func() store.TransactionStatus { return q.get(id).status }, store.TxSucceeded, store.TxFailed); got != want {
			t.Fatalf("job %s: %s, want %s", name, got, want)
		}
	}
	if j := q.get(ids["a2"]); j.err != "two is refused" {
		t.Fatalf("failed job's error: %q", j.err)
	}
	r.Stop()
	if j := q.get(ids["unknown"]); j.status != store.TxQueued {
		t.Fatalf("job of an unregistered kind: %s", j.status)
	}
	mu.Lock()
	defer mu.Unlock()
	slices.Sort(seen)
	if want := []string{"A1", "A2", `B"x"`}; !slices.Equal(seen, want) {
		t.Fatalf("handlers saw %v, want %v", seen, want)
	}
}

// TestRunnerRegister checks that registering a kind twice, or after the
// runner started, panics.
func TestRunnerRegister(t *testing.T) {
	nop := func(context.Context, json.RawMessage) error { return nil }
	for _, tc := range []struct {
		name string
		do   func(r *coord.Runner)
	}{
		{"Twice", func(r *coord.Runner) { r.Register("A", nop); r.Register("A", nop) }},
		{"AfterStart", func(r *coord.Runner) { r.Start(); defer r.Stop(); r.Register("A", nop) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("no panic")
				}
			}()
			tc.do(newRunner(&fakeJobs{}, nil))
		})
	}
}

// TestRunnerStopRequeues stops the runner while a job runs: the job goes
// back in the queue instead of failing, and the next runner finishes it.
func TestRunnerStopRequeues(t *testing.T) {
	q := &fakeJobs{}
	started := make(chan struct{}, 1)
	r := newRunner(q, nil)
	r.Register("slow", func(ctx context.Context, _ json.RawMessage) error {
		started <- struct{}{}
		<-ctx.Done()
		return ctx.Err()
	})
	id := q.queue("slow", `{}`)
	r.Start()
	select {
	case <-started:
	case <-time.After(30 * time.Second):
		t.Fatal("the job did not start")
	}
	r.Stop()
	if j := q.get(id); j.status != store.TxQueued {
		t.Fatalf("after Stop the job is %s (%q), want Queued", j.status, j.err)
	}

	r2 := newRunner(q, nil)
	r2.Register("slow", func(context.Context, json.RawMessage) error { return nil })
	r2.Start()
	defer r2.Stop()
	waitStatus(t, func() store.TransactionStatus { return q.get(id).status }, store.TxSucceeded)
}

// TestStoreWakesRunner runs the store's own job kinds against a SQLite
// store whose OnJobQueued hook is the runner's signal, with polling off:
// only the hook can wake the runner. Dropping a table lancens owns queues
// the deletion of its location; the runner must remove it.
func TestStoreWakesRunner(t *testing.T) {
	sig := coord.NewSignal()
	e := newEnv(t, sqlite.Options{OnJobQueued: sig.Notify})
	ctx := t.Context()
	r := newRunner(e.db, sig)
	r.Poll = time.Hour
	coord.RegisterStoreJobs(r, e.withEngine(t), e.wh)
	r.Start()
	defer r.Stop()

	loc := e.declare(t, "t")
	if err := os.MkdirAll(filepath.Join(loc, "_versions"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.db.DropTable(ctx, []string{"t"}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := os.Stat(loc)
		if errors.Is(err, os.ErrNotExist) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the declared location is still there: %v", err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

var _ coord.JobStore = (*engine.Engine)(nil)
var _ coord.DataRemover = (*warehouse.Warehouse)(nil)
