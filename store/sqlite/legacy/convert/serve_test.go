package convert_test

import (
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lancens/lancens/client"
	"github.com/lancens/lancens/internal/testkit/apitest"
	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/store/sqlite/legacy/convert"
)

// TestServeConvertedFixture serves the converted fixture over HTTP with
// the Lance engine (every response checked against openapi.yaml) and
// asks it what f365447 was asked: filtered scans, time travel by version
// and tag, a branch, an exact vector search, an ordered scan; then
// writes to a converted table.
func TestServeConvertedFixture(t *testing.T) {
	fx := loadFixture(t)
	v := newEnv(t)
	sum, err := v.run(t, convert.Options{})
	checkOnlyUnconvertible(t, fx, sum, err)
	s := apitest.Start(t, apitest.Options{Store: v.db, Warehouse: v.wh.Root()})
	ctx := t.Context()

	for _, q := range fx.Queries {
		if q.Branch != "" {
			// The Go client has no branch reads: through the engine.
			got, err := s.Data.OnBranch(q.Branch).Query(ctx, q.Table, q.Query)
			check(t, err)
			sameRows(t, q.Comment, answer(t, q.Answer), got)
			continue
		}
		tbl := s.Client.Table(q.Table...)
		if q.Query.Version != nil {
			tbl, err = tbl.Checkout(ctx, *q.Query.Version)
			check(t, err)
		}
		cq := tbl.Query()
		if vs := q.Query.Vector; vs != nil {
			cq = tbl.Search(vs.Vectors[0]).Column(vs.Column).DistanceType(client.DistanceType(vs.Metric))
			if vs.BypassIndex {
				cq = cq.BypassVectorIndex()
			}
		}
		if q.Query.Filter != "" {
			cq = cq.Where(q.Query.Filter)
		}
		if cols := q.Query.Projection.Columns; len(cols) > 0 {
			cq = cq.Select(cols...)
		}
		if q.Query.Limit > 0 {
			cq = cq.Limit(int(q.Query.Limit))
		}
		for _, k := range q.Query.OrderBy {
			cq = cq.OrderBy(client.SortKey{Column: k.Column, Ascending: !k.Descending, NullsFirst: k.NullsFirst})
		}
		sameRows(t, q.Comment, answer(t, q.Answer), result(t, cq))
	}

	// A tag names the version it named.
	docs := s.Client.Table("fx", "docs")
	tagged, err := docs.CheckoutTag(ctx, "before-schema")
	check(t, err)
	var docsTable fixtureTable
	for _, ft := range fx.Tables {
		if strings.Join(ft.ID, "$") == "fx$docs" {
			docsTable = ft
		}
	}
	sameRows(t, "tag before-schema", answer(t, docsTable.Branches["main"][5]), result(t, tagged.Query()))

	// A converted table takes writes: the next version is the one after
	// the row store's last.
	want := answer(t, docsTable.Branches["main"][13])
	schema, err := docs.Schema(ctx)
	check(t, err)
	rows := `[{"id": 9000, "text": "after the conversion", "category": "alpha", "tags": ["new"], "vector": [1, 0, 0, 0, 0, 0, 0, 0]}]`
	rec, _, err := array.RecordFromJSON(nil, schema, strings.NewReader(rows))
	check(t, err)
	res, err := docs.Add(ctx, client.Records(schema, rec))
	check(t, err)
	if res.Version != 14 {
		t.Errorf("the first write after the conversion made version %d, want 14", res.Version)
	}
	n, err := docs.CountRows(ctx, "")
	check(t, err)
	var before int64
	for _, b := range want.Batches {
		before += b.NumRows()
	}
	if n != before+1 {
		t.Errorf("%d rows after the write, want %d", n, before+1)
	}
	// The table the conversion left alone answers that it must be
	// converted.
	if _, err := s.Client.Table("fx", "mapped").CountRows(ctx, ""); store.ErrorCode(err) != store.CodeInvalidTableState {
		t.Errorf("counting the rows of the unconverted table: %v, want code 19", err)
	}
}

// result runs q and returns its rows.
func result(t *testing.T, q *client.Query) *store.Result {
	t.Helper()
	tbl, err := q.ToArrow(t.Context())
	check(t, err)
	defer tbl.Release()
	tr := array.NewTableReader(tbl, 0)
	defer tr.Release()
	res := &store.Result{Schema: tbl.Schema()}
	for tr.Next() {
		rec := tr.RecordBatch()
		rec.Retain()
		res.Batches = append(res.Batches, rec)
	}
	return res
}
