package expr

import (
	"database/sql"
	"encoding/base64"
	endian "encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"math/rand"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	arrays "github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/decimal256"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/lancens/lancens/store"
)

// The Arrow differential tests run every expression twice over one
// generated table: with the evaluator over an Arrow record batch, and as
// the compiled SQL in SQLite over the same rows stored the way the row
// store stores them. The stored rows are made from the generated cells by
// this file's own encoder, not by the evaluator's Arrow reader, so the
// two paths share nothing but the compiler.

// arrowColumn is a column of the generated batch: its name, Arrow type and
// a generator of its non-null cells (Go values: int64, uint64, float64,
// bool, string, []byte, *big.Int for decimals, []any for lists and
// vectors, map[string]any for structs, [][2]any for maps).
type arrowColumn struct {
	name     string
	typ      arrow.DataType
	gen      func(r *rand.Rand, row int) any
	nullable bool
}

func pick[T any](vs ...T) func(*rand.Rand, int) any {
	return func(r *rand.Rand, _ int) any { return vs[r.Intn(len(vs))] }
}

// mix returns a generator picking from vs, or one time in three from
// other.
func mix[T any](vs []T, other func(r *rand.Rand) T) func(*rand.Rand, int) any {
	return func(r *rand.Rand, _ int) any {
		if r.Intn(3) == 0 {
			return other(r)
		}
		return vs[r.Intn(len(vs))]
	}
}

// counts returns a generator of temporal counts in unit per (units per
// second): known instants and random ones in 2023–2024.
func counts(per int64) func(*rand.Rand, int) any {
	known := []int64{
		nanos(2024, 1, 1, 12, 0, 0, 500000000), nanos(2024, 1, 1, 0, 0, 0, 0), 0, -1e9,
		nanos(2023, 6, 15, 0, 0, 0, 0), nanos(2024, 1, 1, 12, 0, 0, 0), nanos(2024, 1, 1, 12, 0, 0, 500123456),
	}
	return func(r *rand.Rand, _ int) any {
		ns := known[r.Intn(len(known))]
		if r.Intn(3) == 0 {
			ns = nanos(2023, 1, 1, 0, 0, 0, 0) + r.Int63n(2*365*86400*1e9)
		}
		return floorDiv(ns, 1e9/per)
	}
}

func decimals(vs ...string) func(*rand.Rand, int) any {
	return func(r *rand.Rand, _ int) any {
		n, _ := new(big.Int).SetString(vs[r.Intn(len(vs))], 10)
		if r.Intn(3) == 0 {
			n = big.NewInt(r.Int63n(200001) - 100000)
		}
		return n
	}
}

// listOf returns a generator of lists of up to max elements from elem,
// with null elements.
func listOf(max int, elem func(*rand.Rand, int) any) func(*rand.Rand, int) any {
	return func(r *rand.Rand, row int) any {
		out := []any{}
		for range r.Intn(max + 1) {
			if r.Intn(6) == 0 {
				out = append(out, nil)
			} else {
				out = append(out, elem(r, row))
			}
		}
		return out
	}
}

func fixedOf(n int, elem func(*rand.Rand, int) any) func(*rand.Rand, int) any {
	return func(r *rand.Rand, row int) any {
		out := make([]any, n)
		for i := range out {
			out[i] = elem(r, row)
		}
		return out
	}
}

var (
	tableInts   = []int64{0, 1, -1, 2, 3, 7, 10, -3, 5}
	tableBig    = []int64{0, 1, -1, math.MaxInt64, math.MinInt64, math.MaxInt64 - 1, math.MinInt64 + 1, 1 << 53, 1<<53 + 1, -(1 << 53) - 1, 1 << 62, 1 << 32, 3037000500, -3037000500, 10}
	tableFloats = []float64{0, math.Copysign(0, -1), 0.5, 1.5, -2.25, 10, 12.34, -0.5, 1e300, -1e300, math.Inf(1), math.Inf(-1),
		1 << 53, 1<<53 + 2, 0x1p63, -0x1p63, 1.0 / 3, 2.5, 7, 0.001, 3, math.NaN(), 0.1 + 0.2, 1e-7, 123456789.125}
	tableStrings = []string{"", "a", "A", "abc", "ABC", "Hello", "hello", "HELLO", "a_b%c", "a%", "%", "_", "ä", "Ä", "ß", "SS",
		"straße", "\xff", "\xe2\x82", "a\x00b", "ab", "日本", "x y", "10", "2024-01-01", "ǅ", "K", "k", "Hel", "lo", "a\\b", "it's",
		" 42 ", "-7", "1.5", "1e3", "true", "no", "2024-01-01 12:00:00.5", "12:30:00", "  pad  ", "xyx", "\x80\x80", "[1,2]"}
)

// arrowColumns are the columns of the generated batch: every Arrow type
// lancens stores.
func arrowColumns() []arrowColumn {
	small := mix(tableInts, func(r *rand.Rand) int64 { return r.Int63n(40) - 10 })
	ts := func(u arrow.TimeUnit, tz string, per int64) arrowColumn {
		return arrowColumn{typ: &arrow.TimestampType{Unit: u, TimeZone: tz}, gen: counts(per)}
	}
	named := func(name string, c arrowColumn) arrowColumn { c.name = name; return c }
	cols := []arrowColumn{
		{name: "_rowid", typ: arrow.PrimitiveTypes.Int64, gen: func(_ *rand.Rand, row int) any { return int64(row + 1) }},
		{name: "bn", typ: arrow.FixedWidthTypes.Boolean, gen: pick(true, false)},
		{name: "b", typ: arrow.FixedWidthTypes.Boolean, gen: pick(true, false), nullable: true},
		{name: "fn", typ: arrow.PrimitiveTypes.Float64, gen: pick(math.NaN(), 1.5, -1)},
		{name: "i", typ: arrow.PrimitiveTypes.Int64, gen: small, nullable: true},
		{name: "j", typ: arrow.PrimitiveTypes.Int32, gen: mix(tableInts, func(r *rand.Rand) int64 { return r.Int63n(2000) - 1000 }), nullable: true},
		{name: "i8", typ: arrow.PrimitiveTypes.Int8, gen: pick[int64](-128, 127, 0, 1, -1, 5), nullable: true},
		{name: "i16", typ: arrow.PrimitiveTypes.Int16, gen: pick[int64](-32768, 32767, 0, 3, 10), nullable: true},
		{name: "u8", typ: arrow.PrimitiveTypes.Uint8, gen: pick[uint64](0, 1, 255, 7), nullable: true},
		{name: "u16", typ: arrow.PrimitiveTypes.Uint16, gen: pick[uint64](0, 65535, 3), nullable: true},
		{name: "u32", typ: arrow.PrimitiveTypes.Uint32, gen: pick[uint64](0, 4294967295, 10), nullable: true},
		{name: "u64", typ: arrow.PrimitiveTypes.Uint64, gen: pick[uint64](0, 1, math.MaxUint64, 1<<63, 1<<63-1, 42), nullable: true},
		{name: "big", typ: arrow.PrimitiveTypes.Int64, gen: mix(tableBig, func(r *rand.Rand) int64 { return r.Int63() - r.Int63() }), nullable: true},
		{name: "f", typ: arrow.PrimitiveTypes.Float64, gen: mix(tableFloats, func(r *rand.Rand) float64 { return r.NormFloat64() * 10 }), nullable: true},
		{name: "g", typ: arrow.PrimitiveTypes.Float64, gen: mix(tableFloats, func(r *rand.Rand) float64 { return float64(r.Intn(21) - 10) }), nullable: true},
		{name: "f32", typ: arrow.PrimitiveTypes.Float32, gen: mix([]float64{0.1, 1.5, -2, 3.25, 1e30}, func(r *rand.Rand) float64 { return float64(float32(r.NormFloat64())) }), nullable: true},
		{name: "f16", typ: arrow.FixedWidthTypes.Float16, gen: pick(0.5, 1.0, -2.0, 65504.0, 0.0999755859375), nullable: true},
		{name: "d", typ: &arrow.Decimal128Type{Precision: 10, Scale: 2}, gen: decimals("1234", "-50", "0", "1000", "100", "999999999", "1", "-1"), nullable: true},
		{name: "e4", typ: &arrow.Decimal128Type{Precision: 18, Scale: 4}, gen: decimals("999999999999999999", "-999999999999999999", "123400", "5000", "0", "1"), nullable: true},
		{name: "d0", typ: &arrow.Decimal64Type{Precision: 5, Scale: 0}, gen: decimals("0", "7", "-3", "10", "99999"), nullable: true},
		{name: "dc32", typ: &arrow.Decimal32Type{Precision: 9, Scale: 3}, gen: decimals("1500", "-1", "0", "123456789"), nullable: true},
		{name: "dt", typ: &arrow.Decimal128Type{Precision: 38, Scale: 4}, gen: decimals("15000", "-123456789012345678901234", "0", "99999999999999999999999999999999999999"), nullable: true},
		{name: "dw", typ: &arrow.Decimal256Type{Precision: 40, Scale: 6}, gen: decimals("1500000", "-1", "0"), nullable: true},
		{name: "s", typ: arrow.BinaryTypes.String, gen: pick(tableStrings...), nullable: true},
		{name: "t", typ: arrow.BinaryTypes.LargeString, gen: pick("a", "Hello", "hello", "", "b", "ä", "x y", "lo", "%", "l", "x"), nullable: true},
		{name: "sv", typ: arrow.BinaryTypes.StringView, gen: pick("a", "Hello", "ä", "", "a long string value past twelve bytes"), nullable: true},
		{name: "dict", typ: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String}, gen: pick("red", "green", "blue", ""), nullable: true},
		{name: "bin", typ: arrow.BinaryTypes.Binary, gen: pick([]byte{}, []byte{0}, []byte{0, 0xff}, []byte("Hello"), []byte("a\x00b")), nullable: true},
		{name: "lbin", typ: arrow.BinaryTypes.LargeBinary, gen: pick([]byte("x"), []byte{1, 2}), nullable: true},
		{name: "fbin", typ: &arrow.FixedSizeBinaryType{ByteWidth: 2}, gen: pick([]byte{0, 1}, []byte("ab")), nullable: true},
		{name: "d32", typ: arrow.FixedWidthTypes.Date32, gen: mix([]int64{19723, 19523, 0, -1, 19724}, func(r *rand.Rand) int64 { return 19000 + r.Int63n(1500) }), nullable: true},
		{name: "d64", typ: arrow.FixedWidthTypes.Date64, gen: mix([]int64{19723 * 86400000, 19523 * 86400000, 0}, func(r *rand.Rand) int64 { return (19000 + r.Int63n(1500)) * 86400000 }), nullable: true},
		named("ts", ts(arrow.Microsecond, "", 1e6)),
		named("tsms", ts(arrow.Millisecond, "", 1e3)),
		named("tss", ts(arrow.Second, "", 1)),
		named("tsns", ts(arrow.Nanosecond, "", 1e9)),
		named("tsz", ts(arrow.Microsecond, "Europe/Paris", 1e6)),
		{name: "far", typ: &arrow.TimestampType{Unit: arrow.Second}, gen: pick[int64](0, 253402300799, -62135596800), nullable: true},
		{name: "tm", typ: arrow.FixedWidthTypes.Time64us, gen: mix([]int64{45000e6, 0, 1e6, 86399999999}, func(r *rand.Rand) int64 { return r.Int63n(86400e6) }), nullable: true},
		{name: "tms", typ: arrow.FixedWidthTypes.Time32s, gen: pick[int64](0, 45000, 86399), nullable: true},
		{name: "tmms", typ: arrow.FixedWidthTypes.Time32ms, gen: pick[int64](0, 45000000, 1500), nullable: true},
		{name: "tmns", typ: arrow.FixedWidthTypes.Time64ns, gen: pick[int64](0, 45000e9, 1), nullable: true},
		{name: "dur", typ: arrow.FixedWidthTypes.Duration_ms, gen: mix([]int64{1500, -10, 0, 1000}, func(r *rand.Rand) int64 { return r.Int63n(10000) - 5000 }), nullable: true},
		{name: "durs", typ: arrow.FixedWidthTypes.Duration_s, gen: pick[int64](1, -1, 0, 2), nullable: true},
		{name: "durns", typ: arrow.FixedWidthTypes.Duration_ns, gen: pick[int64](1, 1500000000, -7), nullable: true},
		{name: "l", typ: arrow.ListOf(arrow.PrimitiveTypes.Int32), gen: listOf(4, pick[int64](1, 2, 3, 4, -1)), nullable: true},
		{name: "ls", typ: arrow.ListOf(arrow.BinaryTypes.String), gen: listOf(3, pick("a", "b", "c", "a_b", "Hello", "\xff")), nullable: true},
		{name: "lb", typ: arrow.ListOf(arrow.FixedWidthTypes.Boolean), gen: listOf(2, pick(true, false)), nullable: true},
		{name: "lf", typ: arrow.ListOf(arrow.PrimitiveTypes.Float32), gen: listOf(3, pick(0.1, 1.5, -2.0, 2.0)), nullable: true},
		{name: "lg", typ: arrow.ListOf(arrow.PrimitiveTypes.Float64), gen: listOf(3, pick(0.1, 1.5, math.Inf(1), math.NaN(), 9007199254740993.0, 1e20)), nullable: true},
		{name: "lts", typ: arrow.ListOf(&arrow.TimestampType{Unit: arrow.Millisecond}), gen: listOf(2, counts(1e3)), nullable: true},
		{name: "ld", typ: arrow.ListOf(&arrow.Decimal128Type{Precision: 10, Scale: 2}), gen: listOf(2, decimals("1234", "-50", "150")), nullable: true},
		{name: "lbn", typ: arrow.ListOf(arrow.BinaryTypes.Binary), gen: listOf(2, pick([]byte("x"), []byte{0, 1})), nullable: true},
		{name: "ll", typ: arrow.LargeListOf(arrow.PrimitiveTypes.Int64), gen: listOf(3, pick[int64](1, 2, math.MaxInt64)), nullable: true},
		{name: "lu", typ: arrow.ListOf(arrow.PrimitiveTypes.Uint64), gen: listOf(2, pick[uint64](1, math.MaxUint64)), nullable: true},
		{name: "lll", typ: arrow.ListOf(arrow.ListOf(arrow.PrimitiveTypes.Int64)), gen: listOf(2, listOf(2, pick[int64](1, 2))), nullable: true},
		{name: "fl", typ: arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Int32), gen: fixedOf(2, pick[int64](1, 2, 3)), nullable: true},
		{name: "v", typ: arrow.FixedSizeListOf(4, arrow.PrimitiveTypes.Float32), gen: fixedOf(4, pick(0.5, 1.0)), nullable: true},
		{name: "vu8", typ: arrow.FixedSizeListOf(3, arrow.PrimitiveTypes.Uint8), gen: fixedOf(3, pick[uint64](0, 255)), nullable: true},
		{name: "st", typ: arrow.StructOf(
			arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
			arrow.Field{Name: "inner", Type: arrow.StructOf(arrow.Field{Name: "y", Type: arrow.BinaryTypes.String, Nullable: true}), Nullable: true}),
			gen: func(r *rand.Rand, row int) any {
				var inner any
				if r.Intn(4) != 0 {
					inner = map[string]any{"y": pick[any]("deep", "x", "", nil)(r, row)}
				}
				return map[string]any{"x": pick[any](int64(5), int64(1), int64(-3), nil)(r, row), "inner": inner}
			}, nullable: true},
		{name: "m", typ: arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int32), gen: func(r *rand.Rand, _ int) any {
			out := [][2]any{}
			for k := range r.Intn(3) {
				out = append(out, [2]any{"k" + strconv.Itoa(k), int64(r.Intn(5))})
			}
			return out
		}, nullable: true},
		{name: "My Col", typ: arrow.BinaryTypes.String, gen: pick("x", "y", ""), nullable: true},
		{name: "a.b", typ: arrow.PrimitiveTypes.Int16, gen: pick[int64](7, 8, 0), nullable: true},
		{name: "nul", typ: arrow.Null, gen: func(*rand.Rand, int) any { return nil }, nullable: true},
	}
	for i := range cols {
		if cols[i].gen == nil || cols[i].name == "" {
			panic("column without a name or generator")
		}
		if strings.HasPrefix(cols[i].name, "ts") || cols[i].name == "tsz" {
			cols[i].nullable = true
		}
	}
	return cols
}

// arrowTable is the generated batch, the same rows in SQLite (table e)
// and the resolver of the compiled SQL.
type arrowTable struct {
	db     *sql.DB
	batch  arrow.RecordBatch
	res    testResolver
	n      int
	schema *arrow.Schema
}

// newArrowTable generates n rows from seed, in table e of a new database.
func newArrowTable(t testing.TB, seed int64, n int) *arrowTable {
	t.Helper()
	if err := Register(); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "a.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(1)
	return loadArrowTable(t, db, "e", seed, n)
}

// loadArrowTable generates n rows from seed into table name of db.
func loadArrowTable(t testing.TB, db *sql.DB, name string, seed int64, n int) *arrowTable {
	t.Helper()
	r := rand.New(rand.NewSource(seed))
	cols := arrowColumns()
	cells := make([][]any, len(cols))
	for c, col := range cols {
		cells[c] = make([]any, n)
		for i := range cells[c] {
			if !col.nullable || r.Intn(8) != 0 {
				cells[c][i] = col.gen(r, i)
			}
		}
	}
	fields := make([]arrow.Field, len(cols))
	arrs := make([]arrow.Array, len(cols))
	for c, col := range cols {
		fields[c] = arrow.Field{Name: col.name, Type: col.typ, Nullable: true}
		b := arrays.NewBuilder(memory.DefaultAllocator, col.typ)
		for _, cell := range cells[c] {
			appendCell(b, cell)
		}
		arrs[c] = b.NewArray()
		b.Release()
	}
	schema := arrow.NewSchema(fields, nil)
	at := &arrowTable{db: db, batch: arrays.NewRecordBatch(schema, arrs, int64(n)), res: testResolver{}, n: n, schema: schema}
	t.Cleanup(at.batch.Release)
	var defs, names []string
	var columns [][]any
	for c, col := range cols {
		for _, pc := range physical(col.name, nil, col.typ, cells[c]) {
			defs = append(defs, fmt.Sprintf(`"%s" %s`, pc.name, pc.sqlType))
			names = append(names, pc.name)
			columns = append(columns, pc.vals)
			at.res[strings.Join(pc.path, "/")] = dbColumn{SQL: fmt.Sprintf(`%s."%s"`, name, pc.name), Type: TypeOf(pc.typ)}
		}
	}
	if _, err := db.Exec(`CREATE TABLE ` + name + ` (` + strings.Join(defs, ", ") + `)`); err != nil {
		t.Fatal(err)
	}
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	marks := strings.TrimSuffix(strings.Repeat("?, ", len(names)), ", ")
	for i := range n {
		row := make([]any, len(columns))
		for c := range columns {
			row[c] = columns[c][i]
		}
		if _, err := tx.Exec(`INSERT INTO `+name+` VALUES (`+marks+`)`, row...); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	return at
}

// physicalColumn is a SQLite column of the generated table.
type physicalColumn struct {
	name, sqlType string
	path          []string
	typ           arrow.DataType
	vals          []any
}

// physical returns the SQLite columns of a field as the row store lays
// them out: one per leaf, and for a struct a validity column (1, or NULL
// for a null struct) followed by its fields', NULL where the struct is.
func physical(name string, parent []string, dt arrow.DataType, cells []any) []physicalColumn {
	path := append(append([]string(nil), parent...), name)
	col := physicalColumn{name: strings.Join(path, "__"), path: path, typ: dt, vals: make([]any, len(cells))}
	st, ok := dt.(*arrow.StructType)
	if !ok {
		col.sqlType = storedSQLType(dt)
		for i, cell := range cells {
			col.vals[i] = storedCell(dt, cell)
		}
		return []physicalColumn{col}
	}
	col.sqlType = "INTEGER"
	out := []physicalColumn{col}
	for j, f := range st.Fields() {
		child := make([]any, len(cells))
		for i, cell := range cells {
			if cell != nil {
				col.vals[i] = int64(1)
				child[i] = cell.(map[string]any)[f.Name]
			}
		}
		out = append(out, physical(f.Name, path, st.Field(j).Type, child)...)
	}
	return out
}

// storedSQLType is the declared type of the row store's column for dt.
func storedSQLType(dt arrow.DataType) string {
	if store.IsVectorType(dt) {
		return "BLOB"
	}
	switch dt.ID() {
	case arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64:
		return "REAL"
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW, arrow.DICTIONARY, arrow.LIST, arrow.LARGE_LIST, arrow.FIXED_SIZE_LIST, arrow.MAP:
		return "TEXT"
	case arrow.BINARY, arrow.LARGE_BINARY, arrow.FIXED_SIZE_BINARY:
		return "BLOB"
	}
	if d, ok := dt.(arrow.DecimalType); ok && d.GetPrecision() > 18 {
		return "TEXT"
	}
	return "INTEGER"
}

// storedCell returns the SQL value the row store stores for a cell of dt.
func storedCell(dt arrow.DataType, cell any) any {
	if cell == nil {
		return nil
	}
	switch t := dt.(type) {
	case arrow.DecimalType:
		n := cell.(*big.Int)
		if t.GetPrecision() <= 18 {
			return n.Int64()
		}
		return decimalText(n, int(t.GetScale()))
	case *arrow.FixedSizeListType:
		if store.IsVectorType(dt) {
			var out []byte
			for _, e := range cell.([]any) {
				switch e := e.(type) {
				case float64:
					out = endian.LittleEndian.AppendUint32(out, math.Float32bits(float32(e)))
				case uint64:
					out = append(out, byte(e))
				}
			}
			return out
		}
	}
	switch dt.ID() {
	case arrow.LIST, arrow.LARGE_LIST, arrow.FIXED_SIZE_LIST, arrow.MAP:
		b, err := json.Marshal(jsonCell(dt, cell))
		if err != nil {
			panic(err)
		}
		return string(b)
	case arrow.FLOAT32:
		return float64(float32(cell.(float64)))
	case arrow.FLOAT16:
		return float64(float16.New(float32(cell.(float64))).Float32())
	}
	switch c := cell.(type) {
	case uint64:
		return int64(c)
	case bool:
		if c {
			return int64(1)
		}
		return int64(0)
	}
	return cell
}

// decimalText writes unscaled×10^-scale with scale fraction digits.
func decimalText(n *big.Int, scale int) string {
	digits := new(big.Int).Abs(n).String()
	for len(digits) <= scale {
		digits = "0" + digits
	}
	s := digits[:len(digits)-scale] + "." + digits[len(digits)-scale:]
	if n.Sign() < 0 {
		s = "-" + s
	}
	return s
}

// jsonCell returns a list or map cell as the row store writes it in JSON:
// floats in their shortest form for their width (NaN and infinities as
// strings), uint64 as an unsigned number, decimals as exact numbers,
// binary as base64, booleans and strings as themselves, maps as pairs.
func jsonCell(dt arrow.DataType, cell any) any {
	if cell == nil {
		return nil
	}
	switch t := dt.(type) {
	case *arrow.MapType:
		out := []any{}
		for _, kv := range cell.([][2]any) {
			out = append(out, []any{jsonCell(t.KeyType(), kv[0]), jsonCell(t.ItemType(), kv[1])})
		}
		return out
	case arrow.ListLikeType:
		out := []any{}
		for _, e := range cell.([]any) {
			out = append(out, jsonCell(t.Elem(), e))
		}
		return out
	case arrow.DecimalType:
		return json.Number(decimalText(cell.(*big.Int), int(t.GetScale())))
	}
	switch c := cell.(type) {
	case float64:
		bits := 64
		if dt.ID() == arrow.FLOAT32 {
			bits = 32
		}
		switch {
		case math.IsNaN(c):
			return "NaN"
		case math.IsInf(c, 1):
			return "Infinity"
		case math.IsInf(c, -1):
			return "-Infinity"
		}
		return json.Number(strconv.FormatFloat(c, 'g', -1, bits))
	case uint64:
		return json.Number(strconv.FormatUint(c, 10))
	case []byte:
		return base64.StdEncoding.EncodeToString(c)
	}
	return cell
}

// appendCell appends a generated cell to a builder of its column's type.
func appendCell(b arrays.Builder, cell any) {
	if cell == nil {
		b.AppendNull()
		return
	}
	switch bb := b.(type) {
	case *arrays.BooleanBuilder:
		bb.Append(cell.(bool))
	case *arrays.Int8Builder:
		bb.Append(int8(cell.(int64)))
	case *arrays.Int16Builder:
		bb.Append(int16(cell.(int64)))
	case *arrays.Int32Builder:
		bb.Append(int32(cell.(int64)))
	case *arrays.Int64Builder:
		bb.Append(cell.(int64))
	case *arrays.Uint8Builder:
		bb.Append(uint8(cell.(uint64)))
	case *arrays.Uint16Builder:
		bb.Append(uint16(cell.(uint64)))
	case *arrays.Uint32Builder:
		bb.Append(uint32(cell.(uint64)))
	case *arrays.Uint64Builder:
		bb.Append(cell.(uint64))
	case *arrays.Float16Builder:
		bb.Append(float16.New(float32(cell.(float64))))
	case *arrays.Float32Builder:
		bb.Append(float32(cell.(float64)))
	case *arrays.Float64Builder:
		bb.Append(cell.(float64))
	case *arrays.StringBuilder:
		bb.Append(cell.(string))
	case *arrays.LargeStringBuilder:
		bb.Append(cell.(string))
	case *arrays.StringViewBuilder:
		bb.Append(cell.(string))
	case *arrays.BinaryDictionaryBuilder:
		if err := bb.AppendString(cell.(string)); err != nil {
			panic(err)
		}
	case *arrays.BinaryBuilder:
		bb.Append(cell.([]byte))
	case *arrays.FixedSizeBinaryBuilder:
		bb.Append(cell.([]byte))
	case *arrays.Date32Builder:
		bb.Append(arrow.Date32(cell.(int64)))
	case *arrays.Date64Builder:
		bb.Append(arrow.Date64(cell.(int64)))
	case *arrays.Time32Builder:
		bb.Append(arrow.Time32(cell.(int64)))
	case *arrays.Time64Builder:
		bb.Append(arrow.Time64(cell.(int64)))
	case *arrays.TimestampBuilder:
		bb.Append(arrow.Timestamp(cell.(int64)))
	case *arrays.DurationBuilder:
		bb.Append(arrow.Duration(cell.(int64)))
	case *arrays.Decimal32Builder:
		bb.Append(decimal.Decimal32(cell.(*big.Int).Int64()))
	case *arrays.Decimal64Builder:
		bb.Append(decimal.Decimal64(cell.(*big.Int).Int64()))
	case *arrays.Decimal128Builder:
		bb.Append(decimal128.FromBigInt(cell.(*big.Int)))
	case *arrays.Decimal256Builder:
		bb.Append(decimal256.FromBigInt(cell.(*big.Int)))
	case *arrays.MapBuilder:
		bb.Append(true)
		for _, kv := range cell.([][2]any) {
			appendCell(bb.KeyBuilder(), kv[0])
			appendCell(bb.ItemBuilder(), kv[1])
		}
	case arrays.ListLikeBuilder:
		bb.Append(true)
		for _, e := range cell.([]any) {
			appendCell(bb.ValueBuilder(), e)
		}
	case *arrays.StructBuilder:
		bb.Append(true)
		m := cell.(map[string]any)
		for j, f := range bb.Type().(*arrow.StructType).Fields() {
			appendCell(bb.FieldBuilder(j), m[f.Name])
		}
	default:
		panic(fmt.Sprintf("no cell appender for %T", b))
	}
}
