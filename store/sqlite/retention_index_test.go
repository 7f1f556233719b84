package sqlite

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancens/lancens/store"
)

// TestCleanupKeepsIndexes rewrites every row of an indexed table many
// times and cleans up the old versions, and checks that full-text and
// vector searches answer exactly as before: the sweep removes the index
// entries of the rows it deletes and no other.
func TestCleanupKeepsIndexes(t *testing.T) {
	ctx := t.Context()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "c.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	data := searchTable(t, db, "a", 2000)
	id := []string{"a"}
	for range 8 {
		if _, err := db.Update(ctx, id, []store.ColumnUpdate{{Path: "text", Expr: "text"}}, "true"); err != nil {
			t.Fatal(err)
		}
	}
	textIDs := func() []int64 {
		t.Helper()
		res, err := db.Query(ctx, id, store.Query{Limit: 50, Projection: store.Projection{Columns: []string{"id"}},
			Text: &store.TextSearch{Query: store.FtsQuery{Match: &store.FtsMatch{Terms: "alpha"}}}})
		if err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for _, b := range res.Batches {
			col := b.Column(b.Schema().FieldIndices("id")[0]).(*array.Int64)
			ids = append(ids, col.Int64Values()...)
		}
		slices.Sort(ids)
		return ids
	}
	beforeText := textIDs()
	beforeNearest, err := nearestID(ctx, db, "a", vectorOf(data, 7), nil, "")
	if err != nil || len(beforeText) == 0 {
		t.Fatalf("searches before the cleanup: %v %v", beforeText, err)
	}
	res, _, err := db.CleanupVersions(ctx, id, time.Now().Add(time.Hour))
	if err != nil || res.Rows != 8*2000 || res.BytesFreed <= 0 {
		t.Fatalf("cleanup: %+v %v", res, err)
	}
	if got := textIDs(); !slices.Equal(got, beforeText) {
		t.Fatalf("full-text search after cleanup: %v, want %v", got, beforeText)
	}
	if got, err := nearestID(ctx, db, "a", vectorOf(data, 7), nil, ""); err != nil || got != beforeNearest {
		t.Fatalf("nearest to row 7 after cleanup: %d %v, want %d", got, err, beforeNearest)
	}
}

// TestCleanupSparesReadsInProgress checks that a read that began before a
// cleanup keeps seeing the rows of the versions the cleanup removes until
// it ends, and that a read begun after answers TableVersionNotFound (11).
func TestCleanupSparesReadsInProgress(t *testing.T) {
	ctx := t.Context()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "r.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	id := []string{"t"}
	if _, _, err := db.CreateTable(ctx, id, store.NewTable{Data: testRows(0, 100)}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := db.Update(ctx, id, []store.ColumnUpdate{{Path: "text", Expr: "text || 'x'"}}, "true"); err != nil {
			t.Fatal(err)
		}
	}
	const v = 2
	visible := func(tx *Tx, tr *tableRow) int64 {
		var n int64
		if err := tx.QueryRow(ctx, fmt.Sprintf("SELECT count(*) FROM %s WHERE %s", dataTable(tr), visibleAt), v, v).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	err = db.read(ctx, func(tx *Tx) error {
		tr, err := findManaged(ctx, tx, id)
		if err != nil {
			return err
		}
		if n := visible(tx, tr); n != 100 {
			t.Fatalf("version %d shows %d rows before the cleanup", v, n)
		}
		res, _, err := db.CleanupVersions(ctx, id, time.Now().Add(time.Hour))
		if err != nil || res.Versions != 3 || res.Rows != 300 {
			t.Fatalf("cleanup during the read: %+v %v", res, err)
		}
		if n := visible(tx, tr); n != 100 {
			t.Fatalf("the read in progress lost rows of version %d: %d left", v, n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	ver := int64(v)
	if _, _, err := db.CountRows(ctx, id, &ver, ""); store.ErrorCode(err) != store.CodeTableVersionNotFound {
		t.Fatalf("version %d after the cleanup: %v, want code 11", v, err)
	}
}

// TestCleanupNeverHandsRowIDsOutAgain deletes the newest row, cleans up
// the version that showed it, and inserts another: the new row must get a
// row id of its own, or the full-text index (which catches up from row
// ids above the last it holds) would never see it and would answer the
// deleted row's terms for it.
func TestCleanupNeverHandsRowIDsOutAgain(t *testing.T) {
	ctx := t.Context()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "c.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	searchTable(t, db, "a", 200)
	id := []string{"a"}
	withText := func(row int64, text string) store.Data {
		d := testBatch(int(row), 1)
		b := array.NewRecordBuilder(memory.DefaultAllocator, d.Schema())
		b.Field(0).(*array.Int64Builder).Append(row)
		b.Field(1).(*array.StringBuilder).Append(text)
		b.Field(2).(*array.FixedSizeListBuilder).Append(true)
		b.Field(2).(*array.FixedSizeListBuilder).ValueBuilder().(*array.Float32Builder).AppendValues(vectorOf(d, 0), nil)
		return store.NewData(d.Schema(), b.NewRecordBatch())
	}
	search := func(term string) []int64 {
		t.Helper()
		res, err := db.Query(ctx, id, store.Query{Limit: 10, Projection: store.Projection{Columns: []string{"id"}},
			Text: &store.TextSearch{Query: store.FtsQuery{Match: &store.FtsMatch{Terms: term}}}})
		if err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for _, b := range res.Batches {
			ids = append(ids, b.Column(b.Schema().FieldIndices("id")[0]).(*array.Int64).Int64Values()...)
		}
		return ids
	}
	if _, err := db.Insert(ctx, id, store.InsertAppend, withText(1000, "zulu")); err != nil {
		t.Fatal(err)
	}
	if got := search("zulu"); !slices.Equal(got, []int64{1000}) {
		t.Fatalf("zulu before the delete: %v", got)
	}
	if _, err := db.Delete(ctx, id, "id = 1000"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.CleanupVersions(ctx, id, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Insert(ctx, id, store.InsertAppend, withText(2000, "yankee")); err != nil {
		t.Fatal(err)
	}
	if got := search("yankee"); !slices.Equal(got, []int64{2000}) {
		t.Errorf("yankee, the new row: %v, want [2000]", got)
	}
	if got := search("zulu"); len(got) != 0 {
		t.Errorf("zulu, the deleted row: %v, want nothing", got)
	}
}
