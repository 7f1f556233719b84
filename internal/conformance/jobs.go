package conformance

import (
	"context"
	"errors"
	"log/slog"

	"github.com/lancens/lancens/coord"
	"github.com/lancens/lancens/store"
)

// InlineJobs returns st with the work it queues done before the queuing
// call returns: vector index builds after CreateIndex, column backfills
// after QueueBackfill and view refreshes after QueueRefresh, by the
// handlers a server's job runner uses in the background
// (coord.RegisterStoreJobs). It is how the suite tests a store directly.
// Deletions of dropped tables' data stay queued.
func InlineJobs(st store.ManagedBackend) store.ManagedBackend {
	r := coord.NewRunner(st, nil, slog.New(slog.DiscardHandler))
	coord.RegisterStoreJobs(r, st, nil)
	return inlineJobs{st, r}
}

type inlineJobs struct {
	store.ManagedBackend
	runner *coord.Runner
}

// CreateIndex records the index and builds it.
func (s inlineJobs) CreateIndex(ctx context.Context, id []string, spec store.IndexSpec) (string, error) {
	return s.drained(ctx)(s.ManagedBackend.CreateIndex(ctx, id, spec))
}

// QueueBackfill queues the backfill and runs it.
func (s inlineJobs) QueueBackfill(ctx context.Context, id []string, column, where string) (string, error) {
	return s.drained(ctx)(s.ManagedBackend.QueueBackfill(ctx, id, column, where))
}

// QueueRefresh queues the refresh of a view and runs it.
func (s inlineJobs) QueueRefresh(ctx context.Context, id []string, sourceVersion *int64) (string, error) {
	return s.drained(ctx)(s.ManagedBackend.QueueRefresh(ctx, id, sourceVersion))
}

// drained returns a function that passes on the transaction id and error
// of a call that queued work, having run the work when the call succeeded.
func (s inlineJobs) drained(ctx context.Context) func(string, error) (string, error) {
	return func(txID string, err error) (string, error) {
		if err != nil {
			return "", err
		}
		return txID, s.drain(ctx)
	}
}

// drain runs the queued jobs of the runner's kinds; a job's own failure is
// recorded in its transaction, as the job runner records it. It returns an
// error only when the queue itself fails.
func (s inlineJobs) drain(ctx context.Context) error {
	for {
		job, err := s.ClaimJob(ctx, s.runner.Kinds()...)
		if err != nil || job == nil {
			return err
		}
		if err := s.FinishJob(ctx, job.TransactionID, s.runner.Run(ctx, job)); err != nil {
			return err
		}
	}
}

// jobsTarget is a target with a queue of deferred work.
type jobsTarget interface {
	store.Catalog
	store.Jobs
}

// queueDeletion declares a table at location that lancens owns and drops
// it, which queues the deletion of its data; it returns the job's
// transaction id.
func queueDeletion(t T, tg store.Catalog, name, location string) string {
	t.Helper()
	must3(tg.DeclareTable(ctx(t), []string{name}, store.TableDeclaration{Location: location, Owned: true}))(t)
	_, txID, err := tg.DropTable(ctx(t), []string{name})
	noErr(t, err)
	if txID == "" {
		t.Fatalf("dropping an owned table returned no transaction")
	}
	return txID
}

// claim claims the queued JobDeleteTableData of transaction txID. Other
// jobs of that kind it claims first (left by earlier cases in a store the
// cases share) are finished as succeeded.
func claim(t T, tg jobsTarget, txID string) *store.Job {
	t.Helper()
	for {
		job := must(tg.ClaimJob(ctx(t), store.JobDeleteTableData))(t)
		if job == nil {
			t.Fatalf("the job of transaction %s was not there to claim", txID)
		}
		if job.TransactionID == txID {
			return job
		}
		noErr(t, tg.FinishJob(ctx(t), job.TransactionID, nil))
	}
}

// status returns the status of transaction txID.
func status(t T, tg store.Catalog, txID string) *store.Transaction {
	t.Helper()
	return must(tg.DescribeTransaction(ctx(t), []string{txID}))(t)
}

func (s *suite) jobs(t T) {
	Subtest(t, "ClaimReleaseFinish", func(t T) {
		tg := implementing[jobsTarget](t, s.target(t), "Jobs")
		txID := queueDeletion(t, tg, "old", remote("jobs/old"))
		if got := status(t, tg, txID); got.Status != store.TxQueued {
			t.Fatalf("the queued deletion is %s, want Queued", got.Status)
		}
		job := claim(t, tg, txID)
		if job.Kind != store.JobDeleteTableData || len(job.Payload) == 0 {
			t.Fatalf("claimed %+v", job)
		}
		if got := status(t, tg, txID); got.Status != store.TxRunning {
			t.Fatalf("the claimed job is %s, want Running", got.Status)
		}
		noErr(t, tg.ReleaseJob(ctx(t), txID))
		if got := status(t, tg, txID); got.Status != store.TxQueued {
			t.Fatalf("the released job is %s, want Queued", got.Status)
		}
		claim(t, tg, txID)
		noErr(t, tg.FinishJob(ctx(t), txID, errors.New("the store is down")))
		if got := status(t, tg, txID); got.Status != store.TxFailed || got.Properties["error"] != "the store is down" {
			t.Fatalf("the failed job is %s with properties %v, want Failed with its error", got.Status, got.Properties)
		}
		wantCode(t, tg.FinishJob(ctx(t), txID, nil), store.CodeTransactionNotFound)
		wantCode(t, tg.ReleaseJob(ctx(t), txID), store.CodeTransactionNotFound)
		if job := must(tg.ClaimJob(ctx(t), "NoSuchKind"))(t); job != nil {
			t.Fatalf("claimed %+v of a kind nobody queued", job)
		}
	})

	// A table at the location of a dropped table whose data lancens
	// deletes would lose its files to that deletion: the location stays
	// taken while the deletion is queued or running, and is free again
	// once it has finished, succeeded or failed.
	Subtest(t, "DeletionHoldsLocation", func(t T) {
		tg := implementing[jobsTarget](t, s.target(t), "Jobs")
		for _, outcome := range []error{nil, errors.New("the store is down")} {
			txID := queueDeletion(t, tg, "old", remote("wh/a.lance"))
			refused := func(stage string) {
				t.Helper()
				for _, loc := range []string{remote("wh/a.lance"), remote("wh/a.lance/sub"), remote("wh")} {
					_, _, err := tg.DeclareTable(ctx(t), []string{"new"}, store.TableDeclaration{Location: loc})
					wantCode(t, err, store.CodeInvalidInput)
					_, _, err = tg.RegisterTable(ctx(t), []string{"new"}, store.TableRegistration{Location: loc})
					wantCode(t, err, store.CodeInvalidInput)
				}
			}
			refused("queued")
			// Another place in the warehouse is free.
			must3(tg.DeclareTable(ctx(t), []string{"other"}, store.TableDeclaration{Location: remote("wh/a.lance2")}))(t)
			claim(t, tg, txID)
			refused("running")
			noErr(t, tg.FinishJob(ctx(t), txID, outcome))
			must3(tg.DeclareTable(ctx(t), []string{"new"}, store.TableDeclaration{Location: remote("wh/a.lance")}))(t)
			for _, name := range []string{"new", "other"} {
				must3(tg.DeregisterTable(ctx(t), []string{name}))(t)
			}
		}
	})
}
