package conformance

import (
	"slices"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancens/lancens/store"
)

// viewTarget is a target that keeps materialized views.
type viewTarget interface {
	DataTarget
	store.Views
}

// priceSchema is the schema of the views of the cases: the key and the
// price of items.
var priceSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "price", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
}, nil)

// priceView defines a view of the ids and prices of the items of category
// a in table source.
func priceView(source []string) store.ViewDefinition {
	return store.ViewDefinition{
		Kind: store.ViewQuery, SourceQuery: "SELECT id, price FROM items WHERE category = 'a'", Source: source,
		Query:  store.Query{Filter: "category = 'a'", Projection: store.Projection{Columns: []string{"id", "price"}}},
		Schema: priceSchema,
	}
}

// categoryA returns the ids of the items of category a among items 1..n.
func categoryA(n int64) []int64 {
	var out []int64
	for _, it := range makeItems(1, n) {
		if it.Category == "a" {
			out = append(out, it.ID)
		}
	}
	return out
}

func (s *suite) views(t T) {
	Subtest(t, "CreateAndRefresh", func(t T) {
		tg := implementing[viewTarget](t, s.dataTarget(t), "Views")
		src := createItems(t, tg, "items", 9)
		id := []string{"prices"}
		tbl, res, jobID, err := tg.CreateView(ctx(t), id, priceView(src), false)
		noErr(t, err)
		if res.Version != 1 || jobID != "" {
			t.Fatalf("create: version %d, job %q; want version 1 and no refresh queued", res.Version, jobID)
		}
		d := must(tg.Describe(ctx(t), id, nil))(t)
		if d.View == nil || d.View.SourceVersion != nil || d.NumRows != 0 || !slices.Equal(d.View.Source, src) {
			t.Fatalf("a new view describes as %+v, view %+v; want an empty view of %q not refreshed yet", d, d.View, src)
		}
		refreshed := must(tg.RefreshView(ctx(t), store.RefreshView{ViewUUID: tbl.UUID}))(t)
		if refreshed.Version != 2 {
			t.Fatalf("the refresh made version %d, want 2", refreshed.Version)
		}
		rs, _ := query(t, tg, id, store.Query{})
		if got := sorted(ints(t, rs, "id")); !slices.Equal(got, categoryA(9)) {
			t.Fatalf("view rows %v, want %v", got, categoryA(9))
		}
		// The source moves on; a refresh reads the version it names, or
		// the latest.
		must(tg.Insert(ctx(t), src, store.InsertAppend, itemsData(t, makeItems(10, 15))))(t)
		one := int64(1)
		must(tg.RefreshView(ctx(t), store.RefreshView{ViewUUID: tbl.UUID, SourceVersion: &one}))(t)
		if n := count(t, tg, id, nil, ""); n != int64(len(categoryA(9))) {
			t.Fatalf("refreshed from source version 1: %d rows, want %d", n, len(categoryA(9)))
		}
		must(tg.RefreshView(ctx(t), store.RefreshView{ViewUUID: tbl.UUID}))(t)
		if n := count(t, tg, id, nil, ""); n != int64(len(categoryA(15))) {
			t.Fatalf("refreshed from the latest source version: %d rows, want %d", n, len(categoryA(15)))
		}
		d = must(tg.Describe(ctx(t), id, nil))(t)
		if d.View == nil || d.View.SourceVersion == nil || *d.View.SourceVersion != 2 {
			t.Fatalf("after the refresh the view describes as %+v, want source version 2", d.View)
		}
		// Only refreshes write a view; a refresh is queued by name.
		_, err = tg.Insert(ctx(t), id, store.InsertAppend, itemsData(t, makeItems(1, 1)))
		wantCode(t, err, store.CodeInvalidTableState)
		if txID := must(tg.QueueRefresh(ctx(t), id, nil))(t); txID == "" {
			t.Fatalf("QueueRefresh returned no transaction id")
		}
	})

	Subtest(t, "Errors", func(t T) {
		tg := implementing[viewTarget](t, s.dataTarget(t), "Views")
		src := createItems(t, tg, "items", 3)
		declare(t, tg, "declared")
		tbl, _, _, err := tg.CreateView(ctx(t), []string{"prices"}, priceView(src), false)
		noErr(t, err)
		with := func(change func(d *store.ViewDefinition)) store.ViewDefinition {
			d := priceView(src)
			change(&d)
			return d
		}
		for _, tc := range []struct {
			name string
			id   string
			def  store.ViewDefinition
			want store.Code
		}{
			{"KindNotComputed", "v", with(func(d *store.ViewDefinition) { d.Kind = store.ViewUDTF }), store.CodeUnsupported},
			{"UnknownKind", "v", with(func(d *store.ViewDefinition) { d.Kind = "bogus" }), store.CodeInvalidInput},
			{"MissingSource", "v", with(func(d *store.ViewDefinition) { d.Source = []string{"nope"} }), store.CodeTableNotFound},
			{"SourceWithoutRows", "v", with(func(d *store.ViewDefinition) { d.Source = []string{"declared"} }), store.CodeInvalidTableState},
			{"ColumnNotInRows", "v", with(func(d *store.ViewDefinition) {
				d.Query.Projection.Columns = []string{"id"}
			}), store.CodeTableSchemaValidationError},
			{"NameTaken", "prices", priceView(src), store.CodeTableAlreadyExists},
		} {
			Subtest(t, tc.name, func(t T) {
				_, _, _, err := tg.CreateView(ctx(t), []string{tc.id}, tc.def, false)
				wantCode(t, err, tc.want)
			})
		}
		Subtest(t, "QueueRefreshOfPlainTable", func(t T) {
			_, err := tg.QueueRefresh(ctx(t), src, nil)
			wantCode(t, err, store.CodeInvalidInput)
		})
		Subtest(t, "QueueRefreshOfMissingTable", func(t T) {
			_, err := tg.QueueRefresh(ctx(t), []string{"nope"}, nil)
			wantCode(t, err, store.CodeTableNotFound)
		})
		Subtest(t, "MissingSourceVersion", func(t T) {
			v := int64(99)
			_, err := tg.RefreshView(ctx(t), store.RefreshView{ViewUUID: tbl.UUID, SourceVersion: &v})
			wantCode(t, err, store.CodeTableVersionNotFound)
		})
		Subtest(t, "SourceDropped", func(t T) {
			must3(tg.DropTable(ctx(t), src))(t)
			_, err := tg.RefreshView(ctx(t), store.RefreshView{ViewUUID: tbl.UUID})
			wantCode(t, err, store.CodeTableNotFound)
		})
	})
}
