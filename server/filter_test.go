package server_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancens/lancens/gen"
	"github.com/lancens/lancens/internal/testkit/apitest"
	"github.com/lancens/lancens/internal/testkit/arrowtest"
)

// TestInMemoryFilters checks that filters evaluated over cached columns
// answer exactly what the same filters answer through SQLite. Appending
// "AND (vector IS NULL OR TRUE)" leaves a filter's meaning unchanged but
// reads a column the memory cache does not hold (a vector), so each
// filter runs both ways: in
// queries (with windows), counts and prefiltered vector searches, at the
// latest version and at one before an update and a delete.
func TestInMemoryFilters(t *testing.T) {
	s := apitest.Start(t, apitest.Options{})
	c := s.Client
	ctx := t.Context()
	schema := arrowtest.Schema("id", arrow.PrimitiveTypes.Int64, "price", arrow.PrimitiveTypes.Float64,
		"name", arrow.BinaryTypes.String, "ok", arrow.FixedWidthTypes.Boolean, "day", arrow.FixedWidthTypes.Date32,
		"vector", arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Float32))
	var rows []string
	for i := range 300 {
		price, name, ok := fmt.Sprint(float64(i%37)*2.5), fmt.Sprintf("%q", fmt.Sprintf("item-%d", i%23)), fmt.Sprint(i%3 == 0)
		if i%11 == 0 {
			price = "null"
		}
		if i%13 == 0 {
			name = "null"
		}
		if i%17 == 0 {
			ok = "null"
		}
		rows = append(rows, fmt.Sprintf(`{"id":%d,"price":%s,"name":%s,"ok":%s,"day":%d,"vector":[%d,%d]}`, i, price, name, ok, 19000+i%50, i%19, i%7))
	}
	if _, err := c.CreateTable(ctx, []string{"f"}, schema, []arrow.RecordBatch{arrowtest.Record(t, schema, "["+strings.Join(rows, ",")+"]")}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Update(ctx, []string{"f"}, [][2]string{{"price", "price + 1"}, {"name", "upper(name)"}}, "id % 5 = 0"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Delete(ctx, []string{"f"}, "id % 7 = 0"); err != nil {
		t.Fatal(err)
	}
	filters := []string{
		"price > 40",
		"price > 40 AND ok",
		"price IS NULL OR name = 'item-4'",
		"NOT (price BETWEEN 10 AND 50)",
		"name LIKE 'ITEM-1%' OR name ILIKE 'item-2_'",
		"name IN ('item-3', 'ITEM-5', 'nope')",
		"ok IS NOT TRUE",
		"day >= date '2022-01-20' AND id % 4 = 1",
		"coalesce(price, -1) < 0",
		"lower(name) = 'item-10' AND price * 2 > 20",
		"_rowid < 100",
		"id > 1000",
	}
	ids := func(q gen.QueryTableRequest) string {
		return column(t, query(t, c, "f", q), "id")
	}
	for _, version := range []*int64{nil, ptr(int64(1))} {
		for _, filter := range filters {
			sqlFilter := "(" + filter + ") AND (vector IS NULL OR TRUE)"
			t.Run(fmt.Sprintf("v%v/%s", deref(version), filter), func(t *testing.T) {
				if plan := explain(t, s, filter); !strings.Contains(plan, "in memory") {
					t.Fatalf("%q is not evaluated in memory:\n%s", filter, plan)
				}
				for _, window := range [][2]int{{0, 0}, {5, 0}, {5, 3}, {0, 7}} {
					q := gen.QueryTableRequest{K: window[0], Offset: ptr(window[1]), Filter: ptr(filter), Version: version}
					want := q
					want.Filter = ptr(sqlFilter)
					if got, exp := ids(q), ids(want); got != exp {
						t.Fatalf("window %v: in memory %s, SQLite %s", window, got, exp)
					}
				}
				got, err := c.CountRows(ctx, []string{"f"}, filter, version)
				if err != nil {
					t.Fatal(err)
				}
				exp, err := c.CountRows(ctx, []string{"f"}, sqlFilter, version)
				if err != nil {
					t.Fatal(err)
				}
				if got != exp {
					t.Fatalf("count: in memory %d, SQLite %d", got, exp)
				}
				vq := vectorQuery([]float32{3, 3}, 20)
				vq.Filter, vq.Version, vq.BypassVectorIndex = ptr(filter), version, ptr(true)
				want := vq
				want.Filter = ptr(sqlFilter)
				if got, exp := column(t, query(t, c, "f", vq), "id"), column(t, query(t, c, "f", want), "id"); got != exp {
					t.Fatalf("prefiltered search: in memory %s, SQLite %s", got, exp)
				}
			})
		}
	}
}

// explain returns the plan of a filtered scan of table f.
func explain(t *testing.T, s *apitest.Server, filter string) string {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": map[string]any{"vector": nil, "k": 0, "filter": filter}})
	status, out, _ := s.Do(t, "POST", "/v1/table/f/explain_plan", jsonHeader, body)
	var plan string
	if status != 200 || json.Unmarshal(out, &plan) != nil {
		t.Fatalf("explain_plan: %d %s", status, out)
	}
	return plan
}

func deref[T any](p *T) any {
	if p == nil {
		return "latest"
	}
	return *p
}
