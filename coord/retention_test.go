package coord_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancens/lancens/coord"
	"github.com/lancens/lancens/internal/testkit/arrowtest"
	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/store/sqlite"
)

// TestRetentionCleansUpInTheBackground runs Retention over the Lance engine
// on a SQLite store with the store's job kinds on a runner: the versions
// of a table lancens writes
// older than the retention period go on their own, except the latest and a
// tagged one.
func TestRetentionCleansUpInTheBackground(t *testing.T) {
	sig := coord.NewSignal()
	e := newEnv(t, sqlite.Options{OnJobQueued: sig.Notify})
	ctx := t.Context()
	b := e.withEngine(t)
	id := []string{"t"}
	schema := arrowtest.Schema("id", arrow.PrimitiveTypes.Int64)
	data := store.NewData(schema, arrowtest.Record(t, schema, `[{"id":1},{"id":2}]`))
	if _, _, err := b.CreateTable(ctx, id, store.NewTable{Data: data}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := b.Update(ctx, id, []store.ColumnUpdate{{Path: "id", Expr: "id + 10"}}, "true"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.db.CreateTag(ctx, id, "keep", "", 2); err != nil {
		t.Fatal(err)
	}
	r := newRunner(e.db, sig)
	coord.RegisterStoreJobs(r, b, e.wh)
	r.Start()
	defer r.Stop()
	// A period of a millisecond: every version is old enough by the time
	// the first look runs.
	time.Sleep(2 * time.Millisecond)
	ret := coord.NewRetention(b, time.Millisecond, slog.New(slog.DiscardHandler))
	ret.Interval = 10 * time.Millisecond
	ret.Start()
	defer ret.Stop()

	kept := map[int64]bool{2: true, 4: true}
	deadline := time.Now().Add(30 * time.Second)
	for {
		gone := 0
		for v := int64(1); v <= 4; v++ {
			_, _, err := b.CountRows(ctx, id, &v, "")
			switch {
			case kept[v] && err != nil:
				t.Fatalf("kept version %d: %v", v, err)
			case store.ErrorCode(err) == store.CodeTableVersionNotFound:
				gone++
			}
		}
		if gone == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of versions 1 and 3 removed after 30 s", gone)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
