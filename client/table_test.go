package client_test

import (
	"errors"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancens/lancens/client"
)

// hit is a search result row scanned into a struct.
type hit struct {
	ID       int64   `arrow:"id"`
	Text     string  `arrow:"text"`
	Distance float32 `arrow:"_distance"`
	Score    float32 `arrow:"_score"`
}

func ids[T any](rows []T, id func(T) int64) []int64 {
	out := make([]int64, len(rows))
	for i, r := range rows {
		out[i] = id(r)
	}
	return out
}

func hitIDs(rows []hit) []int64 { return ids(rows, func(h hit) int64 { return h.ID }) }

func TestVectorSearch(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	tbl := e.docsTable(t, 12, "vs")
	for _, tc := range []struct {
		name string
		q    *client.Query
		want []int64
	}{
		{"Nearest", tbl.Search([]float32{5, 2, 1, 0}).Limit(3), []int64{5, 4, 6}},
		{"DefaultLimit", tbl.Search([]float32{0, 0, 1, 0}), []int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}},
		{"Prefilter", tbl.Search([]float32{5, 2, 1, 0}).Where("id > 5").Limit(2), []int64{6, 7}},
		// The filter applies to the 3 nearest rows (5, 4, 6).
		{"Postfilter", tbl.Search([]float32{5, 2, 1, 0}).Where("id > 5").Prefilter(false).Limit(3), []int64{6}},
		{"DistanceRange", tbl.Search([]float32{5, 2, 1, 0}).DistanceRange(client.Ptr(float32(0.5)), client.Ptr(float32(6))).Limit(5), []int64{4, 6, 7}},
		{"Cosine", tbl.Search([]float32{1, 0, 0, 0}).DistanceType(client.DistanceCosine).Column("vector").Limit(1), []int64{9}},
		{"Exact", tbl.Search([]float32{5, 2, 1, 0}).BypassVectorIndex().Nprobes(4).RefineFactor(2).Ef(16).Limit(1), []int64{5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := client.ScanAll[hit](ctx, tc.q)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(hitIDs(got), tc.want) {
				t.Fatalf("ids %v, want %v", hitIDs(got), tc.want)
			}
			if !slices.IsSortedFunc(got, func(a, b hit) int { return int(math.Copysign(1, float64(a.Distance-b.Distance))) }) {
				t.Fatalf("results not ordered by distance: %+v", got)
			}
		})
	}
	// Offset skips the nearest rows. (Whether a limit counts the skipped
	// rows is the server's choice; lancens counts them.)
	skipped, err := client.ScanAll[hit](ctx, tbl.Search([]float32{5, 2, 1, 0}).Limit(3).Offset(1))
	if err != nil || len(skipped) < 2 || !slices.Equal(hitIDs(skipped)[:2], []int64{4, 6}) {
		t.Fatalf("offset 1: %v, %v", hitIDs(skipped), err)
	}
	// Several query vectors at once: each row says which it answers.
	var byQuery [2][]int64
	for row, err := range tbl.Query().NearestToAll([]float32{0, 0, 1, 0}, []float32{11, 2, 1, 0}).Limit(1).Iter(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		qi := row["query_index"].(int32)
		byQuery[qi] = append(byQuery[qi], row["id"].(int64))
	}
	if !slices.Equal(byQuery[0], []int64{0}) || !slices.Equal(byQuery[1], []int64{11}) {
		t.Fatalf("multi-vector results %v", byQuery)
	}
}

func TestFullTextSearch(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	tbl := e.docsTable(t, 8, "fts")
	if err := tbl.CreateIndex(ctx, "text", client.FTS{WithPosition: client.Ptr(true), Stem: client.Ptr(true)}, nil); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		q    *client.Query
		want []int64 // in any order
	}{
		{"String", tbl.FullTextSearch("mountain"), []int64{0, 3, 5}},
		{"StringInColumn", tbl.FullTextSearch("cats", "text"), []int64{1, 4, 6}},
		{"Filtered", tbl.FullTextSearch("mountain").Where("id > 0"), []int64{3, 5}},
		{"Match", tbl.Query().FullTextQuery(client.MatchQuery{Terms: "dogs cats", Operator: "And"}), []int64{1, 4}},
		{"Phrase", tbl.Query().FullTextQuery(client.PhraseQuery{Terms: "cats and dogs"}), []int64{1}},
		{"Boolean", tbl.Query().FullTextQuery(client.BooleanQuery{
			Must:    []client.FTSQuery{client.MatchQuery{Terms: "cats"}},
			MustNot: []client.FTSQuery{client.MatchQuery{Terms: "dogs"}},
		}), []int64{6}},
		{"Boost", tbl.Query().FullTextQuery(client.BoostQuery{Positive: client.MatchQuery{Terms: "river"}, Negative: client.MatchQuery{Terms: "cold"}, NegativeBoost: 0.1}), []int64{0, 2, 7}},
		{"MultiMatch", tbl.Query().FullTextQuery(client.MultiMatchQuery{Queries: []client.MatchQuery{{Terms: "goats", Column: "text"}, {Terms: "lake", Column: "text"}}}), []int64{3, 5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := client.ScanAll[hit](ctx, tc.q)
			if err != nil {
				t.Fatal(err)
			}
			if ids := hitIDs(got); !slices.Equal(slices.Sorted(slices.Values(ids)), tc.want) {
				t.Fatalf("ids %v, want %v", ids, tc.want)
			}
			for _, h := range got {
				if h.Score <= 0 {
					t.Fatalf("row %d has score %v", h.ID, h.Score)
				}
			}
		})
	}
	// A structured query without a kind is the server's to refuse.
	_, err := client.ScanAll[hit](ctx, tbl.Query().FullTextQuery(client.BoostQuery{Positive: client.MatchQuery{Terms: "x"}}))
	wantErr(t, err, client.ErrInvalidInput)
	// Boost ranks the rows the negative query matches last.
	got, err := client.ScanAll[hit](ctx, tbl.Query().FullTextQuery(client.BoostQuery{Positive: client.MatchQuery{Terms: "river"}, Negative: client.MatchQuery{Terms: "cold"}, NegativeBoost: 0.1}))
	if err != nil || got[len(got)-1].ID != 7 {
		t.Fatalf("boosted order %v, %v", hitIDs(got), err)
	}
}

func TestScans(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	tbl := e.docsTable(t, 6, "scan")
	t.Run("OrderByAndSelect", func(t *testing.T) {
		res, err := tbl.Query().Select("text", "id").Where("id < 4").OrderBy(client.Desc("rating"), client.Asc("id")).ToArrow(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Release()
		if res.Schema().Field(0).Name != "text" || res.NumCols() != 2 {
			t.Fatalf("schema %v", res.Schema())
		}
		got := res.Column(1).Data().Chunk(0).(*array.Int64).Int64Values()
		// rating: id 2 → 1, id 0 → 0, odd ids null (last).
		if !slices.Equal(got, []int64{2, 0, 1, 3}) {
			t.Fatalf("order %v", got)
		}
	})
	t.Run("SelectExprKeepsOrder", func(t *testing.T) {
		for row, err := range tbl.Query().SelectExpr("z", "id * 2").SelectExpr("a", "upper(text)").Where("id = 1").Iter(ctx) {
			if err != nil {
				t.Fatal(err)
			}
			if row["z"] != int64(2) || row["a"] != "CATS AND DOGS" {
				t.Fatalf("row %v", row)
			}
		}
		r, err := tbl.Query().SelectExpr("z", "id").SelectExpr("a", "text").Limit(1).Reader(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Release()
		if s := r.Schema(); s.Field(0).Name != "z" || s.Field(1).Name != "a" {
			t.Fatalf("columns %v", s)
		}
	})
	t.Run("LimitOffsetRowID", func(t *testing.T) {
		rows, err := client.ScanAll[struct {
			ID    int64  `arrow:"id"`
			RowID uint64 `arrow:"_rowid"`
		}](ctx, tbl.Query().OrderBy(client.Asc("id")).Limit(2).Offset(3).WithRowID())
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 2 || rows[0].ID != 3 || rows[1].ID != 4 || rows[0].RowID == rows[1].RowID {
			t.Fatalf("rows %+v", rows)
		}
	})
	t.Run("BuilderMistakes", func(t *testing.T) {
		for _, q := range []*client.Query{
			tbl.Query().Select("id").SelectExpr("x", "id"),
			tbl.Query().SelectExpr("x", "id").Select("id"),
			tbl.Query().Limit(-1),
			tbl.Query().Offset(-1),
			tbl.Query().FullTextQuery(nil),
		} {
			_, err := q.ToArrow(ctx)
			wantErr(t, err, client.ErrInvalidInput)
		}
		_, err := client.ScanAll[int](ctx, tbl.Query())
		wantErr(t, err, client.ErrInvalidInput)
		_, err = client.ScanAll[struct {
			Text int64 `arrow:"text"`
		}](ctx, tbl.Query())
		wantErr(t, err, client.ErrInvalidInput)
	})
	t.Run("IterStops", func(t *testing.T) {
		n := 0
		for _, err := range tbl.Query().Iter(ctx) {
			if err != nil {
				t.Fatal(err)
			}
			if n++; n == 2 {
				break
			}
		}
		if n != 2 {
			t.Fatalf("%d rows", n)
		}
	})
}

// TestTimeTravel covers versions, checkout by number and by tag, restore
// and schema evolution through the table handle.
func TestTimeTravel(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	tbl := e.docsTable(t, 3, "tt")
	if err := tbl.Tags().Create(ctx, "start", 1); err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.AddColumns(ctx, client.NewColumn{Name: "twice", Expression: "id * 2"}); err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Delete(ctx, "id = 0"); err != nil {
		t.Fatal(err)
	}
	if v, err := tbl.Version(ctx); err != nil || v != 3 {
		t.Fatalf("version %d, %v", v, err)
	}
	old, err := tbl.Checkout(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := old.CheckedOutVersion(); !ok || v != 1 {
		t.Fatalf("checked out %d %v", v, ok)
	}
	if n, _ := old.CountRows(ctx, ""); n != 3 {
		t.Fatalf("version 1 has %d rows", n)
	}
	if s, _ := old.Schema(ctx); s.HasField("twice") {
		t.Fatalf("version 1 schema %v", s)
	}
	if rows, _ := client.ScanAll[doc](ctx, old.Query()); len(rows) != 3 {
		t.Fatalf("version 1 query: %d rows", len(rows))
	}
	_, err = old.Add(ctx, client.Structs(docs(9, 1)))
	wantErr(t, err, client.ErrInvalidInput)
	tagged, err := tbl.CheckoutTag(ctx, "start")
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := tagged.Version(ctx); v != 1 {
		t.Fatalf("tag start reads version %d", v)
	}
	_, err = tbl.Checkout(ctx, 99)
	wantErr(t, err, client.ErrTableVersionNotFound)
	_, err = tbl.CheckoutTag(ctx, "nope")
	wantErr(t, err, client.ErrTableTagNotFound)

	latest := old.CheckoutLatest()
	if n, _ := latest.CountRows(ctx, ""); n != 2 {
		t.Fatalf("latest has %d rows", n)
	}
	if err := latest.Restore(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if n, _ := tbl.CountRows(ctx, ""); n != 3 {
		t.Fatalf("after restore %d rows", n)
	}
	if s, _ := tbl.Schema(ctx); s.HasField("twice") {
		t.Fatalf("restored schema %v", s)
	}
}

// row covers every Go type Structs maps.
type row struct {
	B    bool              `arrow:"b"`
	I8   int8              `arrow:"i8"`
	I16  int16             `arrow:"i16"`
	I32  int32             `arrow:"i32"`
	I    int               `arrow:"i"`
	U8   uint8             `arrow:"u8"`
	U16  uint16            `arrow:"u16"`
	U32  uint32            `arrow:"u32"`
	U64  uint64            `arrow:"u64"`
	F32  float32           `arrow:"f32"`
	F64  float64           `arrow:"f64"`
	S    string            `arrow:"s"`
	Bin  []byte            `arrow:"bin"`
	At   time.Time         `arrow:"at"`
	Vec  []float32         `arrow:"vec,fixed_size=3"`
	Arr  [2]int64          `arrow:"arr"`
	Tags []string          `arrow:"tags"`
	Opt  *string           `arrow:"opt"`
	Sub  sub               `arrow:"sub"`
	Nums []float64         `arrow:"nums,nullable"`
	Skip string            `arrow:"-"`
	Meta map[string]string `arrow:"-"`
	base
}

type sub struct {
	X int32   `arrow:"x"`
	Y *string `arrow:"y"`
}

type base struct {
	Embedded string `arrow:"embedded"`
}

func TestStructsRoundTrip(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	at := time.Date(2024, 5, 6, 7, 8, 9, 123456000, time.UTC)
	rows := []row{
		{B: true, I8: -8, I16: -16, I32: -32, I: -64, U8: 8, U16: 16, U32: 32, U64: 1 << 63, F32: 1.5, F64: -2.25, S: "héllo",
			Bin: []byte{0, 1, 2}, At: at, Vec: []float32{1, 2, 3}, Arr: [2]int64{4, 5}, Tags: []string{"a", "b"}, Opt: client.Ptr("set"),
			Sub: sub{X: 7, Y: client.Ptr("y")}, Nums: []float64{0.5}, Skip: "not stored", base: base{Embedded: "e"}},
		{S: "zero", Vec: []float32{0, 0, 0}, At: at.Add(time.Hour)},
	}
	schema, err := client.SchemaOf[row]()
	if err != nil {
		t.Fatal(err)
	}
	if schema.HasField("Skip") || schema.HasField("Meta") || !schema.HasField("embedded") || schema.NumFields() != 21 {
		t.Fatalf("schema %v", schema)
	}
	tbl := e.c.Table("types")
	if _, err := tbl.Create(ctx, client.Structs(rows), nil); err != nil {
		t.Fatal(err)
	}
	if got, err := tbl.Schema(ctx); err != nil || !got.Equal(schema) {
		t.Fatalf("stored schema %v, %v; want %v", got, err, schema)
	}
	got, err := client.ScanAll[row](ctx, tbl.Query().OrderBy(client.Asc("s")))
	if err != nil {
		t.Fatal(err)
	}
	want := []row{rows[0], rows[1]}
	want[0].Skip = ""
	for i := range want {
		if !rowsEqual(got[i], want[i]) {
			t.Errorf("row %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
}

func rowsEqual(a, b row) bool {
	return a.B == b.B && a.I8 == b.I8 && a.I16 == b.I16 && a.I32 == b.I32 && a.I == b.I && a.U8 == b.U8 && a.U16 == b.U16 &&
		a.U32 == b.U32 && a.U64 == b.U64 && a.F32 == b.F32 && a.F64 == b.F64 && a.S == b.S && slices.Equal(a.Bin, b.Bin) &&
		a.At.Equal(b.At) && slices.Equal(a.Vec, b.Vec) && a.Arr == b.Arr && slices.Equal(a.Tags, b.Tags) &&
		(a.Opt == nil) == (b.Opt == nil) && (a.Opt == nil || *a.Opt == *b.Opt) && a.Sub.X == b.Sub.X &&
		(a.Sub.Y == nil) == (b.Sub.Y == nil) && (a.Sub.Y == nil || *a.Sub.Y == *b.Sub.Y) && slices.Equal(a.Nums, b.Nums) &&
		a.Embedded == b.Embedded
}

func TestMaps(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int32},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "vector", Type: arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Float32), Nullable: true},
		{Name: "point", Type: arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Float64}), Nullable: true},
	}, nil)
	rows := []map[string]any{
		{"id": 1, "name": "a", "vector": []float32{1, 2}, "point": map[string]any{"x": 0.5}},
		{"id": float64(2), "vector": []any{3.0, 4}},
		{"id": uint8(3), "name": nil, "point": struct {
			X float64 `arrow:"x"`
		}{2}},
	}
	tbl := e.c.Table("maps")
	// A null struct is stored as a struct of nulls (data files of format
	// 2.0 keep no validity for structs), which point, whose x may not be
	// null, cannot be: the create is refused whole.
	_, err := tbl.Create(ctx, client.Maps(schema, rows), nil)
	wantErr(t, err, client.ErrTableSchemaValidationError)
	if _, err := tbl.Version(ctx); !errors.Is(err, client.ErrTableNotFound) {
		t.Fatalf("a refused create left a table: %v", err)
	}
	rows[1]["point"] = map[string]any{"x": 1.5}
	if _, err := tbl.Create(ctx, client.Maps(schema, rows), nil); err != nil {
		t.Fatal(err)
	}
	var got []client.Row
	for r, err := range tbl.Query().OrderBy(client.Asc("id")).Iter(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, r)
	}
	if len(got) != 3 || got[0]["name"] != "a" || !slices.Equal(got[1]["vector"].([]float32), []float32{3, 4}) ||
		got[1]["name"] != nil || got[2]["point"].(map[string]any)["x"] != 2.0 || got[2]["id"] != int32(3) {
		t.Fatalf("rows %v", got)
	}
	for name, bad := range map[string]map[string]any{
		"UnknownColumn": {"id": 1, "nope": 2},
		"NullNotNull":   {"name": "x"},
		"OutOfRange":    {"id": int64(1) << 40},
		"Fraction":      {"id": 1.5},
		"WrongType":     {"id": "one"},
		"WrongLength":   {"id": 1, "vector": []float32{1}},
		"UnknownField":  {"id": 1, "point": map[string]any{"y": 1}},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := tbl.Add(ctx, client.Maps(schema, []map[string]any{bad}))
			wantErr(t, err, client.ErrInvalidInput)
		})
	}
	if n, _ := tbl.CountRows(ctx, ""); n != 3 {
		t.Fatalf("refused rows were written: %d rows", n)
	}
}

func TestData(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	schema, _ := client.SchemaOf[doc]()
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues([]int64{1, 2}, nil)
	b.Field(1).(*array.StringBuilder).AppendValues([]string{"x", "y"}, nil)
	vb := b.Field(2).(*array.FixedSizeListBuilder)
	for range 2 {
		vb.Append(true)
		vb.ValueBuilder().(*array.Float32Builder).AppendValues([]float32{1, 2, 3, 4}, nil)
	}
	b.Field(3).AppendNull()
	b.Field(3).AppendNull()
	rec := b.NewRecordBatch()
	defer rec.Release()
	tbl := e.c.Table("data")
	if _, err := tbl.Create(ctx, client.Records(schema), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Add(ctx, client.Records(schema, rec, rec)); err != nil {
		t.Fatal(err)
	}
	r, err := array.NewRecordReader(schema, []arrow.RecordBatch{rec})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Add(ctx, client.FromReader(r)); err != nil {
		t.Fatal(err)
	}
	if n, _ := tbl.CountRows(ctx, ""); n != 6 {
		t.Fatalf("%d rows", n)
	}
	other := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	_, err = tbl.Add(ctx, client.Records(other, rec))
	wantErr(t, err, client.ErrInvalidInput)
	_, err = tbl.Add(ctx, client.Data{})
	wantErr(t, err, client.ErrInvalidInput)
	type bad struct {
		M map[string]int `arrow:"m"`
	}
	_, err = tbl.Add(ctx, client.Structs([]bad{{}}))
	wantErr(t, err, client.ErrInvalidInput)
	_, err = tbl.Add(ctx, client.Structs([]doc{{Vector: []float32{1}}}))
	wantErr(t, err, client.ErrInvalidInput)
	_, err = tbl.Add(ctx, client.Structs([]*doc{nil}))
	wantErr(t, err, client.ErrInvalidInput)
	if _, err := tbl.Add(ctx, client.Structs([]*doc{{ID: 7, Vector: make([]float32, 4)}})); err != nil {
		t.Fatalf("pointer rows: %v", err)
	}
}
