package arrowin_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/lancens/lancens/internal/arrowin"
	"github.com/lancens/lancens/internal/arrowtest"
)

var defaults = arrowin.Limits{MaxBodyBytes: 1 << 30, MaxDecodedBytes: 1 << 30, MaxRows: 10_000_000}

// richBatches returns two batches of a schema with a column of every type
// lancens stores, nested ones and dictionaries included.
func richBatches(t testing.TB) (*arrow.Schema, []arrow.RecordBatch) {
	t.Helper()
	dict := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String}
	cols := []struct {
		name   string
		dt     arrow.DataType
		values [2]string
	}{
		{"null", arrow.Null, [2]string{`[null, null]`, `[null]`}},
		{"bool", arrow.FixedWidthTypes.Boolean, [2]string{`[true, null]`, `[false]`}},
		{"i8", arrow.PrimitiveTypes.Int8, [2]string{`[-1, null]`, `[7]`}},
		{"u64", arrow.PrimitiveTypes.Uint64, [2]string{`[18446744073709551615, 0]`, `[null]`}},
		{"f16", arrow.FixedWidthTypes.Float16, [2]string{`[1.5, null]`, `[2]`}},
		{"f64", arrow.PrimitiveTypes.Float64, [2]string{`[0.5, -1]`, `[null]`}},
		{"utf8", arrow.BinaryTypes.String, [2]string{`["héllo", null]`, `["名前"]`}},
		{"large_utf8", arrow.BinaryTypes.LargeString, [2]string{`["", "x"]`, `[null]`}},
		{"utf8_view", arrow.BinaryTypes.StringView, [2]string{`["short", "a string longer than twelve bytes"]`, `[null]`}},
		{"binary", arrow.BinaryTypes.Binary, [2]string{`["AAEC", null]`, `[""]`}},
		{"binary_view", arrow.BinaryTypes.BinaryView, [2]string{`["AAEC", null]`, `["AAECAwQFBgcICQoLDA0ODw=="]`}},
		{"fsb", &arrow.FixedSizeBinaryType{ByteWidth: 3}, [2]string{`["AAEC", null]`, `["AQID"]`}},
		{"date32", arrow.FixedWidthTypes.Date32, [2]string{`["2024-02-29", null]`, `["1970-01-01"]`}},
		{"ts", &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, [2]string{`[1, null]`, `[2]`}},
		{"dec128", &arrow.Decimal128Type{Precision: 10, Scale: 2}, [2]string{`["1.25", null]`, `["-0.01"]`}},
		{"dec256", &arrow.Decimal256Type{Precision: 50, Scale: 5}, [2]string{`["1.00001", null]`, `["2"]`}},
		{"list", arrow.ListOf(arrow.PrimitiveTypes.Int32), [2]string{`[[1, null], null]`, `[[]]`}},
		{"large_list", arrow.LargeListOf(arrow.BinaryTypes.String), [2]string{`[["a"], []]`, `[null]`}},
		{"vector", arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Float32), [2]string{`[[0.5, 1], null]`, `[[2, 3]]`}},
		{"struct", arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
			arrow.Field{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true}), [2]string{`[{"x": 1, "s": "a"}, null]`, `[{"x": null, "s": null}]`}},
		{"map", arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int64), [2]string{`[[{"key": "a", "value": 1}], null]`, `[[]]`}},
		{"dict", dict, [2]string{`["x", null]`, `["y"]`}},
	}
	var fields []arrow.Field
	for _, c := range cols {
		fields = append(fields, arrow.Field{Name: c.name, Type: c.dt, Nullable: true})
	}
	schema := arrow.NewSchema(fields, nil)
	var batches []arrow.RecordBatch
	for b, rows := range []int64{2, 1} {
		var arrs []arrow.Array
		for _, c := range cols {
			arrs = append(arrs, arrowtest.Column(t, c.dt, c.values[b]))
		}
		batches = append(batches, array.NewRecordBatch(schema, arrs, rows))
	}
	return schema, batches
}

func TestDecodeValidStreams(t *testing.T) {
	schema, batches := richBatches(t)
	for _, tc := range []struct {
		name string
		opts []ipc.Option
	}{
		{"plain", nil},
		{"lz4", []ipc.Option{ipc.WithLZ4()}},
		{"zstd", []ipc.Option{ipc.WithZstd()}},
		{"dictionary_deltas", []ipc.Option{ipc.WithDictionaryDeltas(true), ipc.WithZstd()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := arrowtest.Stream(t, schema, batches, tc.opts...)
			gotSchema, got, err := decode(bytes.NewReader(body), defaults)
			if err != nil {
				t.Fatal(err)
			}
			if !gotSchema.Equal(schema) || len(got) != len(batches) {
				t.Fatalf("decoded %s with %d batches", gotSchema, len(got))
			}
			for i := range got {
				if !array.RecordEqual(got[i], batches[i]) {
					t.Errorf("batch %d:\n%v\nwant\n%v", i, got[i], batches[i])
				}
			}
		})
	}
	t.Run("schema_only", func(t *testing.T) {
		got, recs, err := decode(bytes.NewReader(arrowtest.Stream(t, schema, nil)), defaults)
		if err != nil || !got.Equal(schema) || len(recs) != 0 {
			t.Fatalf("got %v, %d batches, %v", got, len(recs), err)
		}
	})
}

// refused asserts that err is a refusal of bad input.
func refused(t *testing.T, err error) {
	t.Helper()
	var e *arrowin.Error
	if !errors.As(err, &e) || e.Unsupported {
		t.Fatalf("got %v, want a bad-input *arrowin.Error", err)
	}
}

// allocated returns the bytes the Go heap handed out while f ran.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func TestDecodeRefusesHostileBodies(t *testing.T) {
	for _, h := range arrowtest.HostileBodies(t) {
		t.Run(h.Name, func(t *testing.T) {
			var err error
			n := allocated(func() { _, _, err = decode(bytes.NewReader(h.Body), defaults) })
			refused(t, err)
			// Each body claims gigabytes or more; refusing it may cost a
			// small multiple of the bytes it sent, not what it claims, plus
			// a decoder's fixed buffers (LZ4 reads in blocks of up to 4 MiB).
			if limit := uint64(4*len(h.Body) + 8<<20); n > limit {
				t.Errorf("allocated %d bytes refusing a %d-byte body (limit %d)", n, len(h.Body), limit)
			}
		})
	}
}

func TestDecodeLimits(t *testing.T) {
	rec := arrowtest.Record(t, arrowtest.HostileSchema, arrowtest.HostileRows) // 3 rows
	plain := arrowtest.Stream(t, arrowtest.HostileSchema, []arrow.RecordBatch{rec, rec})
	zstd := arrowtest.Stream(t, arrowtest.HostileSchema, []arrow.RecordBatch{rec, rec}, ipc.WithZstd())
	size := func(b []byte) int64 { return int64(len(b)) }
	for _, tc := range []struct {
		name string
		body []byte
		lim  arrowin.Limits
		ok   bool
		// tooLarge: the refusal is Error.TooLarge (the body is over
		// MaxBodyBytes), which the server answers with 413.
		tooLarge bool
	}{
		{"rows_at_limit", plain, arrowin.Limits{MaxBodyBytes: 1 << 20, MaxDecodedBytes: 1 << 20, MaxRows: 6}, true, false},
		{"rows_over_limit", plain, arrowin.Limits{MaxBodyBytes: 1 << 20, MaxDecodedBytes: 1 << 20, MaxRows: 5}, false, false},
		{"body_at_limit", plain, arrowin.Limits{MaxBodyBytes: size(plain), MaxDecodedBytes: 1 << 20, MaxRows: 6}, true, false},
		{"body_over_limit", plain, arrowin.Limits{MaxBodyBytes: size(plain) - 100, MaxDecodedBytes: 1 << 20, MaxRows: 6}, false, true},
		// A body cut short declares more than the limit but holds less:
		// bad input, not too large.
		{"declares_over_limit_holds_less", plain[:len(plain)-100], arrowin.Limits{MaxBodyBytes: size(plain) - 50, MaxDecodedBytes: 1 << 20, MaxRows: 6}, false, false},
		// Two batches of 2×(8+8 rounded) value bytes and offsets: a
		// decoded-bytes limit under that refuses the body, compressed or not.
		{"decoded_over_limit_plain", plain, arrowin.Limits{MaxBodyBytes: 1 << 20, MaxDecodedBytes: 64, MaxRows: 6}, false, false},
		{"decoded_over_limit_zstd", zstd, arrowin.Limits{MaxBodyBytes: 1 << 20, MaxDecodedBytes: 64, MaxRows: 6}, false, false},
		{"decoded_under_limit_zstd", zstd, arrowin.Limits{MaxBodyBytes: 1 << 20, MaxDecodedBytes: 1 << 10, MaxRows: 6}, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, got, err := decode(bytes.NewReader(tc.body), tc.lim)
			if tc.ok {
				if err != nil || len(got) != 2 {
					t.Fatalf("got %d batches, %v", len(got), err)
				}
				return
			}
			refused(t, err)
			var e *arrowin.Error
			if !errors.As(err, &e) || e.TooLarge != tc.tooLarge {
				t.Fatalf("refusal %v: TooLarge is not %v", err, tc.tooLarge)
			}
		})
	}
}

func TestDecodeRefusesDictionaryIndexOutOfRange(t *testing.T) {
	body, at := arrowtest.DictionaryStream(t)
	body[at] = 7 // the dictionary holds 2 values
	_, _, err := decode(bytes.NewReader(body), defaults)
	refused(t, err)
}

func TestDecodeRefusesEmptyAndTruncatedBodies(t *testing.T) {
	plain := arrowtest.HostileTemplates(t)["plain"]
	for _, cut := range []int{0, 3, 7, 100, len(plain) - 9} {
		_, _, err := decode(bytes.NewReader(plain[:cut]), defaults)
		refused(t, err)
	}
	// The end-of-stream marker is optional.
	if _, got, err := decode(bytes.NewReader(plain[:len(plain)-8]), defaults); err != nil || len(got) != 1 {
		t.Fatalf("a stream without its end marker: %d batches, %v", len(got), err)
	}
}

func TestDecodeMarksUnsupportedColumns(t *testing.T) {
	dt := arrow.SparseUnionOf([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int32}}, []arrow.UnionTypeCode{0})
	schema := arrowtest.Schema("u", dt)
	col := arrowtest.Column(t, dt, `[[0, 1], [0, 2]]`)
	body := arrowtest.Stream(t, schema, []arrow.RecordBatch{array.NewRecordBatch(schema, []arrow.Array{col}, 2)})
	_, _, err := decode(bytes.NewReader(body), defaults)
	var e *arrowin.Error
	if !errors.As(err, &e) || !e.Unsupported {
		t.Fatalf("got %v, want an Unsupported *arrowin.Error", err)
	}
	// A schema alone is for the caller to judge.
	if _, _, err := decode(bytes.NewReader(arrowtest.Stream(t, schema, nil)), defaults); err != nil {
		t.Fatal(err)
	}
}

// TestDecodeSurvivesByteFlips flips 1 to 4 bytes of valid bodies: each
// either decodes to valid data or is refused; none panics or allocates
// more than a small multiple of its size.
func TestDecodeSurvivesByteFlips(t *testing.T) {
	schema, batches := richBatches(t)
	bodies := arrowtest.HostileTemplates(t)
	bodies["rich_lz4"] = arrowtest.Stream(t, schema, batches, ipc.WithLZ4())
	bodies["rich"] = arrowtest.Stream(t, schema, batches)
	rng := rand.New(rand.NewPCG(9, 19))
	for name, body := range bodies {
		for range 400 {
			b := arrowtest.Flip(body, rng)
			var err error
			n := allocated(func() { _, _, err = decode(bytes.NewReader(b), defaults) })
			var e *arrowin.Error
			if err != nil && !errors.As(err, &e) {
				t.Fatalf("%s: got %T %v", name, err, err)
			}
			if limit := uint64(16*len(b) + 8<<20); n > limit {
				t.Fatalf("%s: allocated %d bytes for a %d-byte body", name, n, len(b))
			}
		}
	}
}

// TestDecodeZstdFromArrowWriter decodes what arrow-go's own writer makes
// with ipc.WithZstd(): its streaming encoder writes frames that do not
// declare their size, and buffers of zeros shrink a thousandfold or more.
// Before unzstd told a decoder out of room from a broken frame, every one
// of these was refused ("output bigger than max block size").
func TestDecodeZstdFromArrowWriter(t *testing.T) {
	for _, tc := range []struct{ rows, dim int }{
		{5_000, 32},   // the audit's body: 640 KB of vectors
		{50_000, 32},  // 6.4 MB
		{100_000, 96}, // 38 MB, past several doublings of the room
	} {
		t.Run(fmt.Sprintf("%dx%d", tc.rows, tc.dim), func(t *testing.T) {
			rec := arrowtest.ZeroVectors(tc.rows, tc.dim)
			body := arrowtest.Stream(t, rec.Schema(), []arrow.RecordBatch{rec}, ipc.WithZstd())
			_, got, err := decode(bytes.NewReader(body), defaults)
			if err != nil {
				t.Fatalf("%d-byte body of %d vectors: %v", len(body), tc.rows, err)
			}
			if len(got) != 1 || !array.RecordEqual(got[0], rec) {
				t.Fatalf("decoded %d batches, not the vectors sent", len(got))
			}
		})
	}
}

// decode reads a whole stream with a Reader: its schema and every batch.
func decode(r io.Reader, lim arrowin.Limits) (*arrow.Schema, []arrow.RecordBatch, error) {
	rd, err := arrowin.NewReader(r, lim)
	if err != nil {
		return nil, nil, err
	}
	defer rd.Close()
	var out []arrow.RecordBatch
	for {
		b, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return rd.Schema(), out, nil
		}
		if err != nil {
			for _, b := range out {
				b.Release()
			}
			return nil, nil, err
		}
		out = append(out, b)
	}
}
