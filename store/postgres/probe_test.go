package postgres_test

import (
	"slices"
	"testing"

	"github.com/lancens/lancens/internal/testkit/pgtest"
	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/store/postgres"
)

// TestProbe checks what the store tells operators: ready once migrated, the
// database's size, and the jobs pending by kind and status.
func TestProbe(t *testing.T) {
	ctx := t.Context()
	db := open(t, pgtest.Database(t), postgres.Options{})
	if err := db.Ready(ctx); err != nil {
		t.Fatalf("a migrated database is not ready: %v", err)
	}
	if size, err := db.SizeBytes(ctx); err != nil || size <= 0 {
		t.Fatalf("size %d, %v", size, err)
	}
	if counts, err := db.PendingJobs(ctx); err != nil || len(counts) != 0 {
		t.Fatalf("pending jobs of an empty database: %v, %v", counts, err)
	}
	for _, name := range []string{"a", "b"} {
		if _, _, err := db.DeclareTable(ctx, []string{name}, store.TableDeclaration{Location: "/wh/" + name, Owned: true}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := db.DropTable(ctx, []string{name}); err != nil {
			t.Fatal(err)
		}
	}
	counts, err := db.PendingJobs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []store.JobCount{{Kind: store.JobDeleteTableData, Status: store.TxQueued, Count: 2}}
	if !slices.Equal(counts, want) {
		t.Fatalf("pending jobs %+v, want %+v", counts, want)
	}
	db.Close()
	if err := db.Ready(ctx); err == nil {
		t.Fatal("ready after Close")
	}
}
