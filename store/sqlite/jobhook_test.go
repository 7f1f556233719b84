package sqlite_test

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancens/lancens/internal/arrowtest"
	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/store/sqlite"
)

// TestOnJobQueued checks that the store calls Options.OnJobQueued after
// each commit that queues a job, whichever operation queued it, and not
// after writes that queue none or fail.
func TestOnJobQueued(t *testing.T) {
	schema := arrowtest.Schema("id", arrow.PrimitiveTypes.Int64, "text", arrow.BinaryTypes.String,
		"vector", arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Float32))
	data := func(t *testing.T) store.Data {
		rows := `[{"id":1,"text":"a","vector":[1,0]},{"id":2,"text":"b","vector":[0,1]}]`
		return store.NewData(schema, arrowtest.Record(t, schema, rows))
	}
	managed := func(t *testing.T, ctx context.Context, db *sqlite.DB) {
		t.Helper()
		if _, _, err := db.CreateTable(ctx, []string{"m"}, store.NewTable{Data: data(t)}); err != nil {
			t.Fatal(err)
		}
	}
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
		// Creating a managed table over an owned declaration queues the
		// deletion of the declared location's data.
		{"CreateOverOwnedDeclaration", declare(true), func(t *testing.T, ctx context.Context, db *sqlite.DB) error {
			_, _, err := db.CreateTable(ctx, []string{"d"}, store.NewTable{Data: data(t)})
			return err
		}, 1},
		{"CreateVectorIndex", managed, func(t *testing.T, ctx context.Context, db *sqlite.DB) error {
			_, err := db.CreateIndex(ctx, []string{"m"}, store.IndexSpec{Column: "vector", Type: store.IndexIVFFlat})
			return err
		}, 1},
		// A full-text index is built in the request: no job.
		{"CreateFullTextIndex", managed, func(t *testing.T, ctx context.Context, db *sqlite.DB) error {
			_, err := db.CreateIndex(ctx, []string{"m"}, store.IndexSpec{Column: "text", Type: store.IndexInverted})
			return err
		}, 0},
		{"CreateIndexFails", managed, func(t *testing.T, ctx context.Context, db *sqlite.DB) error {
			_, err := db.CreateIndex(ctx, []string{"m"}, store.IndexSpec{Column: "missing", Type: store.IndexIVFFlat})
			if store.ErrorCode(err) != store.CodeTableColumnNotFound {
				t.Fatalf("index on a missing column: %v", err)
			}
			return nil
		}, 0},
		{"QueueBackfill", func(t *testing.T, ctx context.Context, db *sqlite.DB) {
			managed(t, ctx, db)
			if _, err := db.AddColumns(ctx, []string{"m"}, []store.NewColumn{{Name: "twice", Expr: "id * 2", Computed: true}}); err != nil {
				t.Fatal(err)
			}
		}, func(t *testing.T, ctx context.Context, db *sqlite.DB) error {
			_, err := db.QueueBackfill(ctx, []string{"m"}, "twice", "")
			return err
		}, 1},
		{"InsertQueuesNothing", managed, func(t *testing.T, ctx context.Context, db *sqlite.DB) error {
			_, err := db.Insert(ctx, []string{"m"}, store.InsertAppend, data(t))
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
