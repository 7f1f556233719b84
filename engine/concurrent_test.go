package engine_test

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancens/lancens/engine"
	"github.com/lancens/lancens/internal/testkit/pgtest"
	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/store/postgres"
	"github.com/lancens/lancens/store/sqlite"
	"github.com/lancens/lancens/warehouse"
)

var idSchema = arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "v", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)

// idRows returns rows (id, 0) for ids [from, to).
func idRows(from, to int) store.Data {
	b := array.NewRecordBuilder(memory.DefaultAllocator, idSchema)
	defer b.Release()
	for i := from; i < to; i++ {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.Int64Builder).Append(0)
	}
	return store.NewData(idSchema, b.NewRecordBatch())
}

// TestConcurrentWriters runs two engines as two replicas do (each its own
// connection pool to one PostgreSQL catalog, its own locks and caches, one
// warehouse) writing one table at the same time: appends through both all
// land (rebased on each other), deletes and updates of the same fragment
// conflict and are redone on the newer version, and the catalog's chain of
// versions has no gap.
func TestConcurrentWriters(t *testing.T) {
	ctx := context.Background()
	url := pgtest.Database(t)
	wh, err := warehouse.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var replicas []store.ManagedBackend
	for range 2 {
		db, err := postgres.Open(ctx, url, postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		e, err := engine.New(engine.Options{Catalog: db, Warehouse: wh})
		if err != nil {
			t.Fatal(err)
		}
		replicas = append(replicas, engine.WithBackend(db, e))
	}
	a, b := replicas[0], replicas[1]
	id := []string{"t"}
	if _, _, err := a.CreateTable(ctx, id, store.NewTable{Data: idRows(0, 100)}); err != nil {
		t.Fatal(err)
	}
	run := func(n int, op func(r store.ManagedBackend, i int) error) {
		t.Helper()
		var wg sync.WaitGroup
		errs := make(chan error, 2*n)
		for k, r := range replicas {
			wg.Go(func() {
				for i := range n {
					errs <- op(r, k*n+i)
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	// 2 × 5 appends of 10 rows each.
	run(5, func(r store.ManagedBackend, i int) error {
		_, err := r.Insert(ctx, id, store.InsertAppend, idRows(1000+10*i, 1010+10*i))
		return err
	})
	if n, _, err := b.CountRows(ctx, id, nil, ""); err != nil || n != 200 {
		t.Fatalf("after the appends: %d rows, %v; want 200", n, err)
	}
	// Each replica deletes its own ids of the first fragment, one at a time.
	run(5, func(r store.ManagedBackend, i int) error {
		_, err := r.Delete(ctx, id, fmt.Sprintf("id = %d", i))
		return err
	})
	if n, _, err := a.CountRows(ctx, id, nil, "id < 100"); err != nil || n != 90 {
		t.Fatalf("after the deletes: %d rows of the first fragment, %v; want 90", n, err)
	}
	// Each replica updates its own ids.
	run(5, func(r store.ManagedBackend, i int) error {
		_, err := r.Update(ctx, id, []store.ColumnUpdate{{Path: "v", Expr: "v + 1"}}, fmt.Sprintf("id = %d", 50+i))
		return err
	})
	if n, _, err := b.CountRows(ctx, id, nil, "v = 1"); err != nil || n != 10 {
		t.Fatalf("after the updates: %d rows updated, %v; want 10", n, err)
	}
	vs, _, err := a.ListVersions(ctx, id, "", false, store.Page{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	for _, v := range vs {
		got = append(got, v.Version)
	}
	want := make([]int64, 31) // the create, then 30 writes
	for i := range want {
		want[i] = int64(i + 1)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("versions %v, want 1..31", got)
	}
}

// gatedStream yields its batches, waiting on gate before the last one: an
// upload that arrives slowly.
type gatedStream struct {
	batches []arrow.RecordBatch
	gate    chan struct{}
	next    int
}

func (s *gatedStream) Next() (arrow.RecordBatch, error) {
	if s.next == len(s.batches)-1 {
		<-s.gate
	}
	if s.next >= len(s.batches) {
		return nil, io.EOF
	}
	b := s.batches[s.next]
	s.next++
	b.Retain()
	return b, nil
}

// TestSlowUploadsHoldNoLock checks that writes whose rows are still
// arriving (a merge_insert, an overwrite) do not keep the table's other
// writers waiting for them.
func TestSlowUploadsHoldNoLock(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "lancens.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_, tg := newEngine(t, db)
	id := []string{"t"}
	if _, _, err := tg.CreateTable(ctx, id, store.NewTable{Data: idRows(0, 10)}); err != nil {
		t.Fatal(err)
	}
	for _, slow := range []func(d store.Data) error{
		func(d store.Data) error {
			_, err := tg.MergeInsert(ctx, id, store.Merge{On: []string{"id"}, WhenNotMatchedInsertAll: true, Data: d})
			return err
		},
		func(d store.Data) error {
			_, err := tg.Insert(ctx, id, store.InsertOverwrite, d)
			return err
		},
	} {
		a, b := idRows(100, 110), idRows(110, 120)
		gate := make(chan struct{})
		stream := &gatedStream{gate: gate}
		for _, d := range []store.Data{a, b} {
			rec, _ := d.Batches.Next()
			stream.batches = append(stream.batches, rec)
		}
		done := make(chan error, 1)
		go func() { done <- slow(store.Data{Schema: idSchema, Batches: stream}) }()
		appended := make(chan error, 1)
		go func() {
			_, err := tg.Insert(ctx, id, store.InsertAppend, idRows(1000, 1001))
			appended <- err
		}()
		select {
		case err := <-appended:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("an append waited for another write's upload")
		}
		close(gate)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}
