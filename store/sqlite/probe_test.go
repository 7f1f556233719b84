package sqlite

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/lancens/lancens/store"
)

// TestProbe checks the store's answers to operators: ready only while every
// migration is recorded, pending jobs by kind and status (finished ones left
// out), and a size that counts the write-ahead log.
func TestProbe(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "lancens.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			db.Close()
		}
	}()
	if err := db.Ready(ctx); err != nil {
		t.Fatalf("a freshly opened database is not ready: %v", err)
	}
	size, err := db.SizeBytes(ctx)
	if err != nil || size <= 0 {
		t.Fatalf("size %d, %v", size, err)
	}

	queue := func(kind string, status store.TransactionStatus) {
		t.Helper()
		if err := db.write(ctx, func(tx *Tx) error {
			_, err := db.ops.RecordTx(ctx, catalogTx{tx}, kind, nil, status, nil, struct{}{})
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	queue(store.JobBuildIndex, store.TxQueued)
	queue(store.JobBuildIndex, store.TxQueued)
	queue(store.JobBuildIndex, store.TxRunning)
	queue(store.JobBackfillColumn, store.TxSucceeded)
	queue(store.JobDeleteTableData, store.TxFailed)
	counts, err := db.PendingJobs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []store.JobCount{{Kind: store.JobBuildIndex, Status: store.TxQueued, Count: 2}, {Kind: store.JobBuildIndex, Status: store.TxRunning, Count: 1}}
	if !slices.Equal(counts, want) {
		t.Fatalf("pending jobs %+v, want %+v", counts, want)
	}
	grown, err := db.SizeBytes(ctx)
	if err != nil || grown <= size {
		t.Fatalf("size after writes %d (before %d), %v", grown, size, err)
	}

	if err := db.base.ExecOnWriter(ctx, `DELETE FROM schema_migrations WHERE name = (SELECT max(name) FROM schema_migrations)`); err != nil {
		t.Fatal(err)
	}
	if err := db.Ready(ctx); err == nil {
		t.Fatal("ready with a migration missing")
	}
	closed = true
	db.Close()
	if err := db.Ready(ctx); err == nil {
		t.Fatal("ready after Close")
	}
}
