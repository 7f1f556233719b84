package engine_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancens/lancens/engine"
	"github.com/lancens/lancens/internal/pgtest"
	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/store/postgres"
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
	return store.Data{Schema: idSchema, Batches: []arrow.RecordBatch{b.NewRecordBatch()}}
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
