package file_test

// The datasets the SDK tests write: one table per type family, shaped so
// that Lance's default strategy picks each encoding it has (see the
// comment on each column).

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// fill appends the value of one row to b.
type fill func(r *rand.Rand, b array.Builder, row int)

type testCol struct {
	name string
	typ  arrow.DataType
	meta map[string]string
	fill fill
}

type testDataset struct {
	name   string
	cols   []testCol
	writes []int // rows in each write: the first creates, the rest append
	batch  int   // rows per record batch in a write
}

// val fills rows with f's value, or null where f says so.
func val[T any](f func(r *rand.Rand, row int) (T, bool)) fill {
	return func(r *rand.Rand, b array.Builder, row int) {
		v, ok := f(r, row)
		ab := b.(interface {
			Append(T)
			AppendNull()
		})
		if ok {
			ab.Append(v)
		} else {
			ab.AppendNull()
		}
	}
}

func always[T any](f func(r *rand.Rand, row int) T) fill {
	return val(func(r *rand.Rand, row int) (T, bool) { return f(r, row), true })
}

// list fills list (or large list) rows: null where n < 0, else n items.
func list(n func(r *rand.Rand, row int) int, item fill) fill {
	return func(r *rand.Rand, b array.Builder, row int) {
		lb := b.(array.ListLikeBuilder)
		k := n(r, row)
		if k < 0 {
			lb.AppendNull()
			return
		}
		lb.Append(true)
		for i := 0; i < k; i++ {
			item(r, lb.ValueBuilder(), row*16+i)
		}
	}
}

// structOf fills struct rows, null where valid says so.
func structOf(valid func(r *rand.Rand, row int) bool, fields ...fill) fill {
	return func(r *rand.Rand, b array.Builder, row int) {
		sb := b.(*array.StructBuilder)
		ok := valid(r, row)
		sb.Append(ok) // a null struct gets null fields
		for i, f := range fields {
			if ok {
				f(r, sb.FieldBuilder(i), row)
			}
		}
	}
}

// vector fills fixed-size list rows of dim items; a null row (valid says
// no) still gets valid items, as vector columns usually have.
func vector(dim int, valid func(r *rand.Rand, row int) bool, item fill) fill {
	return func(r *rand.Rand, b array.Builder, row int) {
		fb := b.(*array.FixedSizeListBuilder)
		fb.AppendValues([]bool{valid(r, row)})
		for i := 0; i < dim; i++ {
			item(r, fb.ValueBuilder(), row*dim+i)
		}
	}
}

func every(n int) func(*rand.Rand, int) bool {
	return func(_ *rand.Rand, row int) bool { return row%n != 0 }
}
func allValid(*rand.Rand, int) bool { return true }

var words = []string{"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa"}

func text(r *rand.Rand, n int) string {
	var sb strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteString(words[r.IntN(len(words))])
		if r.IntN(3) == 0 {
			fmt.Fprintf(&sb, "%d", r.IntN(100))
		}
	}
	return sb.String()
}

func listOf(t arrow.DataType) arrow.DataType {
	return arrow.ListOfField(arrow.Field{Name: "item", Type: t, Nullable: true})
}
func largeListOf(t arrow.DataType) arrow.DataType {
	return arrow.LargeListOfField(arrow.Field{Name: "item", Type: t, Nullable: true})
}
func fslOf(n int32, t arrow.DataType) arrow.DataType {
	return arrow.FixedSizeListOfField(n, arrow.Field{Name: "item", Type: t, Nullable: true})
}
func structType(fields ...arrow.Field) arrow.DataType { return arrow.StructOf(fields...) }
func field(name string, t arrow.DataType) arrow.Field {
	return arrow.Field{Name: name, Type: t, Nullable: true}
}

func testDatasets() []testDataset {
	return []testDataset{
		{name: "ints", writes: []int{3000, 1500, 2500}, batch: 1000, cols: []testCol{
			{name: "i8", typ: arrow.PrimitiveTypes.Int8, fill: always(func(r *rand.Rand, _ int) int8 { return int8(r.Uint32()) })},
			{name: "i16", typ: arrow.PrimitiveTypes.Int16, fill: always(func(r *rand.Rand, _ int) int16 { return int16(r.Uint32()) })},
			{name: "i32", typ: arrow.PrimitiveTypes.Int32, fill: always(func(r *rand.Rand, _ int) int32 { return int32(r.Uint32()) })},
			{name: "i64", typ: arrow.PrimitiveTypes.Int64, fill: always(func(r *rand.Rand, _ int) int64 { return int64(r.Uint64()) })},
			// Small values: inline bit-packing.
			{name: "u8_small", typ: arrow.PrimitiveTypes.Uint8, fill: always(func(r *rand.Rand, _ int) uint8 { return uint8(r.IntN(16)) })},
			{name: "u16", typ: arrow.PrimitiveTypes.Uint16, fill: always(func(r *rand.Rand, _ int) uint16 { return uint16(r.Uint32()) })},
			{name: "u32_sorted", typ: arrow.PrimitiveTypes.Uint32, fill: always(func(_ *rand.Rand, row int) uint32 { return uint32(row * 3) })},
			{name: "u64_sorted", typ: arrow.PrimitiveTypes.Uint64, fill: always(func(_ *rand.Rand, row int) uint64 { return uint64(row) * 1_000_003 })},
			// Runs: RLE.
			{name: "i32_runs", typ: arrow.PrimitiveTypes.Int32, fill: always(func(_ *rand.Rand, row int) int32 { return int32(row / 300) })},
			{name: "i16_runs_nulls", typ: arrow.PrimitiveTypes.Int16, fill: val(func(_ *rand.Rand, row int) (int16, bool) { return int16(row / 50), row%7 != 0 })},
			// One value: constant page (2.2), RLE (2.1).
			{name: "i64_const", typ: arrow.PrimitiveTypes.Int64, fill: always(func(*rand.Rand, int) int64 { return -7 })},
			{name: "u32_const", typ: arrow.PrimitiveTypes.Uint32, fill: always(func(*rand.Rand, int) uint32 { return 123456 })},
			{name: "i32_nulls", typ: arrow.PrimitiveTypes.Int32, fill: val(func(r *rand.Rand, row int) (int32, bool) { return int32(r.IntN(1 << 20)), row%3 != 0 })},
			{name: "i32_allnull", typ: arrow.PrimitiveTypes.Int32, fill: val(func(*rand.Rand, int) (int32, bool) { return 0, false })},
			// One value and nulls: constant page with definition levels.
			{name: "u8_sparse", typ: arrow.PrimitiveTypes.Uint8, fill: val(func(_ *rand.Rand, row int) (uint8, bool) { return 5, row%97 == 3 })},
			{name: "i64_negative", typ: arrow.PrimitiveTypes.Int64, fill: always(func(r *rand.Rand, _ int) int64 { return -int64(r.IntN(1000)) })},
		}},
		{name: "floats", writes: []int{3000, 2000}, batch: 1000, cols: []testCol{
			{name: "f16", typ: arrow.FixedWidthTypes.Float16, fill: always(func(r *rand.Rand, _ int) float16.Num { return float16.New(r.Float32() * 100) })},
			{name: "f32", typ: arrow.PrimitiveTypes.Float32, fill: always(func(r *rand.Rand, _ int) float32 { return r.Float32() * 1000 })},
			{name: "f64", typ: arrow.PrimitiveTypes.Float64, fill: always(func(r *rand.Rand, _ int) float64 { return r.NormFloat64() * 1e6 })},
			{name: "f64_nulls", typ: arrow.PrimitiveTypes.Float64, fill: val(func(r *rand.Rand, row int) (float64, bool) { return r.Float64(), row%5 != 0 })},
			{name: "f32_const", typ: arrow.PrimitiveTypes.Float32, fill: always(func(*rand.Rand, int) float32 { return 1.5 })},
			{name: "f32_special", typ: arrow.PrimitiveTypes.Float32, fill: always(func(_ *rand.Rand, row int) float32 {
				return []float32{0, float32(math.Inf(1)), float32(math.Inf(-1)), -0.0, math.MaxFloat32, math.SmallestNonzeroFloat32}[row%6]
			})},
			// General compression on request: mini-blocks compressed whole,
			// byte stream split before it for floats.
			{name: "f32_zstd", typ: arrow.PrimitiveTypes.Float32, meta: map[string]string{"lance-encoding:compression": "zstd"}, fill: always(func(r *rand.Rand, _ int) float32 { return r.Float32() })},
			{name: "f64_lz4_bss", typ: arrow.PrimitiveTypes.Float64, meta: map[string]string{"lance-encoding:compression": "lz4", "lance-encoding:bss": "on"}, fill: always(func(r *rand.Rand, _ int) float64 { return 100 + r.Float64() })},
			{name: "i64_zstd", typ: arrow.PrimitiveTypes.Int64, meta: map[string]string{"lance-encoding:compression": "zstd"}, fill: always(func(r *rand.Rand, _ int) int64 { return int64(r.IntN(1 << 40)) })},
			{name: "f16_runs", typ: arrow.FixedWidthTypes.Float16, fill: always(func(_ *rand.Rand, row int) float16.Num { return float16.New(float32(row / 100)) })},
		}},
		{name: "bools", writes: []int{3000, 700}, batch: 1000, cols: []testCol{
			{name: "b", typ: arrow.FixedWidthTypes.Boolean, fill: always(func(r *rand.Rand, _ int) bool { return r.IntN(2) == 0 })},
			{name: "b_const", typ: arrow.FixedWidthTypes.Boolean, fill: always(func(*rand.Rand, int) bool { return true })},
			{name: "b_false", typ: arrow.FixedWidthTypes.Boolean, fill: always(func(*rand.Rand, int) bool { return false })},
			{name: "b_nulls", typ: arrow.FixedWidthTypes.Boolean, fill: val(func(r *rand.Rand, row int) (bool, bool) { return r.IntN(2) == 0, row%4 != 0 })},
			{name: "b_allnull", typ: arrow.FixedWidthTypes.Boolean, fill: val(func(*rand.Rand, int) (bool, bool) { return false, false })},
			{name: "b_runs", typ: arrow.FixedWidthTypes.Boolean, fill: always(func(_ *rand.Rand, row int) bool { return row/500%2 == 0 })},
		}},
		{name: "strings", writes: []int{2000, 1000}, batch: 500, cols: []testCol{
			{name: "s_short", typ: arrow.BinaryTypes.String, fill: always(func(r *rand.Rand, _ int) string { return fmt.Sprintf("k%d", r.IntN(1e9)) })},
			// Few distinct values: dictionary.
			{name: "s_dict", typ: arrow.BinaryTypes.String, fill: always(func(r *rand.Rand, _ int) string { return words[r.IntN(len(words))] })},
			// Repetitive text: FSST in mini-blocks.
			{name: "s_text", typ: arrow.BinaryTypes.String, fill: always(func(r *rand.Rand, _ int) string { return text(r, 8) })},
			// Values over 256 bytes: full-zip with FSST.
			{name: "s_long", typ: arrow.BinaryTypes.String, fill: always(func(r *rand.Rand, _ int) string { return text(r, 80) })},
			// Some values over 32 KiB: full-zip, zstd per value.
			{name: "s_huge", typ: arrow.BinaryTypes.String, fill: val(func(r *rand.Rand, row int) (string, bool) {
				if row%40 == 0 {
					return text(r, 6000), true
				}
				return fmt.Sprintf("x%d", row), row%9 != 0
			})},
			{name: "ls_nulls", typ: arrow.BinaryTypes.LargeString, fill: val(func(_ *rand.Rand, row int) (string, bool) { return fmt.Sprintf("v%d", row), row%4 != 0 })},
			{name: "bin", typ: arrow.BinaryTypes.Binary, fill: always(func(r *rand.Rand, row int) []byte {
				b := make([]byte, row%21)
				for i := range b {
					b[i] = byte(r.Uint32())
				}
				return b
			})},
			{name: "lbin_nulls", typ: arrow.BinaryTypes.LargeBinary, fill: val(func(r *rand.Rand, row int) ([]byte, bool) { return []byte{byte(row), byte(row >> 8), 7}, row%6 != 0 })},
			{name: "s_const", typ: arrow.BinaryTypes.String, fill: always(func(*rand.Rand, int) string { return "same every time" })},
			{name: "s_empty_nulls", typ: arrow.BinaryTypes.String, fill: val(func(_ *rand.Rand, row int) (string, bool) { return "", row%2 == 0 })},
			{name: "bin_allnull", typ: arrow.BinaryTypes.Binary, fill: val(func(*rand.Rand, int) ([]byte, bool) { return nil, false })},
			{name: "s_unicode", typ: arrow.BinaryTypes.String, fill: always(func(r *rand.Rand, row int) string {
				return []string{"héllo", "日本語のテキスト", "emoji 🎉", "Ωμέγα", ""}[r.IntN(5)] + fmt.Sprint(row%13)
			})},
			{name: "bin_huge", typ: arrow.BinaryTypes.Binary, fill: val(func(r *rand.Rand, row int) ([]byte, bool) {
				if row%100 != 0 {
					return nil, false
				}
				b := bytes.Repeat([]byte{byte(row), 1, 2, 3}, 10000+row)
				return b, true
			})},
			{name: "s_zstd", typ: arrow.BinaryTypes.String, meta: map[string]string{"lance-encoding:compression": "zstd"}, fill: always(func(r *rand.Rand, row int) string {
				return fmt.Sprintf("abc%dxyz%s", row%100, strings.Repeat("q", row%5))
			})},
		}},
		{name: "temporal", writes: []int{2500, 1000}, batch: 1000, cols: []testCol{
			{name: "d32", typ: arrow.FixedWidthTypes.Date32, fill: always(func(_ *rand.Rand, row int) arrow.Date32 { return arrow.Date32(18000 + row) })},
			{name: "ts_s", typ: &arrow.TimestampType{Unit: arrow.Second}, fill: always(func(r *rand.Rand, row int) arrow.Timestamp {
				return arrow.Timestamp(1_700_000_000 + row*60 + r.IntN(60))
			})},
			{name: "ts_ms_utc", typ: &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}, fill: always(func(r *rand.Rand, row int) arrow.Timestamp {
				return arrow.Timestamp(1_700_000_000_000 + int64(r.IntN(1e9)))
			})},
			{name: "ts_us", typ: &arrow.TimestampType{Unit: arrow.Microsecond}, fill: val(func(r *rand.Rand, row int) (arrow.Timestamp, bool) {
				return arrow.Timestamp(int64(row) * 1_000_003), row%11 != 0
			})},
			{name: "ts_ns_paris", typ: &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "Europe/Paris"}, fill: always(func(r *rand.Rand, _ int) arrow.Timestamp { return arrow.Timestamp(r.Int64()) })},
			{name: "ts_s_tz", typ: &arrow.TimestampType{Unit: arrow.Second, TimeZone: "America/New_York"}, fill: always(func(*rand.Rand, int) arrow.Timestamp { return 86400 })},
			{name: "ts_us_utc", typ: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, fill: always(func(_ *rand.Rand, row int) arrow.Timestamp { return arrow.Timestamp(int64(row/10) * 1e6) })},
		}},
		{name: "vectors", writes: []int{3000, 3000}, batch: 500, cols: []testCol{
			{name: "id", typ: arrow.PrimitiveTypes.Int32, fill: always(func(_ *rand.Rand, row int) int32 { return int32(row) })},
			// 6 KiB per row: full-zip.
			{name: "v1536", typ: fslOf(1536, arrow.PrimitiveTypes.Float32), fill: vector(1536, allValid, always(func(r *rand.Rand, _ int) float32 { return r.Float32() }))},
			{name: "v_f16", typ: fslOf(8, arrow.FixedWidthTypes.Float16), fill: vector(8, every(13), always(func(r *rand.Rand, _ int) float16.Num { return float16.New(r.Float32()) }))},
			{name: "v_u8", typ: fslOf(16, arrow.PrimitiveTypes.Uint8), fill: vector(16, every(9), always(func(r *rand.Rand, _ int) uint8 { return uint8(r.Uint32()) }))},
			// Null items inside vectors: a validity buffer in each chunk.
			{name: "v_f32_nullitems", typ: fslOf(4, arrow.PrimitiveTypes.Float32), fill: vector(4, every(10), val(func(r *rand.Rand, i int) (float32, bool) { return r.Float32(), i%7 != 3 }))},
			// Full-zip with validity zipped into each value.
			{name: "v512_nullitems", typ: fslOf(512, arrow.PrimitiveTypes.Float32), fill: vector(512, every(8), val(func(r *rand.Rand, i int) (float32, bool) { return r.Float32(), i%511 != 5 }))},
		}},
		{name: "lists", writes: []int{2000, 1200}, batch: 400, cols: []testCol{
			{name: "l_i32", typ: listOf(arrow.PrimitiveTypes.Int32), fill: list(func(_ *rand.Rand, row int) int {
				if row%11 == 0 {
					return -1
				}
				return row % 5
			}, val(func(_ *rand.Rand, i int) (int32, bool) { return int32(i), i%16 != 2 }))},
			{name: "ll_str", typ: largeListOf(arrow.BinaryTypes.String), fill: list(func(_ *rand.Rand, row int) int { return row % 3 }, always(func(r *rand.Rand, i int) string { return words[r.IntN(4)] }))},
			{name: "l_l_i64", typ: listOf(listOf(arrow.PrimitiveTypes.Int64)), fill: list(func(_ *rand.Rand, row int) int {
				if row%7 == 0 {
					return -1
				}
				return row % 3
			}, list(func(_ *rand.Rand, i int) int {
				if i%5 == 1 {
					return -1
				}
				return i % 4
			}, val(func(_ *rand.Rand, i int) (int64, bool) { return int64(i) * 10, i%16 != 2 })))},
			{name: "l_struct", typ: listOf(structType(field("x", arrow.PrimitiveTypes.Int32), field("y", arrow.BinaryTypes.String))), fill: list(func(_ *rand.Rand, row int) int {
				if row%6 == 0 {
					return 0
				}
				return row % 4
			}, structOf(func(_ *rand.Rand, i int) bool { return i%16 != 1 },
				val(func(_ *rand.Rand, i int) (int32, bool) { return int32(i), i%16 != 2 }),
				always(func(_ *rand.Rand, i int) string { return fmt.Sprintf("s%d", i%16) })))},
			{name: "l_allnull", typ: listOf(arrow.PrimitiveTypes.Int32), fill: list(func(_ *rand.Rand, row int) int {
				if row%2 == 0 {
					return -1
				}
				return 0
			}, always(func(*rand.Rand, int) int32 { return 0 }))},
			{name: "ll_f64", typ: largeListOf(arrow.PrimitiveTypes.Float64), fill: list(func(_ *rand.Rand, row int) int { return 1 + row%4 }, always(func(r *rand.Rand, _ int) float64 { return r.Float64() }))},
			// Long items: full-zip with repetition levels.
			{name: "l_long_str", typ: listOf(arrow.BinaryTypes.String), fill: list(func(_ *rand.Rand, row int) int {
				if row%5 == 0 {
					return -1
				}
				return row % 3
			}, val(func(r *rand.Rand, i int) (string, bool) { return text(r, 60), i%16 != 1 }))},
			{name: "l_vec", typ: listOf(fslOf(2, arrow.PrimitiveTypes.Float32)), fill: list(func(_ *rand.Rand, row int) int { return row % 3 }, vector(2, allValid, always(func(r *rand.Rand, _ int) float32 { return r.Float32() })))},
		}},
		{name: "structs", writes: []int{2000, 1000}, batch: 500, cols: []testCol{
			{name: "st", typ: structType(field("a", arrow.PrimitiveTypes.Int32), field("b", arrow.BinaryTypes.String)), fill: structOf(every(13),
				val(func(_ *rand.Rand, row int) (int32, bool) { return int32(row), row%4 != 0 }),
				always(func(_ *rand.Rand, row int) string { return fmt.Sprintf("b%d", row%10) }))},
			{name: "st_list", typ: structType(field("l", listOf(arrow.PrimitiveTypes.Float64)), field("n", arrow.PrimitiveTypes.Int16)), fill: structOf(every(9),
				list(func(_ *rand.Rand, row int) int {
					if row%4 == 0 {
						return -1
					}
					return row % 3
				}, val(func(_ *rand.Rand, i int) (float64, bool) { return float64(i) / 2, i%16 != 1 })),
				always(func(_ *rand.Rand, row int) int16 { return int16(row) }))},
			{name: "st_nested", typ: structType(field("s", structType(field("x", arrow.PrimitiveTypes.Int64), field("y", arrow.FixedWidthTypes.Boolean))), field("z", arrow.BinaryTypes.String)), fill: structOf(every(7),
				structOf(every(5),
					val(func(r *rand.Rand, row int) (int64, bool) { return r.Int64N(1000), row%3 != 0 }),
					always(func(_ *rand.Rand, row int) bool { return row%2 == 0 })),
				val(func(r *rand.Rand, row int) (string, bool) { return text(r, 2), row%8 != 0 }))},
			{name: "st_allnull_child", typ: structType(field("a", arrow.PrimitiveTypes.Int32)), fill: structOf(every(3), val(func(*rand.Rand, int) (int32, bool) { return 0, false }))},
			{name: "st_vec", typ: structType(field("v", fslOf(3, arrow.PrimitiveTypes.Float32)), field("k", arrow.PrimitiveTypes.Uint64)), fill: structOf(every(10),
				vector(3, allValid, always(func(r *rand.Rand, _ int) float32 { return r.Float32() })),
				always(func(_ *rand.Rand, row int) uint64 { return uint64(row) }))},
		}},
	}
}

func (d testDataset) schema() *arrow.Schema {
	fields := make([]arrow.Field, len(d.cols))
	for i, c := range d.cols {
		fields[i] = arrow.Field{Name: c.name, Type: c.typ, Nullable: true}
		if c.meta != nil {
			fields[i].Metadata = arrow.MetadataFrom(c.meta)
		}
	}
	return arrow.NewSchema(fields, nil)
}

// write returns write w of the dataset as an Arrow IPC file, and its
// rows as one record (the caller releases it). Row numbers continue from
// one write to the next; values are the same on every run.
func (d testDataset) write(w int) ([]byte, arrow.RecordBatch, error) {
	mem := memory.DefaultAllocator
	schema := d.schema()
	first := 0
	for _, n := range d.writes[:w] {
		first += n
	}
	var buf bytes.Buffer
	fw, err := ipc.NewFileWriter(&buf, ipc.WithSchema(schema), ipc.WithAllocator(mem))
	if err != nil {
		return nil, nil, err
	}
	rb := array.NewRecordBuilder(mem, schema)
	defer rb.Release()
	var batches []arrow.RecordBatch
	defer func() {
		for _, b := range batches {
			b.Release()
		}
	}()
	for start := 0; start < d.writes[w]; start += d.batch {
		end := min(start+d.batch, d.writes[w])
		for c, col := range d.cols {
			r := rand.New(rand.NewPCG(uint64(w*1000+c), uint64(start)))
			for row := first + start; row < first+end; row++ {
				col.fill(r, rb.Field(c), row)
			}
		}
		rec := rb.NewRecordBatch()
		batches = append(batches, rec)
		if err := fw.Write(rec); err != nil {
			return nil, nil, err
		}
	}
	if err := fw.Close(); err != nil {
		return nil, nil, err
	}
	all := make([]arrow.Array, len(d.cols))
	for c := range d.cols {
		parts := make([]arrow.Array, len(batches))
		for i, b := range batches {
			parts[i] = b.Column(c)
		}
		if all[c], err = array.Concatenate(parts, mem); err != nil {
			return nil, nil, err
		}
		defer all[c].Release()
	}
	return buf.Bytes(), array.NewRecordBatch(schema, all, int64(d.writes[w])), nil
}
