package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancens/lancens/store"
)

// The data-plane cases use one table shape, "items": a key, text columns,
// a number, a list of labels, a 4-d vector and a text body for full-text
// search.
var itemsSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "category", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "price", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "qty", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	{Name: "tags", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
	{Name: "vec", Type: arrow.FixedSizeListOf(4, arrow.PrimitiveTypes.Float32), Nullable: true},
	{Name: "body", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

// item is one row of items.
type item struct {
	ID       int64     `json:"id"`
	Name     string    `json:"name"`
	Category string    `json:"category"`
	Price    float64   `json:"price"`
	Qty      int32     `json:"qty"`
	Tags     []string  `json:"tags"`
	Vec      []float32 `json:"vec"`
	Body     string    `json:"body"`
}

// bodies are the texts of the first items; later items repeat them.
var bodies = []string{
	"rivers and mountains",
	"cats and dogs",
	"mountain rivers flow north",
	"the quick brown fox",
	"dogs chase cats",
	"snow on the mountains at dawn",
	"a fox in the snow",
	"green rivers",
}

// makeItems returns items first..last: category a, b or c by id, tags from
// the id's divisors, and vectors from a fixed pseudo-random sequence, so
// that no two distances to a query tie.
func makeItems(first, last int64) []item {
	out := make([]item, 0, last-first+1)
	for id := first; id <= last; id++ {
		it := item{ID: id, Name: fmt.Sprintf("item-%02d", id), Category: string(rune('a' + id%3)),
			Price: float64(id) * 1.5, Qty: int32(id * 10), Body: bodies[(id-1)%int64(len(bodies))]}
		for _, d := range []int64{2, 3, 5} {
			if id%d == 0 {
				it.Tags = append(it.Tags, fmt.Sprintf("div%d", d))
			}
		}
		x := uint32(id*2654435761) ^ 0x9e3779b9
		for range 4 {
			x = x*1664525 + 1013904223
			it.Vec = append(it.Vec, float32(x>>20)/4096)
		}
		out = append(out, it)
	}
	return out
}

// itemsData returns items as Arrow data of itemsSchema.
func itemsData(t T, items []item) store.Data {
	t.Helper()
	b, err := json.Marshal(items)
	if err != nil {
		t.Fatalf("encode items: %v", err)
	}
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, itemsSchema, bytes.NewReader(b))
	if err != nil {
		t.Fatalf("build items: %v", err)
	}
	return store.NewData(itemsSchema, rec)
}

// recordData builds data of schema from a JSON array of row objects.
func recordData(t T, schema *arrow.Schema, rows string) store.Data {
	t.Helper()
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, schema, strings.NewReader(rows))
	if err != nil {
		t.Fatalf("build rows: %v", err)
	}
	return store.NewData(schema, rec)
}

// createItems creates table name holding items 1..n and returns its id.
func createItems(t T, tg DataTarget, name string, n int64) []string {
	t.Helper()
	id := []string{name}
	_, res, err := tg.CreateTable(ctx(t), id, store.NewTable{Data: itemsData(t, makeItems(1, n))})
	noErr(t, err)
	if res.Version != 1 {
		t.Fatalf("create %s made version %d, want 1", name, res.Version)
	}
	return id
}

// row is one result row, its values as JSON decodes them (numbers as
// float64).
type row map[string]any

// rows returns the rows of a query result.
func rows(t T, res *store.Result) []row {
	t.Helper()
	var out []row
	for _, b := range res.Batches {
		js, err := json.Marshal(b)
		if err != nil {
			t.Fatalf("read result: %v", err)
		}
		var part []row
		if err := json.Unmarshal(js, &part); err != nil {
			t.Fatalf("read result: %v", err)
		}
		out = append(out, part...)
	}
	return out
}

// query runs q and returns its rows.
func query(t T, tg store.ManagedData, id []string, q store.Query) ([]row, *store.Result) {
	t.Helper()
	res, err := tg.Query(ctx(t), id, q)
	noErr(t, err)
	return rows(t, res), res
}

// ints returns the values of an integer column.
func ints(t T, rs []row, col string) []int64 {
	t.Helper()
	out := make([]int64, len(rs))
	for i, r := range rs {
		v, ok := r[col].(float64)
		if !ok {
			t.Fatalf("row %d: column %s is %v, want a number", i, col, r[col])
		}
		out[i] = int64(v)
	}
	return out
}

// floats returns the values of a number column.
func floats(t T, rs []row, col string) []float64 {
	t.Helper()
	out := make([]float64, len(rs))
	for i, r := range rs {
		v, ok := r[col].(float64)
		if !ok {
			t.Fatalf("row %d: column %s is %v, want a number", i, col, r[col])
		}
		out[i] = v
	}
	return out
}

// sorted returns ids in ascending order.
func sorted(ids []int64) []int64 {
	out := slices.Clone(ids)
	slices.Sort(out)
	return out
}

// span returns first..last.
func span(first, last int64) []int64 {
	var out []int64
	for i := first; i <= last; i++ {
		out = append(out, i)
	}
	return out
}

// fieldNames returns the names of a schema's fields.
func fieldNames(s *arrow.Schema) []string {
	var out []string
	for _, f := range s.Fields() {
		out = append(out, f.Name)
	}
	return out
}

// count counts rows matching predicate at a version (nil: latest).
func count(t T, tg store.ManagedData, id []string, version *int64, predicate string) int64 {
	t.Helper()
	n, _, err := tg.CountRows(ctx(t), id, version, predicate)
	noErr(t, err)
	return n
}

// near reports whether a and b agree to 1e-4, relatively for large values.
func near(a, b float64) bool {
	return math.Abs(a-b) <= 1e-4*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

// indexTimeout bounds the wait for an index build.
const indexTimeout = 2 * time.Minute

// waitIndex waits until index name of table id is built and returns its
// description. It fails the case when the build fails or takes too long.
func waitIndex(t T, tg DataTarget, id []string, name string) *store.IndexInfo {
	t.Helper()
	deadline := time.Now().Add(indexTimeout)
	for {
		list, _, err := tg.ListIndices(ctx(t), id, nil, store.Page{})
		noErr(t, err)
		status := ""
		for _, ix := range list {
			if ix.Name == name {
				status = strings.ToUpper(ix.Status)
			}
		}
		switch {
		case status == store.IndexSucceeded:
			return must(tg.DescribeIndex(ctx(t), id, name, nil))(t)
		case status == store.IndexFailed:
			t.Fatalf("index %s: build failed", name)
		case status == "":
			t.Fatalf("index %s is not listed", name)
		case time.Now().After(deadline):
			t.Fatalf("index %s still %s after %s", name, status, indexTimeout)
		}
		select {
		case <-ctx(t).Done():
			t.Fatalf("index %s: %v", name, ctx(t).Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}
