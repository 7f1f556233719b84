package server_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/lancens/lancens/client"
	"github.com/lancens/lancens/gen"
	"github.com/lancens/lancens/internal/testkit/apitest"
	"github.com/lancens/lancens/internal/testkit/arrowtest"
	"github.com/lancens/lancens/store"
)

// peopleSchema is the table most data tests use.
var peopleSchema = arrowtest.Schema("id", arrow.PrimitiveTypes.Int64, "name", arrow.BinaryTypes.String, "age", arrow.PrimitiveTypes.Int32)

const peopleRows = `[{"id":1,"name":"ann","age":31},{"id":2,"name":"bob","age":25},{"id":3,"name":"cat","age":null},{"id":4,"name":"Dan","age":40}]`

func createPeople(t *testing.T, c *client.Client, name string) {
	t.Helper()
	if _, err := c.CreateTable(t.Context(), []string{name}, peopleSchema, []arrow.RecordBatch{arrowtest.Record(t, peopleSchema, peopleRows)}, nil); err != nil {
		t.Fatal(err)
	}
}

// query runs q and returns the result as one batch.
func query(t *testing.T, c *client.Client, table string, q gen.QueryTableRequest) arrow.RecordBatch {
	t.Helper()
	res, err := c.Query(t.Context(), []string{table}, clientQuery(q))
	if err != nil {
		t.Fatal(err)
	}
	return arrowtest.Concat(t, res.Schema, res.Batches)
}

// column returns a result column as JSON, for compact comparisons.
func column(t *testing.T, rec arrow.RecordBatch, name string) string {
	t.Helper()
	idx := rec.Schema().FieldIndices(name)
	if len(idx) == 0 {
		t.Fatalf("result has no column %q (schema %s)", name, rec.Schema())
	}
	b, err := json.Marshal(rec.Column(idx[0]))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// clientQuery returns the client's form of q, the server's request: the
// tests write queries as the server reads them, and send them through the
// client. Column aliases come in the order of their names.
func clientQuery(q gen.QueryTableRequest) client.QueryRequest {
	r := client.QueryRequest{K: q.K, Offset: valueOf(q.Offset), Filter: valueOf(q.Filter), Version: q.Version, Branch: valueOf(q.Branch),
		VectorColumn: valueOf(q.VectorColumn), DistanceType: client.DistanceType(valueOf(q.DistanceType)),
		Nprobes: valueOf(q.Nprobes), Ef: valueOf(q.Ef), RefineFactor: int(valueOf(q.RefineFactor)), Prefilter: q.Prefilter,
		LowerBound: q.LowerBound, UpperBound: q.UpperBound, BypassVectorIndex: valueOf(q.BypassVectorIndex),
		FastSearch: valueOf(q.FastSearch), WithRowID: valueOf(q.WithRowId)}
	if v := q.Vector; v != nil {
		r.Vector, r.Vectors = valueOf(v.SingleVector), valueOf(v.MultiVector)
	}
	if c := q.Columns; c != nil {
		r.Columns = valueOf(c.ColumnNames)
		for _, name := range slices.Sorted(maps.Keys(valueOf(c.ColumnAliases))) {
			r.Aliases = append(r.Aliases, client.ColumnAlias{Name: name, Expr: (*c.ColumnAliases)[name]})
		}
	}
	if f := q.FullTextQuery; f != nil && f.StringQuery != nil {
		r.Text, r.TextColumns = f.StringQuery.Query, valueOf(f.StringQuery.Columns)
	}
	return r
}

// valueOf returns what p points to, or the zero value for nil.
func valueOf[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func TestTypeRoundTrip(t *testing.T) {
	s := apitest.Start(t, apitest.Options{})
	point := arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		arrow.Field{Name: "inner", Type: arrow.StructOf(arrow.Field{Name: "label", Type: arrow.BinaryTypes.String, Nullable: true}), Nullable: true})
	// stored is what a case's values read back as, when not the values
	// themselves: the Lance engine writes format 2.0 data files, which
	// keep no nulls of structs of their own (a null struct reads back as a
	// struct of nulls, as Lance reads it).
	cases := []struct {
		name   string
		dt     arrow.DataType
		values string
		stored string
	}{
		{"null", arrow.Null, `[null, null, null]`, ""},
		{"bool", arrow.FixedWidthTypes.Boolean, `[true, null, false]`, ""},
		{"int8", arrow.PrimitiveTypes.Int8, `[-128, null, 127]`, ""},
		{"int16", arrow.PrimitiveTypes.Int16, `[-32768, 7, null]`, ""},
		{"int32", arrow.PrimitiveTypes.Int32, `[null, -2147483648, 2147483647]`, ""},
		{"int64", arrow.PrimitiveTypes.Int64, `[-9223372036854775808, null, 9223372036854775807]`, ""},
		{"uint8", arrow.PrimitiveTypes.Uint8, `[0, 255, null]`, ""},
		{"uint16", arrow.PrimitiveTypes.Uint16, `[65535, null, 1]`, ""},
		{"uint32", arrow.PrimitiveTypes.Uint32, `[4294967295, 0, null]`, ""},
		{"uint64", arrow.PrimitiveTypes.Uint64, `[18446744073709551615, null, 42]`, ""},
		{"float16", arrow.FixedWidthTypes.Float16, `[1.5, null, -0.25]`, ""},
		{"float32", arrow.PrimitiveTypes.Float32, `[0.1, 3.4028235e38, null]`, ""},
		{"float64", arrow.PrimitiveTypes.Float64, `[0.1, null, -1e-300]`, ""},
		{"utf8", arrow.BinaryTypes.String, `["héllo", null, ""]`, ""},
		{"large_utf8", arrow.BinaryTypes.LargeString, `[null, "x", "名前"]`, ""},
		{"binary", arrow.BinaryTypes.Binary, `["AAEC", null, ""]`, ""},
		{"large_binary", arrow.BinaryTypes.LargeBinary, `["/w==", "", null]`, ""},
		{"fixed_size_binary", &arrow.FixedSizeBinaryType{ByteWidth: 3}, `["AAEC", null, "AQID"]`, ""},
		{"date32", arrow.FixedWidthTypes.Date32, `["1970-01-01", null, "2024-02-29"]`, ""},
		{"date64", arrow.FixedWidthTypes.Date64, `["2024-02-29", null, "1969-12-31"]`, ""},
		{"timestamp_s", &arrow.TimestampType{Unit: arrow.Second}, `[1704164645, null, -2208988800]`, ""},
		{"timestamp_ms_utc", &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}, `[1704164645123, null, 2147483648000]`, ""},
		{"timestamp_us_zone", &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "America/New_York"}, `[null, 1717243200000001, 946684799999999]`, ""},
		{"timestamp_ns", &arrow.TimestampType{Unit: arrow.Nanosecond}, `[1704164645123456789, null, 0]`, ""},
		{"time32_s", arrow.FixedWidthTypes.Time32s, `["00:00:01", null, "23:59:59"]`, ""},
		{"time32_ms", arrow.FixedWidthTypes.Time32ms, `[null, "12:34:56.789", "00:00:00"]`, ""},
		{"time64_us", arrow.FixedWidthTypes.Time64us, `["01:02:03.000004", null, "23:00:00"]`, ""},
		{"time64_ns", arrow.FixedWidthTypes.Time64ns, `["01:02:03.000000005", "00:00:00", null]`, ""},
		{"duration_s", arrow.FixedWidthTypes.Duration_s, `[5, null, -3]`, ""},
		{"duration_ns", arrow.FixedWidthTypes.Duration_ns, `[null, 1000000000, 7]`, ""},
		{"decimal128_small", &arrow.Decimal128Type{Precision: 10, Scale: 2}, `["12345678.90", "-0.01", null]`, ""},
		{"decimal128_large", &arrow.Decimal128Type{Precision: 38, Scale: 10}, `["1234567890123456789012345678.0123456789", null, "-0.0000000001"]`, ""},
		{"decimal256", &arrow.Decimal256Type{Precision: 50, Scale: 5}, `["123456789012345678901234567890123456789012345.12345", null, "1"]`, ""},
		{"list_int32", arrow.ListOf(arrow.PrimitiveTypes.Int32), `[[1, null, 3], null, []]`, ""},
		{"large_list_utf8", arrow.LargeListOf(arrow.BinaryTypes.String), `[["a", "b"], [], null]`, ""},
		{"list_struct", arrow.ListOf(arrow.StructOf(arrow.Field{Name: "k", Type: arrow.PrimitiveTypes.Int8, Nullable: true})), `[[{"k": 1}, null], null, [{"k": null}]]`,
			`[[{"k": 1}, {"k": null}], null, [{"k": null}]]`}, // data files of format 2.0 keep no validity for structs
		{"list_float32", arrow.ListOf(arrow.PrimitiveTypes.Float32), `[[0.1, 1.5e-7], null, [3.4028235e38]]`, ""},
		{"list_decimal", arrow.ListOf(&arrow.Decimal128Type{Precision: 12, Scale: 3}), `[["1.500", "-0.001"], null, []]`, ""},
		{"vector_f32", arrow.FixedSizeListOf(4, arrow.PrimitiveTypes.Float32), `[[0.1, 0.2, 0.3, 0.4], null, [1, 2, 3, 4]]`, ""},
		{"vector_f16", arrow.FixedSizeListOf(2, arrow.FixedWidthTypes.Float16), `[[0.5, 1], [2, 3], null]`, ""},
		{"vector_f64", arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Float64), `[[0.1, 0.2], null, [1e300, -1]]`, ""},
		{"vector_u8", arrow.FixedSizeListOf(3, arrow.PrimitiveTypes.Uint8), `[[0, 128, 255], null, [1, 2, 3]]`, ""},
		{"fixed_list_int64", arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Int64), `[[1, 2], null, [3, null]]`, ""},
		{"struct", point, `[{"x": 1, "inner": {"label": "a"}}, null, {"x": null, "inner": null}]`,
			`[{"x": 1, "inner": {"label": "a"}}, {"x": null, "inner": {"label": null}}, {"x": null, "inner": {"label": null}}]`},
		// Lance stores no 32- or 64-bit decimals and no maps (TestUnsupportedTypes).
	}
	var fields []arrow.Field
	var cols []arrow.Array
	for _, tc := range cases {
		fields = append(fields, arrow.Field{Name: tc.name, Type: tc.dt, Nullable: true})
		cols = append(cols, arrowtest.Column(t, tc.dt, tc.values))
	}
	schema := arrow.NewSchema(fields, nil)
	rec := array.NewRecordBatch(schema, cols, 3)
	ctx := t.Context()
	if _, err := s.Client.CreateTable(ctx, []string{"types"}, schema, []arrow.RecordBatch{rec}, nil); err != nil {
		t.Fatal(err)
	}
	got := query(t, s.Client, "types", gen.QueryTableRequest{})
	if !got.Schema().Equal(schema) {
		t.Fatalf("schema after round trip:\n%s\nwant\n%s", got.Schema(), schema)
	}
	for i, tc := range cases {
		want := rec.Column(i)
		if tc.stored != "" {
			want = arrowtest.Column(t, tc.dt, tc.stored)
		}
		if !array.Equal(got.Column(i), want) {
			t.Errorf("%s: got %v, want %v", tc.name, got.Column(i), want)
		}
	}
	// Appending the same data works (the schema matches exactly), and a
	// dictionary column is stored as its values.
	if _, err := s.Client.Insert(ctx, []string{"types"}, schema, []arrow.RecordBatch{rec}, ""); err != nil {
		t.Fatal(err)
	}
	dictType := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}
	dictSchema := arrowtest.Schema("d", dictType)
	dict := arrowtest.Column(t, dictType, `["x", null, "y", "x"]`)
	if _, err := s.Client.CreateTable(ctx, []string{"dict"}, dictSchema, []arrow.RecordBatch{array.NewRecordBatch(dictSchema, []arrow.Array{dict}, 4)}, nil); err != nil {
		t.Fatal(err)
	}
	if got := column(t, query(t, s.Client, "dict", gen.QueryTableRequest{}), "d"); got != `["x",null,"y","x"]` {
		t.Fatalf("dictionary column read back as %s", got)
	}
}

func TestUnsupportedTypes(t *testing.T) {
	s := apitest.Start(t, apitest.Options{})
	cases := []struct {
		name string
		dt   arrow.DataType
	}{
		{"interval", arrow.FixedWidthTypes.MonthInterval},
		{"union", arrow.SparseUnionOf([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int32}}, []arrow.UnionTypeCode{0})},
		{"run_end", arrow.RunEndEncodedOf(arrow.PrimitiveTypes.Int32, arrow.BinaryTypes.String)},
		{"list_of_interval", arrow.ListOf(arrow.FixedWidthTypes.DayTimeInterval)},
		{"decimal32", &arrow.Decimal32Type{Precision: 9, Scale: 3}},
		{"decimal64", &arrow.Decimal64Type{Precision: 18, Scale: 4}},
		{"map", arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int64)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			schema := arrowtest.Schema("ok", arrow.PrimitiveTypes.Int64, "bad_"+tc.name, tc.dt)
			_, err := s.Client.CreateTable(t.Context(), []string{"t_" + tc.name}, schema, nil, nil)
			if !errors.Is(err, client.ErrTableSchemaValidationError) || !strings.Contains(err.Error(), "bad_"+tc.name) {
				t.Fatalf("got %v, want code 20 naming the field", err)
			}
			if ok, _ := s.Client.TableExists(t.Context(), []string{"t_" + tc.name}, nil); ok {
				t.Fatal("a refused create left a table")
			}
		})
	}
}

func TestCreateTable(t *testing.T) {
	s := apitest.Start(t, apitest.Options{})
	ctx := t.Context()
	c := s.Client
	rec := arrowtest.Record(t, peopleSchema, peopleRows)
	created, err := c.CreateTable(ctx, []string{"p"}, peopleSchema, []arrow.RecordBatch{rec},
		&client.CreateTableOptions{Properties: map[string]string{"team": "x"}, StorageOptions: map[string]string{"region": "eu"}})
	if err != nil {
		t.Fatal(err)
	}
	wantLocation := s.Warehouse.Root() + "/p-" // a Lance dataset in the warehouse
	if created.Version != 1 || !strings.HasPrefix(created.Location, wantLocation) || created.Properties["team"] != "x" || created.StorageOptions["region"] != "eu" {
		t.Fatalf("created %+v", created)
	}
	for _, tc := range []struct {
		mode     string
		wantCode store.Code // -1: success
		version  int64
		rows     int64
	}{
		{"", store.CodeTableAlreadyExists, 0, 4},
		{"create", store.CodeTableAlreadyExists, 0, 4},
		{"exist_ok", -1, 1, 4},
		{"ExistOk", -1, 1, 4},
		{"overwrite", -1, 2, 2},
		{"bogus", store.CodeInvalidInput, 0, 2},
	} {
		t.Run("mode "+tc.mode, func(t *testing.T) {
			two := arrowtest.Record(t, peopleSchema, `[{"id":9,"name":"z","age":1},{"id":8,"name":"y","age":2}]`)
			got, err := c.CreateTable(ctx, []string{"p"}, peopleSchema, []arrow.RecordBatch{two}, &client.CreateTableOptions{Mode: client.Mode(tc.mode)})
			if tc.wantCode >= 0 {
				if store.ErrorCode(err) != tc.wantCode {
					t.Fatalf("got %v, want code %d", err, tc.wantCode)
				}
			} else if err != nil || got.Version != tc.version {
				t.Fatalf("got %+v, %v; want version %d", got, err, tc.version)
			}
			if n, err := c.CountRows(ctx, []string{"p"}, "", nil); err != nil || n != tc.rows {
				t.Fatalf("rows %d %v, want %d", n, err, tc.rows)
			}
		})
	}
	// A schema-only stream makes an empty table.
	if _, err := c.CreateTable(ctx, []string{"empty"}, peopleSchema, nil, nil); err != nil {
		t.Fatal(err)
	}
	if n, _ := c.CountRows(ctx, []string{"empty"}, "", nil); n != 0 {
		t.Fatalf("empty table has %d rows", n)
	}
	// Bad JSON in properties.
	status, body, _ := s.Do(t, "POST", "/v1/table/q/create?properties=%7Bnot-json", http.Header{"Content-Type": {"application/vnd.apache.arrow.stream"}}, streamBytes(t, peopleSchema, rec))
	if status != 400 || apitest.ErrorCode(body) != 13 {
		t.Fatalf("bad properties: %d %s", status, body)
	}
	// A declared table is materialised by create and by insert.
	for _, via := range []string{"create", "insert"} {
		if _, err := c.DeclareTable(ctx, []string{"decl-" + via}, &client.DeclareTableOptions{Properties: map[string]string{"k": "v"}}); err != nil {
			t.Fatal(err)
		}
		if via == "create" {
			_, err = c.CreateTable(ctx, []string{"decl-" + via}, peopleSchema, []arrow.RecordBatch{rec}, nil)
		} else {
			_, err = c.Insert(ctx, []string{"decl-" + via}, peopleSchema, []arrow.RecordBatch{rec}, "")
		}
		if err != nil {
			t.Fatalf("%s into a declared table: %v", via, err)
		}
		d, err := c.DescribeTable(ctx, []string{"decl-" + via}, nil)
		if err != nil || d.Version == nil || *d.Version != 1 || d.Schema == nil || d.Properties["k"] != "v" {
			t.Fatalf("materialised table: %+v %v", d, err)
		}
	}
}

// streamBytes encodes an Arrow IPC stream, with options such as compression.
func streamBytes(t *testing.T, schema *arrow.Schema, rec arrow.RecordBatch, opts ...ipc.Option) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, append([]ipc.Option{ipc.WithSchema(schema)}, opts...)...)
	if rec != nil {
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestArrowBodies(t *testing.T) {
	s := apitest.Start(t, apitest.Options{})
	createPeople(t, s.Client, "p")
	rec := arrowtest.Record(t, peopleSchema, `[{"id":10,"name":"x","age":1}]`)
	arrowCT := http.Header{"Content-Type": {"application/vnd.apache.arrow.stream"}}
	for _, tc := range []struct {
		name     string
		header   http.Header
		body     []byte
		wantCode int // -1: success
	}{
		{"LZ4", arrowCT, streamBytes(t, peopleSchema, rec, ipc.WithLZ4()), -1},
		{"ZSTD", arrowCT, streamBytes(t, peopleSchema, rec, ipc.WithZstd()), -1},
		{"NoContentType", nil, streamBytes(t, peopleSchema, rec), -1},
		{"Empty", arrowCT, []byte{}, 13},
		{"Garbage", arrowCT, []byte("definitely not arrow"), 13},
		{"Truncated", arrowCT, streamBytes(t, peopleSchema, rec)[:100], 13},
		{"WrongType", arrowCT, streamBytes(t, arrowtest.Schema("id", arrow.BinaryTypes.String), arrowtest.Record(t, arrowtest.Schema("id", arrow.BinaryTypes.String), `[{"id":"x"}]`)), 20},
		{"ExtraColumn", arrowCT, streamBytes(t, arrowtest.Schema("id", arrow.PrimitiveTypes.Int64, "zzz", arrow.PrimitiveTypes.Int64), arrowtest.Record(t, arrowtest.Schema("id", arrow.PrimitiveTypes.Int64, "zzz", arrow.PrimitiveTypes.Int64), `[{"id":1,"zzz":2}]`)), 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, _ := s.Client.CountRows(t.Context(), []string{"p"}, "", nil)
			status, body, _ := s.Do(t, "POST", "/v1/table/p/insert", tc.header, tc.body)
			after, _ := s.Client.CountRows(t.Context(), []string{"p"}, "", nil)
			if tc.wantCode < 0 {
				if status != 200 || after != before+1 {
					t.Fatalf("got %d %s, rows %d -> %d", status, body, before, after)
				}
				return
			}
			if apitest.ErrorCode(body) != tc.wantCode || after != before {
				t.Fatalf("got %d %s (rows %d -> %d), want code %d and nothing written", status, body, before, after, tc.wantCode)
			}
		})
	}
	// A chunked upload (no Content-Length) through the client works too.
	if _, err := s.Client.Insert(t.Context(), []string{"p"}, peopleSchema, []arrow.RecordBatch{rec, rec}, "append"); err != nil {
		t.Fatal(err)
	}
}

func TestWrites(t *testing.T) {
	s := apitest.Start(t, apitest.Options{})
	ctx := t.Context()
	c := s.Client
	createPeople(t, c, "p")
	id := []string{"p"}

	res, err := c.Insert(ctx, id, peopleSchema, []arrow.RecordBatch{arrowtest.Record(t, peopleSchema, `[{"id":5,"name":"eve","age":22}]`)}, "")
	if err != nil || res.Version != 2 || res.Inserted != 1 {
		t.Fatalf("append: %+v %v", res, err)
	}
	up, err := c.Update(ctx, id, [][2]string{{"age", "age + 1"}, {"name", "upper(name)"}}, "age >= 25")
	if err != nil || up.Updated != 3 || up.Version != 3 {
		t.Fatalf("update: %+v %v", up, err)
	}
	got := query(t, c, "p", gen.QueryTableRequest{})
	if names := column(t, got, "name"); names != `["cat","eve","ANN","BOB","DAN"]` {
		t.Fatalf("names after update %s (updated rows move to the end, as in Lance)", names)
	}
	del, err := c.Delete(ctx, id, "name = 'cat' OR age IS NULL")
	if err != nil || del.Deleted != 1 || del.Version != 4 {
		t.Fatalf("delete: %+v %v", del, err)
	}
	// A delete that matches nothing makes no version.
	none, err := c.Delete(ctx, id, "id > 1000")
	if err != nil || none.Deleted != 0 || none.Version != 4 {
		t.Fatalf("empty delete: %+v %v", none, err)
	}
	for _, tc := range []struct {
		predicate string
		want      int64
	}{{"", 4}, {"age > 30", 2}, {"name LIKE 'A%'", 1}, {"name ILIKE 'a%'", 1}, {"id IN (1, 2, 99)", 2}} {
		if n, err := c.CountRows(ctx, id, tc.predicate, nil); err != nil || n != tc.want {
			t.Errorf("count(%q) = %d %v, want %d", tc.predicate, n, err, tc.want)
		}
	}
	// Old versions still read as they were.
	for v, want := range map[int64]int64{1: 4, 2: 5, 3: 5, 4: 4} {
		if n, err := c.CountRows(ctx, id, "", &v); err != nil || n != want {
			t.Errorf("count at version %d = %d %v, want %d", v, n, err, want)
		}
	}
	ow, err := c.Insert(ctx, id, peopleSchema, []arrow.RecordBatch{arrowtest.Record(t, peopleSchema, `[{"id":100,"name":"new","age":1}]`)}, "overwrite")
	if err != nil || ow.Version != 5 {
		t.Fatalf("overwrite: %+v %v", ow, err)
	}
	if n, _ := c.CountRows(ctx, id, "", nil); n != 1 {
		t.Fatalf("rows after overwrite %d", n)
	}

	for _, tc := range []struct {
		name string
		call func() error
		want store.Code
	}{
		{"BadSyntax", func() error { _, err := c.Delete(ctx, id, "id = = 1"); return err }, store.CodeInvalidInput},
		{"UnknownColumn", func() error { _, err := c.Delete(ctx, id, "nope = 1"); return err }, store.CodeTableColumnNotFound},
		{"EmptyPredicate", func() error { _, err := c.Delete(ctx, id, ""); return err }, store.CodeInvalidInput},
		{"UpdateUnknownColumn", func() error { _, err := c.Update(ctx, id, [][2]string{{"nope", "1"}}, ""); return err }, store.CodeTableColumnNotFound},
		{"UpdateWrongType", func() error { _, err := c.Update(ctx, id, [][2]string{{"age", "'old'"}}, ""); return err }, store.CodeInvalidInput},
		{"UpdateTwice", func() error { _, err := c.Update(ctx, id, [][2]string{{"age", "1"}, {"age", "2"}}, ""); return err }, store.CodeInvalidInput},
		{"CountBadFilter", func() error { _, err := c.CountRows(ctx, id, "age >", nil); return err }, store.CodeInvalidInput},
		{"CountMissingVersion", func() error { v := int64(99); _, err := c.CountRows(ctx, id, "", &v); return err }, store.CodeTableVersionNotFound},
		{"MissingTable", func() error { _, err := c.Delete(ctx, []string{"nope"}, "true"); return err }, store.CodeTableNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, _ := c.LatestTableVersion(ctx, id, "")
			if err := tc.call(); store.ErrorCode(err) != tc.want {
				t.Fatalf("got %v, want code %d", err, tc.want)
			}
			if after, _ := c.LatestTableVersion(ctx, id, ""); after.Version != before.Version {
				t.Fatal("a failed write made a version")
			}
		})
	}
}

func TestMergeInsert(t *testing.T) {
	schema := arrowtest.Schema("region", arrow.BinaryTypes.String, "id", arrow.PrimitiveTypes.Int64, "v", arrow.PrimitiveTypes.Int64)
	base := `[{"region":"eu","id":1,"v":10},{"region":"eu","id":2,"v":20},{"region":"us","id":1,"v":30}]`
	source := `[{"region":"eu","id":2,"v":21},{"region":"us","id":1,"v":31},{"region":"us","id":9,"v":90}]`
	for _, tc := range []struct {
		name                      string
		opts                      client.MergeInsertOptions
		inserted, updated, delted int64
		want                      string // v column, in row order
	}{
		{"Upsert", client.MergeInsertOptions{On: []string{"region", "id"}, WhenMatchedUpdateAll: true, WhenNotMatchedInsertAll: true}, 1, 2, 0, `[10,90,21,31]`},
		{"InsertOnly", client.MergeInsertOptions{On: []string{"region", "id"}, WhenNotMatchedInsertAll: true}, 1, 0, 0, `[10,20,30,90]`},
		{"UpdateOnly", client.MergeInsertOptions{On: []string{"region", "id"}, WhenMatchedUpdateAll: true}, 0, 2, 0, `[10,21,31]`},
		{"UpdateFiltered", client.MergeInsertOptions{On: []string{"region", "id"}, WhenMatchedUpdateAllFilter: "target.v < 25 AND source.v > 0"}, 0, 1, 0, `[10,30,21]`},
		{"ReplaceRange", client.MergeInsertOptions{On: []string{"region", "id"}, WhenMatchedUpdateAll: true, WhenNotMatchedInsertAll: true, WhenNotMatchedBySourceDelete: true}, 1, 2, 1, `[90,21,31]`},
		{"DeleteFiltered", client.MergeInsertOptions{On: []string{"region", "id"}, WhenNotMatchedBySourceDeleteFilter: "region = 'us'"}, 0, 0, 0, `[10,20,30]`},
		{"SingleKey", client.MergeInsertOptions{On: []string{"id"}, WhenNotMatchedInsertAll: true}, 1, 0, 0, `[10,20,30,90]`},
		{"SourceRowUpdatesSeveralTargets", client.MergeInsertOptions{On: []string{"id"}, WhenMatchedUpdateAll: true}, 0, 3, 0, `[31,21,31]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := apitest.Start(t, apitest.Options{})
			ctx := t.Context()
			if _, err := s.Client.CreateTable(ctx, []string{"m"}, schema, []arrow.RecordBatch{arrowtest.Record(t, schema, base)}, nil); err != nil {
				t.Fatal(err)
			}
			src := []arrow.RecordBatch{arrowtest.Record(t, schema, source)}
			res, err := s.Client.MergeInsert(ctx, []string{"m"}, schema, src, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if res.Inserted != tc.inserted || res.Updated != tc.updated || res.Deleted != tc.delted {
				t.Fatalf("counts %+v, want inserted %d updated %d deleted %d", res, tc.inserted, tc.updated, tc.delted)
			}
			if got := column(t, query(t, s.Client, "m", gen.QueryTableRequest{}), "v"); got != tc.want {
				t.Fatalf("v = %s, want %s", got, tc.want)
			}
		})
	}
	t.Run("Errors", func(t *testing.T) {
		s := apitest.Start(t, apitest.Options{})
		ctx := t.Context()
		if _, err := s.Client.CreateTable(ctx, []string{"m"}, schema, []arrow.RecordBatch{arrowtest.Record(t, schema, base)}, nil); err != nil {
			t.Fatal(err)
		}
		src := []arrow.RecordBatch{arrowtest.Record(t, schema, source)}
		_, err := s.Client.MergeInsert(ctx, []string{"m"}, schema, src, client.MergeInsertOptions{On: []string{"nope"}, WhenNotMatchedInsertAll: true})
		if store.ErrorCode(err) != store.CodeTableColumnNotFound {
			t.Fatalf("unknown key: %v", err)
		}
		for _, query := range []string{"", "&on=", "&on=id&on=id", "&on=region&on=", "&on=id&on=%60id%60", "&on=&on=id"} {
			status, body, _ := s.Do(t, "POST", "/v1/table/m/merge_insert?when_not_matched_insert_all=true"+query, nil, streamBytes(t, schema, src[0]))
			if status != 400 || apitest.ErrorCode(body) != 13 {
				t.Fatalf("merge_insert%s: %d %s, want 400 code 13", query, status, body)
			}
		}
		if v, err := s.Client.LatestTableVersion(ctx, []string{"m"}, ""); err != nil || v.Version != 1 {
			t.Fatalf("refused merges made a version: %+v, %v", v, err)
		}
		status, body, _ := s.Do(t, "POST", "/v1/table/m/merge_insert?on=region&on=nope", nil, streamBytes(t, schema, src[0]))
		if status != 404 || apitest.ErrorCode(body) != 12 {
			t.Fatalf("unknown second key: %d %s", status, body)
		}
		// Two source rows for one target row is ambiguous: refused.
		dup := []arrow.RecordBatch{arrowtest.Record(t, schema, `[{"region":"eu","id":1,"v":1},{"region":"eu","id":1,"v":2}]`)}
		_, err = s.Client.MergeInsert(ctx, []string{"m"}, schema, dup, client.MergeInsertOptions{On: []string{"region", "id"}, WhenMatchedUpdateAll: true})
		if store.ErrorCode(err) != store.CodeInvalidInput {
			t.Fatalf("ambiguous merge: %v", err)
		}
	})
}

func TestQueries(t *testing.T) {
	s := apitest.Start(t, apitest.Options{})
	c := s.Client
	createPeople(t, c, "p")
	names := func(cols ...string) *struct {
		ColumnAliases *map[string]string `json:"column_aliases,omitempty"`
		ColumnNames   *[]string          `json:"column_names,omitempty"`
	} {
		return &struct {
			ColumnAliases *map[string]string `json:"column_aliases,omitempty"`
			ColumnNames   *[]string          `json:"column_names,omitempty"`
		}{ColumnNames: &cols}
	}
	for _, tc := range []struct {
		name   string
		q      gen.QueryTableRequest
		column string
		want   string
	}{
		{"All", gen.QueryTableRequest{}, "id", `[1,2,3,4]`},
		{"Filter", gen.QueryTableRequest{Filter: ptr("age > 26 AND name != 'x'")}, "id", `[1,4]`},
		{"Limit", gen.QueryTableRequest{K: 2}, "id", `[1,2]`},
		{"Offset", gen.QueryTableRequest{K: 2, Offset: ptr(1)}, "id", `[2,3]`},
		{"OffsetOnly", gen.QueryTableRequest{Offset: ptr(3)}, "id", `[4]`},
		{"Columns", gen.QueryTableRequest{Columns: names("name")}, "name", `["ann","bob","cat","Dan"]`},
		{"RowID", gen.QueryTableRequest{WithRowId: ptr(true), Filter: ptr("id = 2")}, "_rowid", `[1]`}, // Lance's row address: fragment 0, offset 1
		{"Between", gen.QueryTableRequest{Filter: ptr("age BETWEEN 25 AND 31")}, "id", `[1,2]`},
		{"IsNull", gen.QueryTableRequest{Filter: ptr("age IS NULL")}, "id", `[3]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := column(t, query(t, c, "p", tc.q), tc.column); got != tc.want {
				t.Fatalf("%s = %s, want %s", tc.column, got, tc.want)
			}
		})
	}
	t.Run("AliasesKeepOrder", func(t *testing.T) {
		status, body, _ := s.Do(t, "POST", "/v1/table/p/query", jsonHeader,
			[]byte(`{"vector":null,"k":0,"columns":{"column_aliases":{"zz":"id * 2","aa":"name","mm":"age IS NULL"}}}`))
		if status != 200 {
			t.Fatalf("%d %s", status, body)
		}
		r, err := ipc.NewFileReader(bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range r.Schema().Fields() {
			got = append(got, f.Name+":"+f.Type.String())
		}
		if want := []string{"zz:int64", "aa:utf8", "mm:bool"}; !slices.Equal(got, want) {
			t.Fatalf("columns %q, want %q", got, want)
		}
	})
	t.Run("StreamWhenAsked", func(t *testing.T) {
		status, body, h := s.Do(t, "POST", "/v1/table/p/query", http.Header{"Content-Type": {"application/json"}, "Accept": {"application/vnd.apache.arrow.stream"}},
			[]byte(`{"vector":null,"k":1}`))
		if status != 200 || h.Get("Content-Type") != "application/vnd.apache.arrow.stream" {
			t.Fatalf("%d %s", status, h.Get("Content-Type"))
		}
		r, err := ipc.NewReader(bytes.NewReader(body))
		if err != nil || !r.Next() || r.RecordBatch().NumRows() != 1 {
			t.Fatalf("stream response: %v", err)
		}
	})
	for _, tc := range []struct {
		name string
		body string
		want int
	}{
		{"BadFilter", `{"vector":null,"k":0,"filter":"age >>> 1"}`, 13},
		{"UnknownColumn", `{"vector":null,"k":0,"columns":{"column_names":["nope"]}}`, 12},
		{"UnknownFilterColumn", `{"vector":null,"k":0,"filter":"nope = 1"}`, 12},
		{"BothColumnForms", `{"vector":null,"k":0,"columns":{"column_names":["id"],"column_aliases":{"x":"id"}}}`, 13},
		{"MissingVersion", `{"vector":null,"k":0,"version":42}`, 11},
		{"UnknownMember", `{"vector":null,"k":0,"filters":"age > 1"}`, 13},
		{"NegativeOffset", `{"vector":null,"k":0,"offset":-1}`, 13},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body, _ := s.Do(t, "POST", "/v1/table/p/query", jsonHeader, []byte(tc.body))
			if apitest.ErrorCode(body) != tc.want {
				t.Fatalf("got %d %s, want code %d", status, body, tc.want)
			}
		})
	}
	t.Run("OrderBy", func(t *testing.T) {
		for _, tc := range []struct {
			order, extra string
			want         string
			code         int
		}{
			{`[{"column_name":"age","ascending":false}]`, ``, `[4,1,2,3]`, 0},
			{`[{"column_name":"age","ascending":true,"nulls_first":true}]`, ``, `[3,2,1,4]`, 0},
			{`[{"column_name":"name"}]`, ``, `[4,1,2,3]`, 0},
			{`[{"column_name":"age","ascending":false}]`, `,"k":2,"offset":1,"filter":"id > 1"`, `[2,3]`, 0},
			{`[]`, `,"filter":"id > 2"`, `[3,4]`, 0},
			{`[{"column_name":"nope"}]`, ``, ``, 12},
			{`[{"ascending":true}]`, ``, ``, 13},
			{`{"column_name":"id"}`, ``, ``, 13},
		} {
			body := `{"vector":null,"k":0,"order_by":` + tc.order + tc.extra + `}`
			status, out, _ := s.Do(t, "POST", "/v1/table/p/query", jsonHeader, []byte(body))
			if tc.code != 0 {
				if apitest.ErrorCode(out) != tc.code {
					t.Fatalf("%s: %d %s, want code %d", body, status, out, tc.code)
				}
				continue
			}
			if status != 200 {
				t.Fatalf("%s: %d %s", body, status, out)
			}
			if got := column(t, arrowFile(t, out), "id"); got != tc.want {
				t.Fatalf("%s: ids %s, want %s", body, got, tc.want)
			}
		}
	})
	t.Run("Plans", func(t *testing.T) {
		for _, path := range []string{"explain_plan", "analyze_plan"} {
			body := `{"query":{"vector":null,"k":0,"filter":"id > 1"}}`
			if path == "analyze_plan" {
				body = `{"vector":null,"k":0,"filter":"id > 1"}`
			}
			status, out, _ := s.Do(t, "POST", "/v1/table/p/"+path, jsonHeader, []byte(body))
			var plan string
			if status != 200 || json.Unmarshal(out, &plan) != nil || plan == "" {
				t.Fatalf("%s: %d %s", path, status, out)
			}
			if path == "analyze_plan" && !strings.Contains(plan, "output_rows=3") {
				t.Fatalf("analyze plan lacks row counts: %s", plan)
			}
		}
	})
}

// TestTimeTravelAcrossSchemaChanges evolves the schema and reads every
// version back with the schema it had.
func TestTimeTravelAcrossSchemaChanges(t *testing.T) {
	s := apitest.Start(t, apitest.Options{})
	ctx := t.Context()
	c := s.Client
	createPeople(t, c, "p") // v1: id, name, age
	post := func(path, body string) {
		t.Helper()
		status, out, _ := s.Do(t, "POST", "/v1/table/p/"+path, jsonHeader, []byte(body))
		if status != 200 {
			t.Fatalf("%s: %d %s", path, status, out)
		}
	}
	post("add_columns", `{"new_columns":[{"name":"age2","expression":"age * 2"}]}`)              // v2
	post("alter_columns", `{"alterations":[{"path":"name","rename":"full_name"}]}`)              // v3
	post("alter_columns", `{"alterations":[{"path":"id","data_type":{"type":"utf8"}}]}`)         // v4
	post("drop_columns", `{"columns":["age"]}`)                                                  // v5
	post("update_field_metadata", `{"updates":[{"path":"full_name","metadata":{"pii":"yes"}}]}`) // v6
	status, out, _ := s.Do(t, "POST", "/v1/table/p/schema_metadata/update", jsonHeader, []byte(`{"owner":"me"}`))
	if status != 200 || !strings.Contains(string(out), `"owner":"me"`) {
		t.Fatalf("schema metadata: %d %s", status, out) // v7
	}
	for _, tc := range []struct {
		version int64
		fields  string
		check   string // column=json
	}{
		{1, "id:int64,name:utf8,age:int32", `age=[31,25,null,40]`},
		{2, "id:int64,name:utf8,age:int32,age2:int64", `age2=[62,50,null,80]`},
		{3, "id:int64,full_name:utf8,age:int32,age2:int64", `full_name=["ann","bob","cat","Dan"]`},
		{4, "id:utf8,full_name:utf8,age:int32,age2:int64", `id=["1","2","3","4"]`},
		{5, "id:utf8,full_name:utf8,age2:int64", `age2=[62,50,null,80]`},
		{7, "id:utf8,full_name:utf8,age2:int64", `full_name=["ann","bob","cat","Dan"]`},
	} {
		v := tc.version
		rec := query(t, c, "p", gen.QueryTableRequest{Version: &v})
		var fields []string
		for _, f := range rec.Schema().Fields() {
			fields = append(fields, f.Name+":"+f.Type.String())
		}
		if got := strings.Join(fields, ","); got != tc.fields {
			t.Errorf("version %d schema %s, want %s", v, got, tc.fields)
		}
		col, want, _ := strings.Cut(tc.check, "=")
		if got := column(t, rec, col); got != want {
			t.Errorf("version %d %s = %s, want %s", v, col, got, want)
		}
	}
	d, err := c.DescribeTable(ctx, []string{"p"}, nil)
	if err != nil || d.Schema == nil || *d.Version != 7 {
		t.Fatalf("describe: %+v %v", d, err)
	}
	if md := d.Schema.Metadata(); md.FindKey("owner") < 0 || md.Values()[md.FindKey("owner")] != "me" {
		t.Fatalf("schema metadata not described: %+v", d.Schema)
	}
	for _, f := range d.Schema.Fields() {
		if i := f.Metadata.FindKey("pii"); f.Name == "full_name" && (i < 0 || f.Metadata.Values()[i] != "yes") {
			t.Fatalf("field metadata not described: %+v", f)
		}
	}
	// Restore version 1: a new version with v1's rows and schema.
	if _, err := c.CreateTableTag(ctx, []string{"p"}, "original", 1, ""); err != nil {
		t.Fatal(err)
	}
	status, out, _ = s.Do(t, "POST", "/v1/table/p/restore", jsonHeader, []byte(`{"version":1}`))
	if status != 200 {
		t.Fatalf("restore: %d %s", status, out)
	}
	rec := query(t, c, "p", gen.QueryTableRequest{})
	if rec.Schema().NumFields() != 3 || column(t, rec, "age") != `[31,25,null,40]` {
		t.Fatalf("after restore: %s", rec.Schema())
	}
	if latest, _ := c.LatestTableVersion(ctx, []string{"p"}, ""); latest.Version != 8 {
		t.Fatalf("restore made version %d, want 8", latest.Version)
	}
	tagged, err := c.DescribeTable(ctx, []string{"p"}, &client.DescribeTableOptions{Tag: "original"})
	if err != nil || *tagged.Version != 1 {
		t.Fatalf("describe by tag: %+v %v", tagged, err)
	}
	for _, tc := range []struct {
		path, body string
		want       int
	}{
		{"add_columns", `{"new_columns":[{"name":"id","expression":"1"}]}`, 20},
		{"add_columns", `{"new_columns":[{"name":"x","expression":"nope + 1"}]}`, 12},
		{"add_columns", `{"new_columns":[{"name":"x","virtual_column":{"input_columns":[],"outputs":[],"image":"i","udf":"u","udf_name":"n","udf_version":"1"}}]}`, 0},
		{"alter_columns", `{"alterations":[{"path":"nope","rename":"x"}]}`, 12},
		{"alter_columns", `{"alterations":[{"path":"age","nullable":false}]}`, 20},
		{"alter_columns", `{"alterations":[{"path":"name","data_type":{"type":"struct","fields":[]}}]}`, 20},
		{"drop_columns", `{"columns":["id","name","age"]}`, 13},
		{"drop_columns", `{"columns":["nope"]}`, 12},
	} {
		status, out, _ := s.Do(t, "POST", "/v1/table/p/"+tc.path, jsonHeader, []byte(tc.body))
		if apitest.ErrorCode(out) != tc.want {
			t.Errorf("%s %s: got %d %s, want code %d", tc.path, tc.body, status, out, tc.want)
		}
	}
}

// TestExternalTablesRefuseData checks that data operations on tables whose
// data Lance clients own fail with code 19 naming the location.
func TestExternalTablesRefuseData(t *testing.T) {
	s := apitest.Start(t, apitest.Options{ExternalRoots: []string{"s3://bucket"}})
	ctx := t.Context()
	if _, err := s.Client.RegisterTable(ctx, []string{"ext"}, "s3://bucket/ext.lance", nil); err != nil {
		t.Fatal(err)
	}
	rec := arrowtest.Record(t, peopleSchema, peopleRows)
	for _, tc := range []struct {
		name string
		call func() error
	}{
		{"Insert", func() error {
			_, err := s.Client.Insert(ctx, []string{"ext"}, peopleSchema, []arrow.RecordBatch{rec}, "")
			return err
		}},
		{"Count", func() error { _, err := s.Client.CountRows(ctx, []string{"ext"}, "", nil); return err }},
		{"Delete", func() error { _, err := s.Client.Delete(ctx, []string{"ext"}, "true"); return err }},
		{"Query", func() error { _, err := s.Client.Query(ctx, []string{"ext"}, client.QueryRequest{}); return err }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if !errors.Is(err, client.ErrInvalidTableState) || !strings.Contains(err.Error(), "s3://bucket/ext.lance") {
				t.Fatalf("got %v", err)
			}
		})
	}
	status, body, _ := s.Do(t, "POST", "/v1/table/ext/stats", nil, nil)
	if apitest.ErrorCode(body) != 19 {
		t.Fatalf("stats: %d %s", status, body)
	}
}

func TestStats(t *testing.T) {
	s := apitest.Start(t, apitest.Options{})
	createPeople(t, s.Client, "p")
	if _, err := s.Client.Insert(t.Context(), []string{"p"}, peopleSchema, []arrow.RecordBatch{arrowtest.Record(t, peopleSchema, `[{"id":9,"name":"z","age":1}]`)}, ""); err != nil {
		t.Fatal(err)
	}
	status, body, _ := s.Do(t, "POST", "/v1/table/p/stats", nil, nil)
	var st gen.GetTableStatsResponse
	if status != 200 || json.Unmarshal(body, &st) != nil {
		t.Fatalf("%d %s", status, body)
	}
	if st.NumRows != 5 || st.FragmentStats.NumFragments != 2 || st.FragmentStats.Lengths.Max != 4 || st.FragmentStats.Lengths.Min != 1 || st.TotalBytes <= 0 {
		t.Fatalf("stats %+v", st)
	}
	// Percentiles as LanceDB's stats compute them: sorted[n·p/100].
	if l := st.FragmentStats.Lengths; l.P25 != 1 || l.P50 != 4 || l.P75 != 4 || l.P99 != 4 || l.Mean != 2 {
		t.Fatalf("fragment lengths %+v, want p25 1, p50 4, p75 4, p99 4, mean 2", l)
	}
	d, err := s.Client.DescribeTable(t.Context(), []string{"p"}, nil)
	if err != nil || d.Stats == nil || d.Stats.NumFragments != 2 {
		t.Fatalf("describe stats: %+v %v", d, err)
	}
}

func TestComputedColumns(t *testing.T) {
	s := apitest.Start(t, apitest.Options{})
	ctx := t.Context()
	createPeople(t, s.Client, "p")
	status, body, _ := s.Do(t, "POST", "/v1/table/p/add_columns", jsonHeader, []byte(`{"new_columns":[{"name":"doubled","computed":"age * 2"}]}`))
	if status != 200 {
		t.Fatalf("add computed column: %d %s", status, body)
	}
	if got := column(t, query(t, s.Client, "p", gen.QueryTableRequest{}), "doubled"); got != `[null,null,null,null]` {
		t.Fatalf("a computed column starts null, got %s", got)
	}
	// Rows added later stay null until the next backfill.
	if _, err := s.Client.Insert(ctx, []string{"p"}, peopleSchema, []arrow.RecordBatch{arrowtest.Record(t, peopleSchema, `[{"id":5,"name":"e","age":5}]`)}, ""); err != nil {
		t.Fatal(err)
	}
	status, body, _ = s.Do(t, "POST", "/v1/table/p/backfill_column", jsonHeader, []byte(`{"column":"doubled","where":"id < 5"}`))
	var job gen.AlterTableBackfillColumnsResponse
	if status != http.StatusAccepted || json.Unmarshal(body, &job) != nil || job.JobId == "" {
		t.Fatalf("backfill: %d %s", status, body)
	}
	if tx := waitTransaction(t, s.Client, job.JobId); tx.Status != "Succeeded" {
		t.Fatalf("backfill job %+v", tx)
	}
	if got := column(t, query(t, s.Client, "p", gen.QueryTableRequest{}), "doubled"); got != `[null,62,50,null,80]` {
		t.Fatalf("after backfill: %s", got)
	}
	for _, tc := range []struct {
		body string
		want int
	}{
		{`{"column":"age"}`, 13},
		{`{"column":"nope"}`, 12},
		{`{"column":"doubled","where":"nope > 1"}`, 12},
	} {
		status, body, _ := s.Do(t, "POST", "/v1/table/p/backfill_column", jsonHeader, []byte(tc.body))
		if apitest.ErrorCode(body) != tc.want {
			t.Errorf("%s: %d %s, want code %d", tc.body, status, body, tc.want)
		}
	}
}

// arrowFile reads an IPC file body into one record batch.
func arrowFile(t *testing.T, body []byte) arrow.RecordBatch {
	t.Helper()
	r, err := ipc.NewFileReader(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var batches []arrow.RecordBatch
	for i := 0; i < r.NumRecords(); i++ {
		b, err := r.RecordBatch(i)
		if err != nil {
			t.Fatal(err)
		}
		b.Retain()
		batches = append(batches, b)
	}
	return arrowtest.Concat(t, r.Schema(), batches)
}
