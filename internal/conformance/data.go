package conformance

import (
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancens/lancens/store"
)

func (s *suite) data(t T) {
	Subtest(t, "CreateAndDescribe", func(t T) {
		tg := s.dataTarget(t)
		id := createItems(t, tg, "items", 12)
		tbl := must(tg.DescribeTable(ctx(t), id))(t)
		if tbl.Declared {
			t.Fatalf("a table created with rows describes as only declared")
		}
		d := must(tg.Describe(ctx(t), id, nil))(t)
		if d.Version != 1 || d.NumRows != 12 {
			t.Fatalf("describe: version %d, %d rows; want 1, 12", d.Version, d.NumRows)
		}
		if got, want := fieldNames(d.Schema), fieldNames(itemsSchema); !slices.Equal(got, want) {
			t.Fatalf("schema fields %q, want %q", got, want)
		}
		for i, f := range itemsSchema.Fields() {
			if got := d.Schema.Field(i); !arrow.TypeEqual(got.Type, f.Type) || got.Nullable != f.Nullable {
				t.Errorf("field %s is %s (nullable %v), want %s (nullable %v)", f.Name, got.Type, got.Nullable, f.Type, f.Nullable)
			}
		}
		if n := count(t, tg, id, nil, ""); n != 12 {
			t.Fatalf("count %d, want 12", n)
		}
		rs, _ := query(t, tg, id, store.Query{})
		if got := sorted(ints(t, rs, "id")); !slices.Equal(got, span(1, 12)) {
			t.Fatalf("scan ids %v", got)
		}
	})

	Subtest(t, "CreateModes", func(t T) {
		for _, tc := range []struct {
			name     string
			mode     store.CreateMode
			wantCode store.Code // -1: success
			wantRows int64
		}{
			{"Create", store.ModeCreate, store.CodeTableAlreadyExists, 5},
			{"ExistOk", store.ModeExistOk, -1, 5},
			{"Overwrite", store.ModeOverwrite, -1, 2},
		} {
			Subtest(t, tc.name, func(t T) {
				tg := s.dataTarget(t)
				id := createItems(t, tg, "items", 5)
				_, _, err := tg.CreateTable(ctx(t), id, store.NewTable{Mode: tc.mode, Data: itemsData(t, makeItems(100, 101))})
				if tc.wantCode >= 0 {
					wantCode(t, err, tc.wantCode)
				} else {
					noErr(t, err)
				}
				if n := count(t, tg, id, nil, ""); n != tc.wantRows {
					t.Fatalf("%d rows after create in mode %s, want %d", n, tc.mode, tc.wantRows)
				}
			})
		}
	})

	Subtest(t, "CreateErrors", func(t T) {
		tg := s.dataTarget(t)
		_, _, err := tg.CreateTable(ctx(t), []string{"missing", "items"}, store.NewTable{Data: itemsData(t, makeItems(1, 2))})
		wantCode(t, err, store.CodeNamespaceNotFound)
		_, err = tg.DescribeTable(ctx(t), []string{"missing", "items"})
		wantCode(t, err, store.CodeNamespaceNotFound)
	})

	Subtest(t, "EmptyTable", func(t T) {
		tg := s.dataTarget(t)
		id := []string{"empty"}
		_, _, err := tg.CreateTable(ctx(t), id, store.NewTable{Data: store.Data{Schema: itemsSchema}})
		noErr(t, err)
		if n := count(t, tg, id, nil, ""); n != 0 {
			t.Fatalf("empty table counts %d rows", n)
		}
		rs, res := query(t, tg, id, store.Query{})
		if len(rs) != 0 || !slices.Equal(fieldNames(res.Schema), fieldNames(itemsSchema)) {
			t.Fatalf("empty table scans %d rows with fields %q", len(rs), fieldNames(res.Schema))
		}
		res2 := must(tg.Insert(ctx(t), id, store.InsertAppend, itemsData(t, makeItems(1, 3))))(t)
		if res2.Inserted != 3 || res2.Version != 2 {
			t.Fatalf("first insert into an empty table: %+v, want 3 rows, version 2", res2)
		}
	})

	Subtest(t, "Insert", func(t T) {
		tg := s.dataTarget(t)
		id := createItems(t, tg, "items", 10)
		res := must(tg.Insert(ctx(t), id, store.InsertAppend, itemsData(t, makeItems(11, 13))))(t)
		if res.Version != 2 || res.Inserted != 3 {
			t.Fatalf("append: %+v, want version 2 and 3 rows", res)
		}
		if n := count(t, tg, id, nil, ""); n != 13 {
			t.Fatalf("%d rows after append, want 13", n)
		}
		res = must(tg.Insert(ctx(t), id, store.InsertOverwrite, itemsData(t, makeItems(50, 51))))(t)
		if res.Version != 3 || res.Inserted != 2 {
			t.Fatalf("overwrite: %+v, want version 3 and 2 rows", res)
		}
		rs, _ := query(t, tg, id, store.Query{})
		if got := sorted(ints(t, rs, "id")); !slices.Equal(got, []int64{50, 51}) {
			t.Fatalf("rows after overwrite %v, want [50 51]", got)
		}
	})

	Subtest(t, "InsertErrors", func(t T) {
		tg := s.dataTarget(t)
		id := createItems(t, tg, "items", 3)
		other := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64}, {Name: "y", Type: arrow.BinaryTypes.String}}, nil)
		for _, tc := range []struct {
			name  string
			table []string
			data  store.Data
			want  store.Code
		}{
			{"MissingTable", []string{"nope"}, itemsData(t, makeItems(4, 4)), store.CodeTableNotFound},
			{"MissingNamespace", []string{"nope", "items"}, itemsData(t, makeItems(4, 4)), store.CodeNamespaceNotFound},
			{"OtherSchema", id, recordData(t, other, `[{"x": 1, "y": "a"}]`), store.CodeTableSchemaValidationError},
		} {
			Subtest(t, tc.name, func(t T) {
				_, err := tg.Insert(ctx(t), tc.table, store.InsertAppend, tc.data)
				wantCode(t, err, tc.want)
			})
		}
		if n := count(t, tg, id, nil, ""); n != 3 {
			t.Fatalf("failed inserts changed the table: %d rows, want 3", n)
		}
	})

	Subtest(t, "MergeInsert", func(t T) {
		// store.Catalog rows 1..6; source rows 5, 6 (renamed) and 7, 8 (new).
		source := makeItems(5, 8)
		for i := range source {
			source[i].Name = "merged"
		}
		for _, tc := range []struct {
			name                            string
			merge                           store.Merge
			inserted, updated, deleted, ids int64 // ids: rows afterwards
			merged                          []int64
		}{
			{"Upsert", store.Merge{WhenMatchedUpdateAll: true, WhenNotMatchedInsertAll: true}, 2, 2, 0, 8, []int64{5, 6, 7, 8}},
			{"InsertOnly", store.Merge{WhenNotMatchedInsertAll: true}, 2, 0, 0, 8, []int64{7, 8}},
			{"UpdateOnly", store.Merge{WhenMatchedUpdateAll: true}, 0, 2, 0, 6, []int64{5, 6}},
			{"UpdateFiltered", store.Merge{WhenMatchedUpdateAll: true, WhenMatchedUpdateFilter: "target.id = 6"}, 0, 1, 0, 6, []int64{6}},
			{"ReplaceAll", store.Merge{WhenMatchedUpdateAll: true, WhenNotMatchedInsertAll: true, WhenNotMatchedBySourceDelete: true}, 2, 2, 4, 4, []int64{5, 6, 7, 8}},
			{"DeleteFiltered", store.Merge{WhenNotMatchedBySourceDelete: true, WhenNotMatchedBySourceDeleteFilter: "id <= 2"}, 0, 0, 2, 4, nil},
		} {
			Subtest(t, tc.name, func(t T) {
				tg := s.dataTarget(t)
				id := createItems(t, tg, "items", 6)
				m := tc.merge
				m.On = []string{"id"}
				m.Data = itemsData(t, source)
				res := must(tg.MergeInsert(ctx(t), id, m))(t)
				if res.Inserted != tc.inserted || res.Updated != tc.updated || res.Deleted != tc.deleted || res.Version != 2 {
					t.Fatalf("merge: %+v; want %d inserted, %d updated, %d deleted, version 2", res, tc.inserted, tc.updated, tc.deleted)
				}
				if n := count(t, tg, id, nil, ""); n != tc.ids {
					t.Fatalf("%d rows after merge, want %d", n, tc.ids)
				}
				rs, _ := query(t, tg, id, store.Query{Filter: "name = 'merged'"})
				if got := sorted(ints(t, rs, "id")); !slices.Equal(got, sorted(tc.merged)) && !(len(got) == 0 && len(tc.merged) == 0) {
					t.Fatalf("rows from the source %v, want %v", got, tc.merged)
				}
			})
		}
		Subtest(t, "CompositeKey", func(t T) {
			// Rows pair when every key is equal: source 5 and 6 keep their
			// id and category, source 4 has a new category.
			src := makeItems(4, 6)
			src[0].Category = "z"
			for i := range src {
				src[i].Name = "merged"
			}
			for _, on := range [][]string{{"id", "category"}, {"category", "id"}} {
				tg := s.dataTarget(t)
				id := createItems(t, tg, "items", 6)
				m := store.Merge{On: on, WhenMatchedUpdateAll: true, WhenNotMatchedInsertAll: true, Data: itemsData(t, src)}
				res := must(tg.MergeInsert(ctx(t), id, m))(t)
				if res.Inserted != 1 || res.Updated != 2 || res.Version != 2 {
					t.Fatalf("merge on %q: %+v; want 1 inserted, 2 updated, version 2", on, res)
				}
				if n := count(t, tg, id, nil, "id = 4"); n != 2 {
					t.Fatalf("merge on %q: %d rows with id 4, want the old and the new", on, n)
				}
				rs, _ := query(t, tg, id, store.Query{Filter: "name = 'merged'"})
				if got := sorted(ints(t, rs, "id")); !slices.Equal(got, []int64{4, 5, 6}) {
					t.Fatalf("merge on %q: rows from the source %v, want [4 5 6]", on, got)
				}
			}
		})
		Subtest(t, "Errors", func(t T) {
			tg := s.dataTarget(t)
			id := createItems(t, tg, "items", 3)
			data := itemsData(t, makeItems(3, 4))
			_, err := tg.MergeInsert(ctx(t), id, store.Merge{On: []string{"nope"}, WhenNotMatchedInsertAll: true, Data: data})
			wantCode(t, err, store.CodeTableColumnNotFound)
			for _, on := range [][]string{nil, {"id", "id"}, {"id", "`id`"}, {"id", ""}} {
				_, err = tg.MergeInsert(ctx(t), id, store.Merge{On: on, WhenNotMatchedInsertAll: true, Data: data})
				wantCode(t, err, store.CodeInvalidInput)
			}
			_, err = tg.MergeInsert(ctx(t), id, store.Merge{On: []string{"id", "nope"}, WhenNotMatchedInsertAll: true, Data: data})
			wantCode(t, err, store.CodeTableColumnNotFound)
			_, err = tg.MergeInsert(ctx(t), []string{"missing"}, store.Merge{On: []string{"id"}, WhenNotMatchedInsertAll: true, Data: data})
			wantCode(t, err, store.CodeTableNotFound)
			if n := count(t, tg, id, nil, ""); n != 3 {
				t.Fatalf("failed merges changed the table: %d rows", n)
			}
		})
	})

	Subtest(t, "Update", func(t T) {
		tg := s.dataTarget(t)
		id := createItems(t, tg, "items", 9)
		res := must(tg.Update(ctx(t), id, []store.ColumnUpdate{{Path: "price", Expr: "price * 2"}, {Path: "name", Expr: "'cheap'"}}, "category = 'a'"))(t)
		if res.Updated != 3 || res.Version != 2 {
			t.Fatalf("update: %+v, want 3 rows, version 2", res)
		}
		rs, _ := query(t, tg, id, store.Query{Filter: "name = 'cheap'"})
		if got := sorted(ints(t, rs, "id")); !slices.Equal(got, []int64{3, 6, 9}) {
			t.Fatalf("updated rows %v, want [3 6 9]", got)
		}
		for _, r := range rs {
			if id := r["id"].(float64); !near(r["price"].(float64), id*3) {
				t.Fatalf("row %v: price %v, want %v", id, r["price"], id*3)
			}
		}
		res = must(tg.Update(ctx(t), id, []store.ColumnUpdate{{Path: "qty", Expr: "0"}}, ""))(t)
		if res.Updated != 9 || res.Version != 3 {
			t.Fatalf("update of every row: %+v, want 9 rows, version 3", res)
		}
		if n := count(t, tg, id, nil, "qty = 0"); n != 9 {
			t.Fatalf("%d rows with qty 0, want 9", n)
		}
		for _, tc := range []struct {
			name      string
			updates   []store.ColumnUpdate
			predicate string
			want      store.Code
		}{
			{"UnknownColumn", []store.ColumnUpdate{{Path: "nope", Expr: "1"}}, "", store.CodeTableColumnNotFound},
			{"UnknownColumnInPredicate", []store.ColumnUpdate{{Path: "qty", Expr: "1"}}, "nope > 1", store.CodeTableColumnNotFound},
			{"BadPredicate", []store.ColumnUpdate{{Path: "qty", Expr: "1"}}, "id >", store.CodeInvalidInput},
			{"BadExpression", []store.ColumnUpdate{{Path: "qty", Expr: "1 +"}}, "", store.CodeInvalidInput},
		} {
			Subtest(t, tc.name, func(t T) {
				_, err := tg.Update(ctx(t), id, tc.updates, tc.predicate)
				wantCode(t, err, tc.want)
			})
		}
		if n := count(t, tg, id, nil, "qty = 0"); n != 9 {
			t.Fatalf("failed updates changed rows: %d rows with qty 0, want 9", n)
		}
	})

	Subtest(t, "Delete", func(t T) {
		tg := s.dataTarget(t)
		id := createItems(t, tg, "items", 12)
		res := must(tg.Delete(ctx(t), id, "id > 10 OR category = 'a'"))(t)
		if res.Version != 2 {
			t.Fatalf("delete made version %d, want 2", res.Version)
		}
		rs, _ := query(t, tg, id, store.Query{})
		if got := sorted(ints(t, rs, "id")); !slices.Equal(got, []int64{1, 2, 4, 5, 7, 8, 10}) {
			t.Fatalf("rows left %v", got)
		}
		must(tg.Delete(ctx(t), id, "id > 100"))(t)
		if n := count(t, tg, id, nil, ""); n != 7 {
			t.Fatalf("a delete matching nothing left %d rows, want 7", n)
		}
		for _, tc := range []struct {
			name, predicate string
			want            store.Code
		}{
			{"UnknownColumn", "nope = 1", store.CodeTableColumnNotFound},
			{"BadSyntax", "id = = 1", store.CodeInvalidInput},
		} {
			Subtest(t, tc.name, func(t T) {
				_, err := tg.Delete(ctx(t), id, tc.predicate)
				wantCode(t, err, tc.want)
			})
		}
		_, err := tg.Delete(ctx(t), []string{"missing"}, "id = 1")
		wantCode(t, err, store.CodeTableNotFound)
		if n := count(t, tg, id, nil, ""); n != 7 {
			t.Fatalf("failed deletes left %d rows, want 7", n)
		}
	})

	Subtest(t, "Count", func(t T) {
		tg := s.dataTarget(t)
		id := createItems(t, tg, "items", 12)
		for _, tc := range []struct {
			predicate string
			want      int64
		}{
			{"", 12},
			{"category = 'b'", 4},
			{"price > 9 AND qty < 110", 4},
			{"name LIKE 'item-1%'", 3},
			{"id IN (1, 2, 99)", 2},
			{"tags IS NULL", 3},
			{"id > 100", 0},
		} {
			if got := count(t, tg, id, nil, tc.predicate); got != tc.want {
				t.Errorf("count %q = %d, want %d", tc.predicate, got, tc.want)
			}
		}
		_, _, err := tg.CountRows(ctx(t), id, nil, "nope > 1")
		wantCode(t, err, store.CodeTableColumnNotFound)
		_, _, err = tg.CountRows(ctx(t), []string{"missing"}, nil, "")
		wantCode(t, err, store.CodeTableNotFound)
	})

	Subtest(t, "QueryFilter", func(t T) {
		tg := s.dataTarget(t)
		id := createItems(t, tg, "items", 12)
		for _, tc := range []struct {
			filter string
			want   []int64
		}{
			{"id <= 3", []int64{1, 2, 3}},
			{"category = 'c' AND price >= 6", []int64{5, 8, 11}},
			{"NOT (id > 2)", []int64{1, 2}},
			{"body = 'cats and dogs'", []int64{2, 10}},
			{"id BETWEEN 4 AND 6", []int64{4, 5, 6}},
			{"name IS NULL", nil},
		} {
			rs, _ := query(t, tg, id, store.Query{Filter: tc.filter})
			if got := sorted(ints(t, rs, "id")); !slices.Equal(got, tc.want) && !(len(got) == 0 && len(tc.want) == 0) {
				t.Errorf("filter %q: ids %v, want %v", tc.filter, got, tc.want)
			}
		}
	})

	Subtest(t, "QueryProjection", func(t T) {
		tg := s.dataTarget(t)
		id := createItems(t, tg, "items", 4)
		rs, res := query(t, tg, id, store.Query{Projection: store.Projection{Columns: []string{"name", "id"}}, Filter: "id = 2"})
		if got := fieldNames(res.Schema); !slices.Equal(got, []string{"name", "id"}) {
			t.Fatalf("projected fields %q, want [name id]", got)
		}
		if len(rs) != 1 || rs[0]["name"] != "item-02" {
			t.Fatalf("projected rows %v", rs)
		}
		rs, res = query(t, tg, id, store.Query{Projection: store.Projection{Aliases: []store.Alias{{Name: "id", Expr: "id"}, {Name: "double", Expr: "price * 2"}}}})
		if got := fieldNames(res.Schema); !slices.Equal(got, []string{"id", "double"}) {
			t.Fatalf("aliased fields %q, want [id double]", got)
		}
		for _, r := range rs {
			if !near(r["double"].(float64), r["id"].(float64)*3) {
				t.Fatalf("row %v: double = %v", r["id"], r["double"])
			}
		}
		_, res = query(t, tg, id, store.Query{Projection: store.Projection{Columns: []string{"id"}}, WithRowID: true})
		if got := fieldNames(res.Schema); !slices.Contains(got, "_rowid") {
			t.Fatalf("with_row_id gave fields %q, want _rowid among them", got)
		}
	})

	Subtest(t, "QueryPages", func(t T) {
		tg := s.dataTarget(t)
		id := createItems(t, tg, "items", 12)
		var seen []int64
		for offset := int64(0); offset < 12; offset += 5 {
			rs, _ := query(t, tg, id, store.Query{Limit: 5, Offset: offset})
			want := min(5, 12-offset)
			if int64(len(rs)) != want {
				t.Fatalf("limit 5 offset %d: %d rows, want %d", offset, len(rs), want)
			}
			seen = append(seen, ints(t, rs, "id")...)
		}
		if got := sorted(seen); !slices.Equal(got, span(1, 12)) {
			t.Fatalf("pages of 5 gave ids %v, want each of 1..12 once", got)
		}
		rs, _ := query(t, tg, id, store.Query{Limit: 3, Filter: "category = 'a'"})
		if len(rs) != 3 {
			t.Fatalf("limit 3 with a filter gave %d rows", len(rs))
		}
		for _, r := range rs {
			if r["category"] != "a" {
				t.Fatalf("limited rows do not all match the filter: %v", rs)
			}
		}
		rs, _ = query(t, tg, id, store.Query{Limit: 5, Offset: 20})
		if len(rs) != 0 {
			t.Fatalf("offset past the end gave %d rows", len(rs))
		}
	})

	Subtest(t, "TimeTravel", func(t T) {
		tg := s.dataTarget(t)
		id := createItems(t, tg, "items", 4)                                              // v1: 1..4
		must(tg.Insert(ctx(t), id, store.InsertAppend, itemsData(t, makeItems(5, 6))))(t) // v2: 1..6
		must(tg.Delete(ctx(t), id, "id <= 2"))(t)                                         // v3: 3..6
		must(tg.Update(ctx(t), id, []store.ColumnUpdate{{Path: "name", Expr: "'new'"}}, ""))(t)
		for v, want := range map[int64][]int64{1: span(1, 4), 2: span(1, 6), 3: span(3, 6), 4: span(3, 6)} {
			rs, _ := query(t, tg, id, store.Query{Version: &v})
			if got := sorted(ints(t, rs, "id")); !slices.Equal(got, want) {
				t.Errorf("version %d: ids %v, want %v", v, got, want)
			}
			if n := count(t, tg, id, &v, ""); n != int64(len(want)) {
				t.Errorf("version %d counts %d rows, want %d", v, n, len(want))
			}
		}
		three := int64(3)
		if n := count(t, tg, id, &three, "name = 'new'"); n != 0 {
			t.Fatalf("version 3 sees %d rows of version 4's update", n)
		}
		missing := int64(99)
		_, err := tg.Query(ctx(t), id, store.Query{Version: &missing})
		wantCode(t, err, store.CodeTableVersionNotFound)
		_, _, err = tg.CountRows(ctx(t), id, &missing, "")
		wantCode(t, err, store.CodeTableVersionNotFound)
	})

	Subtest(t, "Restore", func(t T) {
		tg := s.dataTarget(t)
		id := createItems(t, tg, "items", 4)
		must(tg.Insert(ctx(t), id, store.InsertAppend, itemsData(t, makeItems(5, 8))))(t)
		must(tg.Delete(ctx(t), id, "id = 1"))(t)
		res := must(tg.Restore(ctx(t), id, 1))(t)
		if res.Version != 4 {
			t.Fatalf("restore made version %d, want 4 (a new version)", res.Version)
		}
		rs, _ := query(t, tg, id, store.Query{})
		if got := sorted(ints(t, rs, "id")); !slices.Equal(got, span(1, 4)) {
			t.Fatalf("rows after restoring version 1: %v", got)
		}
		three := int64(3)
		if n := count(t, tg, id, &three, ""); n != 7 {
			t.Fatalf("version 3 counts %d rows after the restore, want 7", n)
		}
		res = must(tg.Insert(ctx(t), id, store.InsertAppend, itemsData(t, makeItems(9, 9))))(t)
		if res.Version != 5 {
			t.Fatalf("write after restore made version %d, want 5", res.Version)
		}
		_, err := tg.Restore(ctx(t), id, 99)
		wantCode(t, err, store.CodeTableVersionNotFound)
	})

	Subtest(t, "QueryErrors", func(t T) {
		tg := s.dataTarget(t)
		id := createItems(t, tg, "items", 3)
		for _, tc := range []struct {
			name  string
			table []string
			q     store.Query
			want  store.Code
		}{
			{"MissingTable", []string{"missing"}, store.Query{}, store.CodeTableNotFound},
			{"UnknownFilterColumn", id, store.Query{Filter: "nope = 1"}, store.CodeTableColumnNotFound},
			{"UnknownProjectedColumn", id, store.Query{Projection: store.Projection{Columns: []string{"nope"}}}, store.CodeTableColumnNotFound},
			{"BadFilter", id, store.Query{Filter: "id = "}, store.CodeInvalidInput},
		} {
			Subtest(t, tc.name, func(t T) {
				_, err := tg.Query(ctx(t), tc.table, tc.q)
				wantCode(t, err, tc.want)
			})
		}
	})

	Subtest(t, "Explain", func(t T) {
		tg := s.dataTarget(t)
		id := createItems(t, tg, "items", 3)
		for _, analyze := range []bool{false, true} {
			plan, err := tg.ExplainQuery(ctx(t), id, store.Query{Filter: "id > 1"}, analyze)
			noErr(t, err)
			if strings.TrimSpace(plan) == "" {
				t.Fatalf("analyze=%v: empty plan", analyze)
			}
		}
		_, err := tg.ExplainQuery(ctx(t), id, store.Query{Filter: "nope > 1"}, false)
		wantCode(t, err, store.CodeTableColumnNotFound)
	})

	Subtest(t, "Stats", func(t T) {
		tg := s.dataTarget(t)
		id := createItems(t, tg, "items", 6)
		must(tg.Delete(ctx(t), id, "id = 1"))(t)
		st := must(tg.Stats(ctx(t), id))(t)
		if st.NumRows != 5 || st.NumIndices != 0 {
			t.Fatalf("stats %+v, want 5 rows and no indexes", st)
		}
		_, err := tg.Stats(ctx(t), []string{"missing"})
		wantCode(t, err, store.CodeTableNotFound)
	})
}
