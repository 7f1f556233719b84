package client

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

func TestSQLLiteral(t *testing.T) {
	s := "it's"
	for _, tc := range []struct {
		v    any
		want string // "": an InvalidInput error
	}{
		{nil, "NULL"},
		{true, "TRUE"},
		{int8(-3), "-3"},
		{uint64(math.MaxUint64), "18446744073709551615"},
		{2.5, "2.5"},
		{float32(0.1), "0.10000000149011612"},
		{1e21, "1e+21"},
		{"it's", "'it''s'"},
		{&s, "'it''s'"},
		{(*string)(nil), "NULL"},
		{time.Date(2024, 1, 2, 3, 4, 5, 600000000, time.FixedZone("x", 3600)), "TIMESTAMP '2024-01-02 02:04:05.6'"},
		{[]float32{1, 2}, "[1, 2]"},
		{[2]string{"a", "b"}, "['a', 'b']"},
		{math.NaN(), ""},
		{math.Inf(1), ""},
		{map[string]int{}, ""},
		{struct{}{}, ""},
	} {
		got, err := SQLLiteral(tc.v)
		if tc.want == "" {
			if !errors.Is(err, ErrInvalidInput) {
				t.Errorf("SQLLiteral(%#v) = %q, %v; want InvalidInput", tc.v, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("SQLLiteral(%#v) = %q, %v; want %q", tc.v, got, err, tc.want)
		}
	}
}

// TestTypeJSON writes Arrow types in the API's JSON form and reads them
// back.
func TestTypeJSON(t *testing.T) {
	dec, _ := arrow.NewDecimalType(arrow.DECIMAL128, 12, 3)
	for _, dt := range []arrow.DataType{
		arrow.FixedWidthTypes.Boolean, arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Uint64, arrow.FixedWidthTypes.Float16,
		arrow.PrimitiveTypes.Float64, arrow.BinaryTypes.String, arrow.BinaryTypes.LargeString, arrow.BinaryTypes.Binary,
		arrow.BinaryTypes.LargeBinary, arrow.FixedWidthTypes.Date32, arrow.FixedWidthTypes.Date64,
		&arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "Europe/Paris"}, &arrow.TimestampType{Unit: arrow.Second},
		&arrow.Time32Type{Unit: arrow.Second}, &arrow.Time64Type{Unit: arrow.Nanosecond}, &arrow.DurationType{Unit: arrow.Millisecond},
		dec, &arrow.FixedSizeBinaryType{ByteWidth: 16},
		arrow.FixedSizeListOf(128, arrow.PrimitiveTypes.Float32), arrow.ListOf(arrow.BinaryTypes.String),
		arrow.LargeListOf(arrow.PrimitiveTypes.Int32), arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int64),
		arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int16, Nullable: true}, arrow.Field{Name: "b", Type: arrow.ListOf(arrow.FixedWidthTypes.Boolean)}),
	} {
		got, err := typeJSON(dt).arrow()
		if err != nil || !arrow.TypeEqual(got, dt) {
			t.Errorf("%s came back as %v, %v", dt, got, err)
		}
	}
	for _, bad := range []jsonType{{Type: "nope"}, {Type: "fixed_size_list"}, {Type: "timestamp", Unit: "minutes"}, {Type: "decimal128"}, {Type: "map", Fields: []jsonField{{Name: "e", Type: jsonType{Type: "int8"}}}}} {
		if _, err := bad.arrow(); err == nil {
			t.Errorf("%+v was read", bad)
		}
	}
	// A server that leaves out units gets Lance's defaults.
	if got, _ := (jsonType{Type: "timestamp"}).arrow(); !arrow.TypeEqual(got, &arrow.TimestampType{Unit: arrow.Microsecond}) {
		t.Errorf("timestamp without unit: %v", got)
	}
}
