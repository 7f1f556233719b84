package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancens/lancens/engine"
	"github.com/lancens/lancens/internal/testkit/arrowtest"
	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/store/sqlite"
	"github.com/lancens/lancens/warehouse"
)

// numbers is the schema of the tables of these tests.
var numbers = arrowtest.Schema("id", arrow.PrimitiveTypes.Int64, "v", arrow.PrimitiveTypes.Int64)

// numberRows returns store.Data of rows from..to, v = id.
func numberRows(t *testing.T, from, to int) store.Data {
	t.Helper()
	return store.NewData(numbers, numberBatch(t, from, to))
}

// numberBatch returns rows from..to, v = id.
func numberBatch(t *testing.T, from, to int) arrow.RecordBatch {
	t.Helper()
	var b strings.Builder
	for i := from; i <= to; i++ {
		if i > from {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"id": %d, "v": %d}`, i, i)
	}
	return arrowtest.Record(t, numbers, "["+b.String()+"]")
}

// sqliteEngine returns an engine over a SQLite catalog in a fresh
// directory.
func sqliteEngine(t *testing.T) engine.Backend {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "lancens.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	_, b := newEngine(t, db)
	return b
}

func must[T any](t *testing.T) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func count(t *testing.T, d store.ManagedData, id []string, version *int64, filter string) int64 {
	t.Helper()
	n, _, err := d.CountRows(t.Context(), id, version, filter)
	if err != nil {
		t.Fatalf("count %v at %v: %v", id, version, err)
	}
	return n
}

// dataFiles returns the data files below table id's location.
func dataFiles(t *testing.T, b engine.Backend, id []string) []string {
	t.Helper()
	tbl := must[*store.Table](t)(b.DescribeTable(t.Context(), id))
	dir, ok := warehouse.LocalPath(tbl.Location)
	if !ok {
		t.Fatalf("location %s is not on disk", tbl.Location)
	}
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Base(filepath.Dir(p)) == "data" {
			out = append(out, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestOptimize checks that optimize compacts fragments and drops deleted
// rows as one new version, then removes the old versions and their files,
// and that the table reads as before.
func TestOptimize(t *testing.T) {
	b := sqliteEngine(t)
	ctx := t.Context()
	id := []string{"t"}
	must[store.WriteResult](t)(func() (store.WriteResult, error) {
		_, res, err := b.CreateTable(ctx, id, store.NewTable{Data: numberRows(t, 1, 10)})
		return res, err
	}())
	for i := 1; i < 10; i++ {
		must[store.WriteResult](t)(b.Insert(ctx, id, store.InsertAppend, numberRows(t, 10*i+1, 10*i+10)))
	}
	must[store.WriteResult](t)(b.Delete(ctx, id, "id % 2 = 0"))
	before := must[*store.TableData](t)(b.Describe(ctx, id, nil))
	if before.Fragments != 10 || before.Deleted != 50 || len(dataFiles(t, b, id)) != 10 {
		t.Fatalf("before: %d fragments, %d deleted rows, %d data files", before.Fragments, before.Deleted, len(dataFiles(t, b, id)))
	}
	odd := count(t, b, id, nil, "v > 40")

	res, txID, err := b.Optimize(ctx, id, time.Now().Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if res.FragmentsRemoved != 10 || res.FragmentsAdded != 1 || res.Versions != 11 || res.Rows != 100 || res.BytesFreed == 0 || txID == "" {
		t.Fatalf("optimize: %+v, transaction %q; want 10 fragments into 1, versions 1..11 and their 100 rows gone", res, txID)
	}
	after := must[*store.TableData](t)(b.Describe(ctx, id, nil))
	if after.Version != 12 || after.Fragments != 1 || after.Deleted != 0 || after.NumRows != 50 {
		t.Fatalf("after: %+v", after)
	}
	if n := count(t, b, id, nil, "v > 40"); n != odd {
		t.Fatalf("the optimized table counts %d rows, %d before", n, odd)
	}
	if files := dataFiles(t, b, id); len(files) != 1 {
		t.Fatalf("data files left: %v, want the compacted one", files)
	}
	if _, _, err := b.CountRows(ctx, id, ptr(int64(11)), ""); store.ErrorCode(err) != store.CodeTableVersionNotFound {
		t.Fatalf("a removed version: %v, want code 11", err)
	}
	tx := must[*store.Transaction](t)(b.DescribeTransaction(ctx, []string{txID}))
	if tx.Status != store.TxSucceeded || tx.Properties["fragments_removed"] != "10" {
		t.Fatalf("optimize transaction %+v", tx)
	}
	// Nothing left to do: no version, nothing removed.
	if res, _, err := b.Optimize(ctx, id, time.Now().Add(time.Second)); err != nil || res != (store.CleanupResult{}) {
		t.Fatalf("a second optimize: %+v %v", res, err)
	}
}

func ptr[T any](v T) *T { return &v }

// TestCleanupKeepsBranches checks that cleaning up and compacting main
// leaves a branch's rows readable (its versions reach main's files
// through a base path), and that a branch deleted and made again under
// its name reads its own versions.
func TestCleanupKeepsBranches(t *testing.T) {
	b := sqliteEngine(t)
	ctx := t.Context()
	id := []string{"t"}
	if _, _, err := b.CreateTable(ctx, id, store.NewTable{Data: numberRows(t, 1, 5)}); err != nil {
		t.Fatal(err)
	}
	must[store.WriteResult](t)(b.Insert(ctx, id, store.InsertAppend, numberRows(t, 6, 7))) // v2
	if _, err := b.CreateBranch(ctx, id, "dev", "", ptr(int64(2))); err != nil {
		t.Fatal(err)
	}
	dev := b.OnBranch("dev")
	if res := must[store.WriteResult](t)(dev.Insert(ctx, id, store.InsertAppend, numberRows(t, 100, 100))); res.Version != 3 {
		t.Fatalf("the first write on dev made version %d, want 3", res.Version)
	}
	must[store.WriteResult](t)(b.Delete(ctx, id, "id < 7")) // v3
	must[store.WriteResult](t)(b.Update(ctx, id, []store.ColumnUpdate{{Path: "v", Expr: "0"}}, "true"))
	if _, _, err := b.Optimize(ctx, id, time.Now().Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if n := count(t, dev, id, nil, ""); n != 8 {
		t.Fatalf("dev after main's optimize: %d rows, want 8", n)
	}
	if n := count(t, dev, id, nil, "v > 5"); n != 3 {
		t.Fatalf("dev after main's optimize: %d rows with v > 5, want 3", n)
	}
	// Cleanup acts on every branch: dev's fork version is not its latest.
	if _, _, err := dev.CountRows(ctx, id, ptr(int64(2)), ""); store.ErrorCode(err) != store.CodeTableVersionNotFound {
		t.Fatalf("dev's fork version after the cleanup: %v, want code 11", err)
	}
	if n := count(t, b, id, nil, "v = 0"); n != 1 {
		t.Fatalf("main after its optimize: %d rows, want 1", n)
	}

	// dev goes, and comes back from main's latest version.
	if _, err := b.DeleteBranch(ctx, id, "dev"); err != nil {
		t.Fatal(err)
	}
	latest := must[*store.TableVersion](t)(b.DescribeVersion(ctx, id, "", nil))
	if _, err := b.CreateBranch(ctx, id, "dev", "", nil); err != nil {
		t.Fatal(err)
	}
	if n := count(t, dev, id, nil, ""); n != 1 {
		t.Fatalf("dev made again reads %d rows, want main's 1", n)
	}
	res := must[store.WriteResult](t)(dev.Insert(ctx, id, store.InsertAppend, numberRows(t, 200, 201)))
	if res.Version != latest.Version+1 {
		t.Fatalf("a write on dev made again made version %d, want %d", res.Version, latest.Version+1)
	}
	if n := count(t, dev, id, ptr(res.Version), ""); n != 3 {
		t.Fatalf("dev made again reads %d rows at version %d, want 3", n, res.Version)
	}
}

// TestQueuedBackfill checks that a backfill is a queued job: the rows
// change only when it runs, and what is wrong with the request is refused
// before it is queued.
func TestQueuedBackfill(t *testing.T) {
	b := sqliteEngine(t)
	ctx := t.Context()
	id := []string{"t"}
	if _, _, err := b.CreateTable(ctx, id, store.NewTable{Data: numberRows(t, 1, 4)}); err != nil {
		t.Fatal(err)
	}
	must[store.WriteResult](t)(b.AddColumns(ctx, id, []store.NewColumn{{Name: "twice", Expr: "v * 2", Computed: true}}))
	txID, err := b.QueueBackfill(ctx, id, "twice", "id > 2")
	if err != nil {
		t.Fatal(err)
	}
	if tx := must[*store.Transaction](t)(b.DescribeTransaction(ctx, []string{txID})); tx.Status != store.TxQueued {
		t.Fatalf("the backfill's transaction is %s, want Queued", tx.Status)
	}
	if n := count(t, b, id, nil, "twice IS NOT NULL"); n != 0 {
		t.Fatalf("%d rows backfilled before the job ran", n)
	}
	job := must[*store.Job](t)(b.ClaimJob(ctx, store.JobBackfillColumn))
	var p store.BackfillColumn
	if job == nil || job.TransactionID != txID || json.Unmarshal(job.Payload, &p) != nil {
		t.Fatalf("claimed %+v", job)
	}
	must[store.WriteResult](t)(b.Backfill(ctx, p))
	if n := count(t, b, id, nil, "twice = v * 2"); n != 2 {
		t.Fatalf("%d rows backfilled, want 2", n)
	}
	for _, tc := range []struct {
		column, where string
		want          store.Code
	}{
		{"v", "", store.CodeInvalidInput},
		{"nope", "", store.CodeTableColumnNotFound},
		{"twice", "nope > 1", store.CodeTableColumnNotFound},
		{"twice", "id >", store.CodeInvalidInput},
	} {
		if _, err := b.QueueBackfill(ctx, id, tc.column, tc.where); store.ErrorCode(err) != tc.want {
			t.Errorf("backfill %s where %q: %v, want code %d", tc.column, tc.where, err, tc.want)
		}
	}
	if job, err := b.ClaimJob(ctx, store.JobBackfillColumn); err != nil || job != nil {
		t.Fatalf("a refused backfill was queued: %+v %v", job, err)
	}
}

// TestBranchMadeAgain checks that a branch deleted and made again under
// its name, from the same version, reads its own versions, not what the
// engine read of the old branch's versions of the same numbers.
func TestBranchMadeAgain(t *testing.T) {
	b := sqliteEngine(t)
	ctx := t.Context()
	id := []string{"t"}
	if _, _, err := b.CreateTable(ctx, id, store.NewTable{Data: numberRows(t, 1, 5)}); err != nil {
		t.Fatal(err)
	}
	x := b.OnBranch("x")
	for _, added := range []int{1, 3} {
		if _, err := b.CreateBranch(ctx, id, "x", "", ptr(int64(1))); err != nil {
			t.Fatal(err)
		}
		res := must[store.WriteResult](t)(x.Insert(ctx, id, store.InsertAppend, numberRows(t, 100, 99+added)))
		if res.Version != 2 {
			t.Fatalf("the write on x made version %d, want 2", res.Version)
		}
		if n := count(t, x, id, ptr(int64(2)), ""); n != int64(5+added) {
			t.Fatalf("x at version 2 reads %d rows, want %d", n, 5+added)
		}
		if _, err := b.DeleteBranch(ctx, id, "x"); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBranchWriteToDeclaredTable checks that a write on a branch of a
// table declared without data is refused with InvalidTableState (19), as
// the row store answers, and writes nothing: the table has no branch yet,
// and the rows must not land on main.
func TestBranchWriteToDeclaredTable(t *testing.T) {
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "lancens.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	wh := must[*warehouse.Warehouse](t)(warehouse.Open(t.TempDir()))
	e := must[*engine.Engine](t)(engine.New(engine.Options{Catalog: db, Warehouse: wh}))
	b := engine.WithBackend(db, e)
	ctx := t.Context()
	dev := b.OnBranch("dev")
	for name, write := range map[string]func(id []string) error{
		"Insert": func(id []string) error {
			_, err := dev.Insert(ctx, id, store.InsertAppend, numberRows(t, 1, 3))
			return err
		},
		"MergeInsert": func(id []string) error {
			_, err := dev.MergeInsert(ctx, id, store.Merge{On: []string{"id"}, WhenMatchedUpdateAll: true, WhenNotMatchedInsertAll: true,
				Data: numberRows(t, 1, 3)})
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			id := []string{name}
			loc := must[string](t)(wh.Allocate(nil, name))
			if _, _, err := b.DeclareTable(ctx, id, store.TableDeclaration{Location: loc, Owned: true}); err != nil {
				t.Fatal(err)
			}
			if err := write(id); store.ErrorCode(err) != store.CodeInvalidTableState {
				t.Fatalf("got %v, want code 19", err)
			}
			if tbl := must[*store.Table](t)(b.DescribeTable(ctx, id)); !tbl.Declared {
				t.Fatal("the branch's rows made main's first version")
			}
		})
	}
}

// TestDeleteLatestVersion checks that deleting the record of a table's
// latest version, as Lance clients may (BatchDeleteTableVersions), rolls
// the table back to the version before it, and that the next write takes
// the deleted version's number over the manifest left behind.
func TestDeleteLatestVersion(t *testing.T) {
	b := sqliteEngine(t)
	ctx := t.Context()
	id := []string{"t"}
	if _, _, err := b.CreateTable(ctx, id, store.NewTable{Data: numberRows(t, 1, 5)}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Insert(ctx, id, store.InsertAppend, numberRows(t, 6, 8)); err != nil {
		t.Fatal(err)
	}
	if n, _, err := b.DeleteVersions(ctx, id, "", []store.VersionRange{{Start: 2, End: -1}}); err != nil || n != 1 {
		t.Fatalf("delete version 2: %d %v", n, err)
	}
	if n := count(t, b, id, nil, ""); n != 5 {
		t.Fatalf("after deleting version 2 the table reads %d rows, want version 1's 5", n)
	}
	res := must[store.WriteResult](t)(b.Insert(ctx, id, store.InsertAppend, numberRows(t, 100, 101)))
	if res.Version != 2 {
		t.Fatalf("the next write made version %d, want 2", res.Version)
	}
	if n := count(t, b, id, nil, ""); n != 7 {
		t.Fatalf("after the next write the table reads %d rows, want 7", n)
	}
	if n := count(t, b, id, nil, "id >= 6 AND id <= 8"); n != 0 {
		t.Fatalf("%d rows of the deleted version came back", n)
	}
	if n, _, err := b.DeleteVersions(ctx, id, "", []store.VersionRange{{Start: 0, End: -1}}); err != nil || n != 2 {
		t.Fatalf("delete every version: %d %v", n, err)
	}
}
