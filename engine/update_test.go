package engine_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/store/sqlite"
)

// TestUpdateStructField sets fields inside a struct column, at two depths,
// on the rows a predicate picks; the struct's other fields and the other
// rows keep their values.
func TestUpdateStructField(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "lancens.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_, tg := newEngine(t, db)
	point := arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		arrow.Field{Name: "inner", Type: arrow.StructOf(arrow.Field{Name: "label", Type: arrow.BinaryTypes.String, Nullable: true}), Nullable: true})
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "p", Type: point, Nullable: true}}, nil)
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, schema, strings.NewReader(
		`[{"id": 1, "p": {"x": 10, "inner": {"label": "a"}}}, {"id": 2, "p": {"x": 20, "inner": {"label": "b"}}}, {"id": 3, "p": {"x": 30, "inner": {"label": "c"}}}]`))
	if err != nil {
		t.Fatal(err)
	}
	id := []string{"s"}
	if _, _, err := tg.CreateTable(ctx, id, store.NewTable{Data: store.NewData(schema, rec)}); err != nil {
		t.Fatal(err)
	}
	res, err := tg.Update(ctx, id, []store.ColumnUpdate{{Path: "p.x", Expr: "p.x + 1"}, {Path: "p.inner.label", Expr: "upper(p.inner.label)"}}, "id >= 2")
	if err != nil || res.Updated != 2 {
		t.Fatalf("update: %+v, %v", res, err)
	}
	got, err := tg.Query(ctx, id, store.Query{OrderBy: []store.SortKey{{Column: "id"}}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(got.Batches[0])
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"id":1,"p":{"inner":{"label":"a"},"x":10}},{"id":2,"p":{"inner":{"label":"B"},"x":21}},{"id":3,"p":{"inner":{"label":"C"},"x":31}}]`
	if string(b) != want {
		t.Fatalf("rows after the update:\n%s\nwant\n%s", b, want)
	}
	if _, err := tg.Update(ctx, id, []store.ColumnUpdate{{Path: "p.inner", Expr: "1"}}, ""); store.ErrorCode(err) != store.CodeInvalidInput {
		t.Fatalf("setting a struct whole: %v, want code 13", err)
	}
}
