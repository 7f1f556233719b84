package conformance

import (
	"slices"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancens/lancens/store"
)

func (s *suite) schemaEvolution(t T) {
	Subtest(t, "AddColumns", func(t T) {
		tg := s.dataTarget(t)
		id := createItems(t, tg, "items", 6)
		res := must(tg.AddColumns(ctx(t), id, []store.NewColumn{{Name: "price_x2", Expr: "price * 2"}, {Name: "big_id", Expr: "id + 1000"}}))(t)
		if res.Version != 2 {
			t.Fatalf("add_columns made version %d, want 2", res.Version)
		}
		rs, res2 := query(t, tg, id, store.Query{})
		if got := fieldNames(res2.Schema); !slices.Equal(got, append(fieldNames(itemsSchema), "price_x2", "big_id")) {
			t.Fatalf("fields after add_columns %q", got)
		}
		for _, r := range rs {
			rid := r["id"].(float64)
			if !near(r["price_x2"].(float64), rid*3) || r["big_id"].(float64) != rid+1000 {
				t.Fatalf("row %v: price_x2 %v, big_id %v", rid, r["price_x2"], r["big_id"])
			}
		}
		one := int64(1)
		_, old := query(t, tg, id, store.Query{Version: &one})
		if got := fieldNames(old.Schema); !slices.Equal(got, fieldNames(itemsSchema)) {
			t.Fatalf("version 1 reads fields %q after add_columns", got)
		}
		for _, tc := range []struct {
			name string
			col  store.NewColumn
			want store.Code
		}{
			{"NameTaken", store.NewColumn{Name: "price", Expr: "1"}, store.CodeTableSchemaValidationError},
			{"UnknownColumn", store.NewColumn{Name: "x", Expr: "nope + 1"}, store.CodeTableColumnNotFound},
			{"BadExpression", store.NewColumn{Name: "x", Expr: "id +"}, store.CodeInvalidInput},
		} {
			Subtest(t, tc.name, func(t T) {
				_, err := tg.AddColumns(ctx(t), id, []store.NewColumn{tc.col})
				wantCode(t, err, tc.want)
			})
		}
		if d := must(tg.Describe(ctx(t), id, nil))(t); d.Version != 2 {
			t.Fatalf("failed add_columns made version %d", d.Version)
		}
	})

	Subtest(t, "AlterColumns", func(t T) {
		tg := s.dataTarget(t)
		id := createItems(t, tg, "items", 4)
		title := "title"
		res := must(tg.AlterColumns(ctx(t), id, []store.ColumnAlteration{{Path: "name", Rename: &title}, {Path: "qty", Type: arrow.PrimitiveTypes.Int64}}))(t)
		if res.Version != 2 {
			t.Fatalf("alter_columns made version %d, want 2", res.Version)
		}
		rs, q := query(t, tg, id, store.Query{Filter: "id = 3"})
		fields := fieldNames(q.Schema)
		if slices.Contains(fields, "name") || !slices.Contains(fields, "title") {
			t.Fatalf("fields after the rename %q", fields)
		}
		if f, _ := q.Schema.FieldsByName("qty"); len(f) != 1 || !arrow.TypeEqual(f[0].Type, arrow.PrimitiveTypes.Int64) {
			t.Fatalf("qty after the cast: %v", f)
		}
		if len(rs) != 1 || rs[0]["title"] != "item-03" || rs[0]["qty"].(float64) != 30 {
			t.Fatalf("row 3 after alter_columns: %v", rs)
		}
		if n := count(t, tg, id, nil, "title = 'item-03'"); n != 1 {
			t.Fatalf("filter on the renamed column counts %d", n)
		}
		one := int64(1)
		_, old := query(t, tg, id, store.Query{Version: &one})
		if !slices.Contains(fieldNames(old.Schema), "name") {
			t.Fatalf("version 1 lost column name: %q", fieldNames(old.Schema))
		}
		_, err := tg.AlterColumns(ctx(t), id, []store.ColumnAlteration{{Path: "nope", Rename: &title}})
		wantCode(t, err, store.CodeTableColumnNotFound)
	})

	Subtest(t, "DropColumns", func(t T) {
		tg := s.dataTarget(t)
		id := createItems(t, tg, "items", 5)
		res := must(tg.DropColumns(ctx(t), id, []string{"category", "tags"}))(t)
		if res.Version != 2 {
			t.Fatalf("drop_columns made version %d, want 2", res.Version)
		}
		_, q := query(t, tg, id, store.Query{})
		if got := fieldNames(q.Schema); !slices.Equal(got, []string{"id", "name", "price", "qty", "vec", "body"}) {
			t.Fatalf("fields after drop_columns %q", got)
		}
		if n := count(t, tg, id, nil, ""); n != 5 {
			t.Fatalf("%d rows after drop_columns, want 5", n)
		}
		_, err := tg.Query(ctx(t), id, store.Query{Filter: "category = 'a'"})
		wantCode(t, err, store.CodeTableColumnNotFound)
		_, err = tg.DropColumns(ctx(t), id, []string{"nope"})
		wantCode(t, err, store.CodeTableColumnNotFound)
		// Restoring version 1 brings the columns back.
		must(tg.Restore(ctx(t), id, 1))(t)
		rs, q := query(t, tg, id, store.Query{Filter: "category = 'a'"})
		if !slices.Equal(fieldNames(q.Schema), fieldNames(itemsSchema)) || len(rs) != 1 {
			t.Fatalf("after restoring version 1: fields %q, %d rows in category a", fieldNames(q.Schema), len(rs))
		}
	})

	Subtest(t, "SchemaMetadata", func(t T) {
		tg := s.dataTarget(t)
		id := createItems(t, tg, "items", 2)
		_, md := must3b(tg.UpdateSchemaMetadata(ctx(t), id, map[string]string{"owner": "alice", "team": "search"}))(t)
		if md["owner"] != "alice" || md["team"] != "search" {
			t.Fatalf("schema metadata after the update %v", md)
		}
		_, md = must3b(tg.UpdateSchemaMetadata(ctx(t), id, map[string]string{"owner": "bob"}))(t)
		if md["owner"] != "bob" || md["team"] != "search" {
			t.Fatalf("schema metadata after an upsert %v", md)
		}
		d := must(tg.Describe(ctx(t), id, nil))(t)
		if got, _ := d.Schema.Metadata().GetValue("owner"); got != "bob" {
			t.Fatalf("described schema metadata %v", d.Schema.Metadata())
		}
	})
}

// must3b is must for calls returning a write result, a value and an error.
func must3b[V any](res store.WriteResult, v V, err error) func(t T) (store.WriteResult, V) {
	return func(t T) (store.WriteResult, V) {
		t.Helper()
		noErr(t, err)
		return res, v
	}
}
