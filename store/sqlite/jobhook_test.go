package sqlite_test

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/store/sqlite"
)

// TestOnJobQueued checks that the store calls Options.OnJobQueued after
// each commit that queues a job, whichever operation queued it, and not
// after writes that queue none or fail.
func TestOnJobQueued(t *testing.T) {
	declare := func(owned bool) func(*testing.T, context.Context, *sqlite.DB) {
		return func(t *testing.T, ctx context.Context, db *sqlite.DB) {
			t.Helper()
			if _, _, err := db.DeclareTable(ctx, []string{"d"}, store.TableDeclaration{Location: t.TempDir(), Owned: owned}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, tc := range []struct {
		name  string
		setup func(*testing.T, context.Context, *sqlite.DB)
		op    func(*testing.T, context.Context, *sqlite.DB) error
		want  int64
	}{
		{"DropOwnedTable", declare(true), func(t *testing.T, ctx context.Context, db *sqlite.DB) error {
			_, _, err := db.DropTable(ctx, []string{"d"})
			return err
		}, 1},
		{"DropTableNotOwned", declare(false), func(t *testing.T, ctx context.Context, db *sqlite.DB) error {
			_, _, err := db.DropTable(ctx, []string{"d"})
			return err
		}, 0},
		{"CreateNamespaceQueuesNothing", func(*testing.T, context.Context, *sqlite.DB) {}, func(t *testing.T, ctx context.Context, db *sqlite.DB) error {
			_, err := db.CreateNamespace(ctx, []string{"ns"}, store.ModeCreate, nil)
			return err
		}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int64
			db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "lancens.db"), sqlite.Options{OnJobQueued: func() { calls.Add(1) }})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			ctx := t.Context()
			tc.setup(t, ctx, db)
			before := calls.Load()
			if err := tc.op(t, ctx, db); err != nil {
				t.Fatal(err)
			}
			if got := calls.Load() - before; got != tc.want {
				t.Fatalf("OnJobQueued called %d times, want %d", got, tc.want)
			}
		})
	}
}
