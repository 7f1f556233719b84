package postgres_test

import (
	"context"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lancens/lancens/coord"
	"github.com/lancens/lancens/internal/testkit/pgtest"
	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/store/postgres"
)

// wakeWait bounds how long a test waits for a wake-up. It is far below the
// job runner's poll in these tests (a minute), so a job that runs within
// it ran because of a wake-up, yet long enough for a loaded machine.
const wakeWait = 15 * time.Second

// TestOnJobQueued checks that the store calls Options.OnJobQueued once
// after each of its commits that queues a job, whichever operation queued
// it, and not after writes that queue none or fail.
func TestOnJobQueued(t *testing.T) {
	url := pgtest.Database(t)
	var calls atomic.Int64
	db := open(t, url, postgres.Options{OnJobQueued: func() { calls.Add(1) }})
	declare := func(owned bool) func(*testing.T, context.Context) {
		return func(t *testing.T, ctx context.Context) {
			t.Helper()
			if _, _, err := db.DeclareTable(ctx, []string{"d"}, store.TableDeclaration{Location: "s3://bucket/d", Owned: owned}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// claimedJob queues a deletion and claims it.
	var claimedID string
	claimedJob := func(t *testing.T, ctx context.Context) {
		t.Helper()
		declare(true)(t, ctx)
		_, txID, err := db.DropTable(ctx, []string{"d"})
		if err != nil {
			t.Fatal(err)
		}
		if job, err := db.ClaimJob(ctx, store.JobDeleteTableData); err != nil || job == nil || job.TransactionID != txID {
			t.Fatalf("claim: %+v, %v", job, err)
		}
		claimedID = txID
	}
	queued := store.TxQueued
	for _, tc := range []struct {
		name  string
		setup func(*testing.T, context.Context)
		op    func(context.Context) error
		want  int64
	}{
		{"DropOwnedTable", declare(true), func(ctx context.Context) error {
			_, _, err := db.DropTable(ctx, []string{"d"})
			return err
		}, 1},
		{"DropTableNotOwned", declare(false), func(ctx context.Context) error {
			_, _, err := db.DropTable(ctx, []string{"d"})
			return err
		}, 0},
		{"DeclareTable", func(*testing.T, context.Context) {}, func(ctx context.Context) error {
			_, _, err := db.DeclareTable(ctx, []string{"d"}, store.TableDeclaration{Location: "s3://bucket/d", Owned: true})
			return err
		}, 0},
		// The drop fails: the table is missing.
		{"DropFails", func(*testing.T, context.Context) {}, func(ctx context.Context) error {
			if _, _, err := db.DropTable(ctx, []string{"d"}); store.ErrorCode(err) != store.CodeTableNotFound {
				t.Errorf("drop of a missing table: %v", err)
			}
			return nil
		}, 0},
		{"AlterTransactionToQueued", declare(false), func(ctx context.Context) error {
			_, txID, err := db.DropTable(ctx, []string{"d"})
			if err != nil {
				return err
			}
			_, err = db.AlterTransaction(ctx, []string{txID}, []store.TransactionAction{{SetStatus: &queued}})
			return err
		}, 1},
		{"AlterTransactionProperty", declare(false), func(ctx context.Context) error {
			_, txID, err := db.DropTable(ctx, []string{"d"})
			if err != nil {
				return err
			}
			_, err = db.AlterTransaction(ctx, []string{txID}, []store.TransactionAction{{SetProperty: &store.PropertyChange{Key: "k", Value: "v"}}})
			return err
		}, 0},
		{"ReleaseJob", claimedJob, func(ctx context.Context) error { return db.ReleaseJob(ctx, claimedID) }, 1},
		{"FinishJob", claimedJob, func(ctx context.Context) error { return db.FinishJob(ctx, claimedID, nil) }, 0},
		// The job runs under a live lease: nothing to recover.
		{"RecoverNothing", claimedJob, func(ctx context.Context) error {
			n, err := db.RecoverJobs(ctx)
			if n != 0 {
				t.Errorf("RecoverJobs requeued %d jobs under a live lease", n)
			}
			return err
		}, 0},
		// A replica that claimed the job died; its lease has run out.
		{"RecoverExpired", func(t *testing.T, ctx context.Context) {
			declare(true)(t, ctx)
			if _, _, err := db.DropTable(ctx, []string{"d"}); err != nil {
				t.Fatal(err)
			}
			const lease = 300 * time.Millisecond
			dead, err := postgres.Open(ctx, url, postgres.Options{JobLease: lease})
			if err != nil {
				t.Fatal(err)
			}
			if job, err := dead.ClaimJob(ctx, store.JobDeleteTableData); err != nil || job == nil {
				t.Fatalf("claim: %+v, %v", job, err)
			}
			dead.Close()
			time.Sleep(lease + 200*time.Millisecond)
		}, func(ctx context.Context) error {
			n, err := db.RecoverJobs(ctx)
			if n != 1 {
				t.Errorf("RecoverJobs requeued %d jobs, want 1", n)
			}
			return err
		}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			// A job an earlier case claimed and left running holds the
			// location of table d until it finishes.
			if claimedID != "" {
				if err := db.FinishJob(ctx, claimedID, nil); err != nil && store.ErrorCode(err) != store.CodeTransactionNotFound {
					t.Fatal(err)
				}
				claimedID = ""
			}
			emptyQueue(t, db)
			tc.setup(t, ctx)
			before := calls.Load()
			if err := tc.op(ctx); err != nil {
				t.Fatal(err)
			}
			if got := calls.Load() - before; got != tc.want {
				t.Fatalf("OnJobQueued called %d times, want %d", got, tc.want)
			}
		})
	}
}

// emptyQueue drops table d, if there, and finishes every job queued.
func emptyQueue(t *testing.T, db *postgres.DB) {
	t.Helper()
	ctx := t.Context()
	if _, _, err := db.DropTable(ctx, []string{"d"}); err != nil && store.ErrorCode(err) != store.CodeTableNotFound {
		t.Fatal(err)
	}
	for {
		job, err := db.ClaimJob(ctx, store.JobDeleteTableData)
		if err != nil {
			t.Fatal(err)
		}
		if job == nil {
			return
		}
		if err := db.FinishJob(ctx, job.TransactionID, nil); err != nil {
			t.Fatal(err)
		}
	}
}

// TestJobWakeupAcrossReplicas checks that a job queued through one replica
// is started by another at once, not at its next poll: replica b's job
// runner polls once a minute, and only b's listening connection can wake
// it. The replica that queued the job is woken by its own commit alone,
// not also by its own notification.
func TestJobWakeupAcrossReplicas(t *testing.T) {
	url := pgtest.Database(t)
	var aCalls atomic.Int64
	a := open(t, url, postgres.Options{OnJobQueued: func() { aCalls.Add(1) }})
	queued := coord.NewSignal()
	b := open(t, url, postgres.Options{OnJobQueued: queued.Notify})
	idle := make(chan struct{}, 1)
	runner := coord.NewRunner(idleJobs{b, idle}, queued, slog.New(slog.NewTextHandler(io.Discard, nil)))
	runner.Poll = time.Minute
	started := make(chan store.DeleteTableData, 1)
	runner.Register(store.JobDeleteTableData, coord.Decode(func(_ context.Context, p store.DeleteTableData) error {
		started <- p
		return nil
	}))
	runner.Start()
	defer runner.Stop()
	// The runner looks for jobs once as it starts; let it find none first,
	// so that only a wake-up makes it look again within its poll.
	select {
	case <-idle:
	case <-time.After(wakeWait):
		t.Fatalf("b's runner did not look for jobs within %v of starting", wakeWait)
	}

	begin := time.Now()
	txID := queueDeletion(t, a, "gone")
	select {
	case p := <-started:
		if p.Location != "s3://bucket/gone" {
			t.Fatalf("b ran the deletion of %q", p.Location)
		}
		t.Logf("b started the job %v after a queued it", time.Since(begin))
	case <-time.After(wakeWait):
		t.Fatalf("b did not start the job queued through a within %v (its poll is %v)", wakeWait, runner.Poll)
	}
	deadline := time.Now().Add(wakeWait)
	for {
		tx, err := a.DescribeTransaction(t.Context(), []string{txID})
		if err != nil {
			t.Fatal(err)
		}
		if tx.Status == store.TxSucceeded {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the job is %s after b ran it", tx.Status)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// b has received the notification, and so has a's listening
	// connection by now: a must not have counted its own.
	if got := aCalls.Load(); got != 1 {
		t.Fatalf("a's OnJobQueued called %d times for the one job it queued, want 1", got)
	}
}

// idleJobs is a job queue that signals on idle each time ClaimJob finds no
// job (dropping the signal when one is pending already).
type idleJobs struct {
	store.Jobs
	idle chan<- struct{}
}

func (q idleJobs) ClaimJob(ctx context.Context, kinds ...string) (*store.Job, error) {
	job, err := q.Jobs.ClaimJob(ctx, kinds...)
	if job == nil && err == nil {
		select {
		case q.idle <- struct{}{}:
		default:
		}
	}
	return job, err
}

// TestListenReconnects checks that a replica whose listening connection is
// cut (the server ends its session) connects again, wakes its runner then
// (notifications sent meanwhile are lost), and gets later notifications.
func TestListenReconnects(t *testing.T) {
	url := pgtest.Database(t)
	ctx := t.Context()
	a := open(t, url, postgres.Options{})
	wakes := make(chan struct{}, 16)
	open(t, url, postgres.Options{OnJobQueued: func() { wakes <- struct{}{} }})
	admin, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())
	// listener returns the pid of the session listening for jobs (b's:
	// a listens for none).
	listener := func() int {
		t.Helper()
		rows, err := admin.Query(ctx, `SELECT pid FROM pg_stat_activity
			WHERE datname = current_database() AND query LIKE 'LISTEN %' AND pid <> pg_backend_pid()`)
		if err != nil {
			t.Fatal(err)
		}
		pids, err := pgx.CollectRows(rows, pgx.RowTo[int])
		if err != nil {
			t.Fatal(err)
		}
		if len(pids) != 1 {
			t.Fatalf("%d listening sessions, want 1", len(pids))
		}
		return pids[0]
	}
	wake := func(what string) {
		t.Helper()
		select {
		case <-wakes:
		case <-time.After(wakeWait):
			t.Fatalf("no wake-up %s within %v", what, wakeWait)
		}
	}

	queueDeletion(t, a, "before")
	wake("for a job queued before the cut")
	old := listener()
	var ended bool
	if err := admin.QueryRow(ctx, `SELECT pg_terminate_backend($1)`, old).Scan(&ended); err != nil || !ended {
		t.Fatalf("terminate the listening session: %v, %v", ended, err)
	}
	wake("after connecting again")
	if now := listener(); now == old {
		t.Fatalf("the listening session is still %d", old)
	}
	select {
	case <-wakes:
		t.Fatal("a wake-up without a queued job")
	case <-time.After(100 * time.Millisecond):
	}
	queueDeletion(t, a, "after")
	wake("for a job queued after the cut")
}
