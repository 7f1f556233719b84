package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lancens/lancens/internal/testkit/pgtest"
	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/store/postgres"
)

// queueDeletion drops an owned table, which queues a job deleting its
// data, and returns the job's transaction id.
func queueDeletion(t *testing.T, db *postgres.DB, name string) string {
	t.Helper()
	ctx := t.Context()
	if _, _, err := db.DeclareTable(ctx, []string{name}, store.TableDeclaration{Location: "s3://bucket/" + name, Owned: true}); err != nil {
		t.Fatal(err)
	}
	_, txID, err := db.DropTable(ctx, []string{name})
	if err != nil {
		t.Fatal(err)
	}
	return txID
}

// TestJobLeases checks that each queued job goes to one replica, that a
// replica that dies mid-job (its store closed without finishing) leaves the
// job to be claimed again once its lease runs out and not before, that a
// live replica's renewed lease keeps the job its own, and that a replica
// that lost its job cannot record its outcome.
func TestJobLeases(t *testing.T) {
	url := pgtest.Database(t)
	const lease = 600 * time.Millisecond
	ctx := t.Context()
	a, err := postgres.Open(ctx, url, postgres.Options{JobLease: lease})
	if err != nil {
		t.Fatal(err)
	}
	b := open(t, url, postgres.Options{JobLease: lease})
	c := open(t, url, postgres.Options{JobLease: lease})
	first := queueDeletion(t, b, "first")

	job, err := a.ClaimJob(ctx, store.JobDeleteTableData)
	if err != nil || job == nil || job.TransactionID != first {
		t.Fatalf("a claims %+v, %v; want job %s", job, err, first)
	}
	if job, err := b.ClaimJob(ctx, store.JobDeleteTableData); err != nil || job != nil {
		t.Fatalf("b claims %+v, %v while a holds the only job", job, err)
	}
	// a dies: nothing renews its lease.
	a.Close()
	if job, err := b.ClaimJob(ctx, store.JobDeleteTableData); err != nil || job != nil {
		t.Fatalf("b claims %+v, %v before a's lease ran out", job, err)
	}
	if tx, err := b.DescribeTransaction(ctx, []string{first}); err != nil || tx.Status != store.TxRunning {
		t.Fatalf("the dead replica's job is %+v, %v; want Running", tx, err)
	}
	time.Sleep(lease + 200*time.Millisecond)
	job, err = b.ClaimJob(ctx, store.JobDeleteTableData)
	if err != nil || job == nil || job.TransactionID != first {
		t.Fatalf("after the lease, b claims %+v, %v; want job %s", job, err, first)
	}
	// b renews its lease while it holds the job: c cannot take it.
	time.Sleep(2 * lease)
	if job, err := c.ClaimJob(ctx, store.JobDeleteTableData); err != nil || job != nil {
		t.Fatalf("c claims %+v, %v while b renews its lease", job, err)
	}
	if err := c.FinishJob(ctx, first, nil); store.ErrorCode(err) != store.CodeTransactionNotFound {
		t.Fatalf("c finishing b's job: %v, want code 10", err)
	}
	if err := b.FinishJob(ctx, first, errors.New("disk gone")); err != nil {
		t.Fatal(err)
	}
	tx, err := c.DescribeTransaction(ctx, []string{first})
	if err != nil || tx.Status != store.TxFailed || tx.Properties["error"] != "disk gone" {
		t.Fatalf("finished job is %+v, %v", tx, err)
	}

	// A job released by a stopping replica is queued again at once; one
	// left running by a dead one is requeued by RecoverJobs once its
	// lease has run out.
	second := queueDeletion(t, b, "second")
	if job, err := b.ClaimJob(ctx, store.JobDeleteTableData); err != nil || job == nil || job.TransactionID != second {
		t.Fatalf("b claims %+v, %v", job, err)
	}
	if err := b.ReleaseJob(ctx, second); err != nil {
		t.Fatal(err)
	}
	d, err := postgres.Open(ctx, url, postgres.Options{JobLease: lease})
	if err != nil {
		t.Fatal(err)
	}
	if job, err := d.ClaimJob(ctx, store.JobDeleteTableData); err != nil || job == nil || job.TransactionID != second {
		t.Fatalf("d claims %+v, %v after b released it", job, err)
	}
	d.Close()
	if n, err := c.RecoverJobs(ctx); err != nil || n != 0 {
		t.Fatalf("RecoverJobs during d's lease requeued %d, %v", n, err)
	}
	time.Sleep(lease + 200*time.Millisecond)
	if n, err := c.RecoverJobs(ctx); err != nil || n != 1 {
		t.Fatalf("RecoverJobs after d's lease requeued %d, %v; want 1", n, err)
	}
	if tx, err := c.DescribeTransaction(ctx, []string{second}); err != nil || tx.Status != store.TxQueued {
		t.Fatalf("recovered job is %+v, %v; want Queued", tx, err)
	}
}

// TestClaimRace has replicas claim a queue of jobs together: each job is
// claimed exactly once.
func TestClaimRace(t *testing.T) {
	url := pgtest.Database(t)
	ctx := t.Context()
	replicas := []*postgres.DB{open(t, url, postgres.Options{}), open(t, url, postgres.Options{}), open(t, url, postgres.Options{})}
	const jobs = 30
	want := map[string]bool{}
	for i := range jobs {
		want[queueDeletion(t, replicas[0], fmt.Sprintf("t%d", i))] = true
	}
	var mu sync.Mutex
	claimed := map[string]int{}
	var wg sync.WaitGroup
	for w := range 6 {
		wg.Go(func() {
			for {
				job, err := replicas[w%len(replicas)].ClaimJob(ctx, store.JobDeleteTableData)
				if err != nil {
					t.Error(err)
					return
				}
				if job == nil {
					return
				}
				mu.Lock()
				claimed[job.TransactionID]++
				mu.Unlock()
				if err := replicas[w%len(replicas)].FinishJob(ctx, job.TransactionID, nil); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	for id := range want {
		if claimed[id] != 1 {
			t.Errorf("job %s claimed %d times", id, claimed[id])
		}
	}
	if len(claimed) != jobs {
		t.Errorf("%d jobs claimed, want %d", len(claimed), jobs)
	}
}

// TestMigrateTogether opens several stores on a new database at once, as
// replicas starting together do: all open, and the migrations ran once.
func TestMigrateTogether(t *testing.T) {
	url := pgtest.Database(t)
	var wg sync.WaitGroup
	errs := make([]error, 6)
	dbs := make([]*postgres.DB, len(errs))
	for i := range errs {
		wg.Go(func() { dbs[i], errs[i] = postgres.Open(t.Context(), url, postgres.Options{}) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("store %d: %v", i, err)
		}
		defer dbs[i].Close()
	}
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var applied, distinct int
	if err := conn.QueryRow(t.Context(), `SELECT count(*), count(DISTINCT name) FROM lancens_migrations`).Scan(&applied, &distinct); err != nil {
		t.Fatal(err)
	}
	if applied == 0 || applied != distinct {
		t.Fatalf("%d migrations recorded for %d names", applied, distinct)
	}
	if _, err := dbs[0].CreateNamespace(t.Context(), []string{"ns"}, store.ModeCreate, nil); err != nil {
		t.Fatal(err)
	}
	if err := dbs[5].NamespaceExists(t.Context(), []string{"ns"}); err != nil {
		t.Fatal(err)
	}
}

// TestRacingDeclares has two replicas declare, over and over, a table and
// a table inside its location, and two tables of one name: never do both
// succeed, and every failure has the code of its rule (13: nested
// locations; 5: the name is taken).
func TestRacingDeclares(t *testing.T) {
	url := pgtest.Database(t)
	ctx := t.Context()
	a, b := open(t, url, postgres.Options{}), open(t, url, postgres.Options{})
	for round := range 20 {
		outer, inner := fmt.Sprintf("outer%d", round), fmt.Sprintf("inner%d", round)
		loc := fmt.Sprintf("s3://bucket/r%d", round)
		var wg sync.WaitGroup
		var errOuter, errInner, errSameA, errSameB error
		wg.Go(func() { _, _, errOuter = a.DeclareTable(ctx, []string{outer}, store.TableDeclaration{Location: loc}) })
		wg.Go(func() {
			_, _, errInner = b.DeclareTable(ctx, []string{inner}, store.TableDeclaration{Location: loc + "/nested"})
		})
		same := fmt.Sprintf("same%d", round)
		wg.Go(func() {
			_, _, errSameA = a.DeclareTable(ctx, []string{same}, store.TableDeclaration{Location: "s3://other/a" + same})
		})
		wg.Go(func() {
			_, _, errSameB = b.DeclareTable(ctx, []string{same}, store.TableDeclaration{Location: "s3://other/b" + same})
		})
		wg.Wait()
		if (errOuter == nil) == (errInner == nil) {
			t.Fatalf("round %d: nested declares gave %v and %v; want exactly one success", round, errOuter, errInner)
		}
		if err := errors.Join(errOuter, errInner); store.ErrorCode(err) != store.CodeInvalidInput {
			t.Fatalf("round %d: nested declare failed with %v, want code 13", round, err)
		}
		if (errSameA == nil) == (errSameB == nil) {
			t.Fatalf("round %d: same-name declares gave %v and %v; want exactly one success", round, errSameA, errSameB)
		}
		if err := errors.Join(errSameA, errSameB); store.ErrorCode(err) != store.CodeTableAlreadyExists {
			t.Fatalf("round %d: same-name declare failed with %v, want code 5", round, err)
		}
	}
}
