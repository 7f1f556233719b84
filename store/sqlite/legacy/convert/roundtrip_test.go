package convert_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancens/lancens/engine"
	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/store/sqlite"
	"github.com/lancens/lancens/store/sqlite/legacy/convert"
	"github.com/lancens/lancens/warehouse"
)

func check(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func batch(t *testing.T, s *arrow.Schema, rows string) arrow.RecordBatch {
	t.Helper()
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, s, strings.NewReader(rows))
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

func TestRoundTripScratch(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := sqlite.Open(ctx, dir+"/lancens.db", sqlite.Options{})
	check(t, err)
	defer db.Close()
	s := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "text", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	id := []string{"docs"}
	_, _, err = db.CreateTable(ctx, id, store.NewTable{Data: store.Data{Schema: s, Batches: []arrow.RecordBatch{batch(t, s, `[{"id":1,"text":"a"},{"id":2,"text":"b"},{"id":3}]`)}}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.Insert(ctx, id, store.InsertAppend, store.Data{Schema: s, Batches: []arrow.RecordBatch{batch(t, s, `[{"id":4,"text":"d"}]`)}})
	check(t, err)
	_, err = db.Update(ctx, id, []store.ColumnUpdate{{Path: "text", Expr: "'B'"}}, "id = 2")
	check(t, err)
	_, err = db.Delete(ctx, id, "id = 1")
	check(t, err)
	want := map[int64]*store.Result{}
	for v := int64(1); v <= 4; v++ {
		want[v], err = db.Query(ctx, id, store.Query{Version: &v})
		check(t, err)
	}
	check(t, os.Mkdir(dir+"/wh", 0o755))
	wh, err := warehouse.Open(dir + "/wh")
	check(t, err)
	e, err := engine.New(engine.Options{Catalog: db, Warehouse: wh})
	check(t, err)
	sum, err := convert.Run(ctx, db, convert.Options{Warehouse: wh, Indexes: e})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", sum)
	for v := int64(1); v <= 4; v++ {
		got, err := e.Query(ctx, id, store.Query{Version: &v})
		check(t, err)
		sameRows(t, v, want[v], got)
	}
}

func sameRows(t *testing.T, v int64, want, got *store.Result) {
	t.Helper()
	w := array.NewTableFromRecords(want.Schema, want.Batches)
	g := array.NewTableFromRecords(got.Schema, got.Batches)
	if !want.Schema.Equal(got.Schema) {
		t.Errorf("version %d: schema\n%s\nwant\n%s", v, got.Schema, want.Schema)
		return
	}
	if w.NumRows() != g.NumRows() {
		t.Errorf("version %d: %d rows, want %d", v, g.NumRows(), w.NumRows())
		return
	}
	for i := range int(w.NumCols()) {
		wc, err := array.Concatenate(w.Column(i).Data().Chunks(), memory.DefaultAllocator)
		check(t, err)
		gc, err := array.Concatenate(g.Column(i).Data().Chunks(), memory.DefaultAllocator)
		check(t, err)
		if !array.ApproxEqual(wc, gc, array.WithNaNsEqual(true)) {
			t.Errorf("version %d: column %s\n%v\nwant\n%v", v, want.Schema.Field(i).Name, gc, wc)
		}
	}
}
