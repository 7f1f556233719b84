package conformance

import (
	"cmp"
	"slices"
	"strings"

	"github.com/lancens/lancens/store"
)

func (s *suite) scalarIndexes(t T) {
	Subtest(t, "Lifecycle", func(t T) {
		tg := s.dataTarget(t)
		id := createItems(t, tg, "items", 12)
		specs := []store.IndexSpec{
			{Name: "id_idx", Column: "id", Type: store.IndexBTree},
			{Name: "category_idx", Column: "category", Type: store.IndexBitmap},
			{Name: "tags_idx", Column: "tags", Type: store.IndexLabelList},
		}
		for _, spec := range specs {
			_, err := tg.CreateIndex(ctx(t), id, spec)
			noErr(t, err)
		}
		// The spec leaves open whether rows whose value is null count as
		// indexed: 3 of the 12 rows have no tags.
		indexed := map[string][]int64{"id_idx": {12}, "category_idx": {12}, "tags_idx": {9, 12}}
		for _, spec := range specs {
			ix := waitIndex(t, tg, id, spec.Name)
			if !strings.EqualFold(ix.Type, spec.Type) || !slices.Contains(indexed[spec.Name], ix.NumIndexedRows) {
				t.Errorf("index %s: type %s, %d indexed rows; want %s, %v", spec.Name, ix.Type, ix.NumIndexedRows, spec.Type, indexed[spec.Name])
			}
			if !slices.Equal(ix.Columns, []string{spec.Column}) {
				t.Errorf("index %s covers %q, want [%s]", spec.Name, ix.Columns, spec.Column)
			}
		}
		if got := indexNames(t, tg, id); !slices.Equal(got, []string{"category_idx", "id_idx", "tags_idx"}) {
			t.Fatalf("listed indexes %q", got)
		}
		if st := must(tg.Stats(ctx(t), id))(t); st.NumIndices != 3 {
			t.Fatalf("stats count %d indexes, want 3", st.NumIndices)
		}

		must(tg.DropIndex(ctx(t), id, "category_idx"))(t)
		if got := indexNames(t, tg, id); !slices.Equal(got, []string{"id_idx", "tags_idx"}) {
			t.Fatalf("indexes after a drop %q", got)
		}
		_, err := tg.DescribeIndex(ctx(t), id, "category_idx", nil)
		wantCode(t, err, store.CodeTableIndexNotFound)
		_, err = tg.DropIndex(ctx(t), id, "category_idx")
		wantCode(t, err, store.CodeTableIndexNotFound)
	})

	Subtest(t, "Queries", func(t T) {
		tg := s.dataTarget(t)
		id := createItems(t, tg, "items", 12)
		for _, spec := range []store.IndexSpec{
			{Column: "id", Type: store.IndexBTree},
			{Column: "category", Type: store.IndexBitmap},
			{Column: "tags", Type: store.IndexLabelList},
		} {
			_, err := tg.CreateIndex(ctx(t), id, spec)
			noErr(t, err)
			// Without a name, an index is called after its column.
			waitIndex(t, tg, id, spec.Column+"_idx")
		}
		check := func(filter string, want []int64) {
			t.Helper()
			rs, _ := query(t, tg, id, store.Query{Filter: filter})
			if got := sorted(ints(t, rs, "id")); !slices.Equal(got, want) {
				t.Errorf("filter %q: ids %v, want %v", filter, got, want)
			}
		}
		check("id = 5", []int64{5})
		check("id > 9", []int64{10, 11, 12})
		check("category = 'b'", []int64{1, 4, 7, 10})
		check("category IN ('a', 'c') AND id < 4", []int64{2, 3})
		check("array_has_any(tags, ['div5'])", []int64{5, 10})
		check("array_has_all(tags, ['div2', 'div3'])", []int64{6, 12})
		// Rows written after the build are found too.
		must(tg.Insert(ctx(t), id, store.InsertAppend, itemsData(t, makeItems(13, 15))))(t)
		check("id > 12", []int64{13, 14, 15})
		check("category = 'b'", []int64{1, 4, 7, 10, 13})
		check("array_has_any(tags, ['div5'])", []int64{5, 10, 15})
		must(tg.Delete(ctx(t), id, "id = 10"))(t)
		check("category = 'b'", []int64{1, 4, 7, 13})
	})

	Subtest(t, "Errors", func(t T) {
		tg := s.dataTarget(t)
		id := createItems(t, tg, "items", 6)
		_, err := tg.CreateIndex(ctx(t), id, store.IndexSpec{Name: "k", Column: "id", Type: store.IndexBTree})
		noErr(t, err)
		waitIndex(t, tg, id, "k")
		for _, tc := range []struct {
			name  string
			table []string
			spec  store.IndexSpec
			want  store.Code
		}{
			{"NameTaken", id, store.IndexSpec{Name: "k", Column: "price", Type: store.IndexBTree}, store.CodeTableIndexAlreadyExists},
			{"MissingColumn", id, store.IndexSpec{Name: "x", Column: "nope", Type: store.IndexBTree}, store.CodeTableColumnNotFound},
			{"MissingTable", []string{"missing"}, store.IndexSpec{Name: "x", Column: "id", Type: store.IndexBTree}, store.CodeTableNotFound},
		} {
			Subtest(t, tc.name, func(t T) {
				_, err := tg.CreateIndex(ctx(t), tc.table, tc.spec)
				wantCode(t, err, tc.want)
			})
		}
		_, _, err = tg.ListIndices(ctx(t), []string{"missing"}, nil, store.Page{})
		wantCode(t, err, store.CodeTableNotFound)
		_, err = tg.DescribeIndex(ctx(t), id, "nope", nil)
		wantCode(t, err, store.CodeTableIndexNotFound)
		if got := indexNames(t, tg, id); !slices.Equal(got, []string{"k"}) {
			t.Fatalf("failed creates changed the indexes: %q", got)
		}
	})
}

// indexNames lists the names of a table's indexes, sorted.
func indexNames(t T, tg DataTarget, id []string) []string {
	t.Helper()
	var out []string
	token := ""
	for {
		list, next, err := tg.ListIndices(ctx(t), id, nil, store.Page{Token: token})
		noErr(t, err)
		for _, ix := range list {
			out = append(out, ix.Name)
		}
		if next == "" {
			slices.Sort(out)
			return out
		}
		token = next
	}
}

func textQuery(q store.FtsQuery) store.Query {
	return store.Query{Limit: 50, Text: &store.TextSearch{Query: q}}
}

func match(terms string) store.FtsQuery {
	return store.FtsQuery{Match: &store.FtsMatch{Terms: terms}}
}

func (s *suite) fullTextSearch(t T) {
	// items 1..16 repeat the eight bodies twice: body i is items i+1 and i+9.
	withBody := func(idx ...int64) []int64 {
		var out []int64
		for _, i := range idx {
			out = append(out, i+1, i+9)
		}
		return sorted(out)
	}
	setup := func(t T) (DataTarget, []string) {
		tg := s.dataTarget(t)
		id := createItems(t, tg, "items", 16)
		yes := true
		_, err := tg.CreateIndex(ctx(t), id, store.IndexSpec{Name: "body_idx", Column: "body", Type: store.IndexInverted,
			Text: store.TextIndexParams{WithPosition: &yes}})
		noErr(t, err)
		if ix := waitIndex(t, tg, id, "body_idx"); !strings.EqualFold(ix.Type, store.IndexInverted) {
			t.Fatalf("index type %q, want INVERTED", ix.Type)
		}
		return tg, id
	}
	search := func(t T, tg DataTarget, id []string, q store.Query, want []int64) {
		t.Helper()
		rs, res := query(t, tg, id, q)
		if got := sorted(ints(t, rs, "id")); !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Fatalf("matched ids %v, want %v", got, want)
		}
		if len(rs) == 0 {
			return
		}
		if !slices.Contains(fieldNames(res.Schema), "_score") {
			t.Fatalf("full-text result fields %q lack _score", fieldNames(res.Schema))
		}
		scores := floats(t, rs, "_score")
		if !slices.IsSortedFunc(scores, func(a, b float64) int { return cmp.Compare(b, a) }) || scores[len(scores)-1] <= 0 {
			t.Fatalf("scores %v are not positive and descending", scores)
		}
	}

	Subtest(t, "Match", func(t T) {
		tg, id := setup(t)
		for _, tc := range []struct {
			name string
			q    store.FtsQuery
			want []int64
		}{
			{"OneTerm", match("cats"), withBody(1, 4)},
			{"AnyTerm", match("fox snow"), withBody(3, 5, 6)},
			{"AllTerms", store.FtsQuery{Match: &store.FtsMatch{Terms: "fox snow", Operator: "AND"}}, withBody(6)},
			{"Column", store.FtsQuery{Match: &store.FtsMatch{Terms: "dogs", Column: "body"}}, withBody(1, 4)},
			{"NoMatch", match("zebra"), nil},
		} {
			Subtest(t, tc.name, func(t T) { search(t, tg, id, textQuery(tc.q), tc.want) })
		}
	})

	Subtest(t, "Phrase", func(t T) {
		tg, id := setup(t)
		search(t, tg, id, textQuery(store.FtsQuery{Phrase: &store.FtsPhrase{Terms: "quick brown", Column: "body"}}), withBody(3))
		search(t, tg, id, textQuery(store.FtsQuery{Phrase: &store.FtsPhrase{Terms: "brown quick", Column: "body"}}), nil)
	})

	Subtest(t, "Boolean", func(t T) {
		tg, id := setup(t)
		q := store.FtsQuery{Boolean: &store.FtsBoolean{Must: []store.FtsQuery{match("cats")}, MustNot: []store.FtsQuery{match("chase")}}}
		search(t, tg, id, textQuery(q), withBody(1))
		q = store.FtsQuery{Boolean: &store.FtsBoolean{Should: []store.FtsQuery{match("quick"), match("green")}}}
		search(t, tg, id, textQuery(q), withBody(3, 7))
	})

	Subtest(t, "FilterAndLimit", func(t T) {
		tg, id := setup(t)
		q := textQuery(match("cats"))
		q.Filter = "id > 5"
		search(t, tg, id, q, []int64{10, 13})
		q = textQuery(match("cats"))
		q.Limit = 2
		rs, _ := query(t, tg, id, q)
		if len(rs) != 2 {
			t.Fatalf("k 2 gave %d rows", len(rs))
		}
	})

	Subtest(t, "Prewarm", func(t T) {
		// prewarmIndex (the LanceDB remote dialect's route) loads the
		// index; later writes are still found.
		tg, id := setup(t)
		noErr(t, tg.PrewarmIndex(ctx(t), id, "body_idx"))
		search(t, tg, id, textQuery(match("cats")), withBody(1, 4))
		must(tg.Insert(ctx(t), id, store.InsertAppend, itemsData(t, makeItems(17, 18))))(t) // bodies 0 and 1
		noErr(t, tg.PrewarmIndex(ctx(t), id, "body_idx"))
		search(t, tg, id, textQuery(match("cats")), append(withBody(1, 4), 18))
		wantCode(t, tg.PrewarmIndex(ctx(t), id, "body"), store.CodeTableIndexNotFound)
	})

	Subtest(t, "Writes", func(t T) {
		tg, id := setup(t)
		must(tg.Insert(ctx(t), id, store.InsertAppend, itemsData(t, makeItems(17, 18))))(t) // bodies 0 and 1
		search(t, tg, id, textQuery(match("cats")), append(withBody(1, 4), 18))
		must(tg.Delete(ctx(t), id, "id = 2"))(t)
		search(t, tg, id, textQuery(match("cats")), []int64{5, 10, 13, 18})
		must(tg.Update(ctx(t), id, []store.ColumnUpdate{{Path: "body", Expr: "'zebra crossing'"}}, "id = 5"))(t)
		search(t, tg, id, textQuery(match("zebra")), []int64{5})
		search(t, tg, id, textQuery(match("cats")), []int64{10, 13, 18})
	})
}
