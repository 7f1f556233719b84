package legacy

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/decimal256"
	"github.com/apache/arrow-go/v18/arrow/endian"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/lancens/lancens/store"
)

// This file reads the values of the row store back, as its writer
// (store/sqlite's codec.go) stored them:
//
//	bool                         INTEGER 0/1
//	int8…int64, uint8…uint32     INTEGER
//	uint64                       INTEGER (the same 64 bits)
//	float16, float32, float64    REAL
//	utf8, large_utf8             TEXT
//	binary (all kinds)           BLOB
//	date32 / date64              INTEGER days / milliseconds since the epoch
//	timestamp, time, duration    INTEGER count of the type's unit
//	decimal, precision ≤ 18      INTEGER unscaled value
//	decimal, precision > 18      TEXT decimal
//	vector: fixed_size_list of float16/float32/float64/uint8/int8
//	                             BLOB, little-endian elements
//	other lists, maps            TEXT, JSON: structs as objects, maps as
//	                             [key, value] pairs, binary as base64,
//	                             NaN and infinities as strings
//	struct                       one column per child, plus a validity
//	                             column (1, or NULL for a null struct)
//	null                         INTEGER, always NULL

// FieldDecoder returns how many SQL columns a stored field of type dt spans
// (a struct: its validity column, then its children's, depth first, as
// FieldLayout.Columns lists them) and how to append one row of them to a
// builder of dt. The function it returns fails when a stored value does
// not fit the type.
func FieldDecoder(dt arrow.DataType) (int, func(b array.Builder, vals []any) error) {
	st, ok := dt.(*arrow.StructType)
	if !ok {
		return 1, func(b array.Builder, vals []any) error { return AppendValue(b, vals[0]) }
	}
	width := 1
	type child struct {
		offset, width int
		read          func(b array.Builder, vals []any) error
	}
	children := make([]child, st.NumFields())
	for j, f := range st.Fields() {
		w, rd := FieldDecoder(f.Type)
		children[j] = child{width, w, rd}
		width += w
	}
	return width, func(b array.Builder, vals []any) error {
		sb := b.(*array.StructBuilder)
		if vals[0] == nil {
			sb.AppendNull()
			return nil
		}
		sb.Append(true)
		for j, c := range children {
			if err := c.read(sb.FieldBuilder(j), vals[c.offset:c.offset+c.width]); err != nil {
				return err
			}
		}
		return nil
	}
}

// AppendValue appends one stored leaf value (as database/sql scanned it:
// nil, int64, float64, string or []byte) to a builder of the field's type.
// It returns an error when the stored value does not fit the type.
func AppendValue(b array.Builder, v any) error {
	if v == nil {
		b.AppendNull()
		return nil
	}
	dt := b.Type()
	switch bb := b.(type) {
	case *array.NullBuilder:
		bb.AppendNull()
		return nil
	case *array.FixedSizeListBuilder:
		if store.IsVectorType(dt) {
			return appendVector(bb, v)
		}
	}
	switch dt.ID() {
	case arrow.STRING, arrow.LARGE_STRING, arrow.LIST, arrow.LARGE_LIST, arrow.FIXED_SIZE_LIST, arrow.MAP:
		if dt.ID() == arrow.STRING || dt.ID() == arrow.LARGE_STRING {
			break
		}
		s, err := asString(v)
		if err != nil {
			return err
		}
		dec := json.NewDecoder(bytes.NewReader([]byte(s)))
		dec.UseNumber()
		var doc any
		if err := dec.Decode(&doc); err != nil {
			return fmt.Errorf("stored %s is not JSON: %w", dt, err)
		}
		return appendJSON(b, doc)
	}
	switch bb := b.(type) {
	case *array.BooleanBuilder:
		n, err := asInt(v)
		bb.Append(n != 0)
		return err
	case *array.Int8Builder:
		n, err := asInt(v)
		bb.Append(int8(n))
		return err
	case *array.Int16Builder:
		n, err := asInt(v)
		bb.Append(int16(n))
		return err
	case *array.Int32Builder:
		n, err := asInt(v)
		bb.Append(int32(n))
		return err
	case *array.Int64Builder:
		n, err := asInt(v)
		bb.Append(n)
		return err
	case *array.Uint8Builder:
		n, err := asInt(v)
		bb.Append(uint8(n))
		return err
	case *array.Uint16Builder:
		n, err := asInt(v)
		bb.Append(uint16(n))
		return err
	case *array.Uint32Builder:
		n, err := asInt(v)
		bb.Append(uint32(n))
		return err
	case *array.Uint64Builder:
		n, err := asInt(v)
		bb.Append(uint64(n))
		return err
	case *array.Float16Builder:
		f, err := asFloat(v)
		bb.Append(float16.New(float32(f)))
		return err
	case *array.Float32Builder:
		f, err := asFloat(v)
		bb.Append(float32(f))
		return err
	case *array.Float64Builder:
		f, err := asFloat(v)
		bb.Append(f)
		return err
	case *array.StringBuilder:
		s, err := asString(v)
		bb.Append(s)
		return err
	case *array.LargeStringBuilder:
		s, err := asString(v)
		bb.Append(s)
		return err
	case *array.BinaryBuilder:
		p, err := asBytes(v)
		bb.Append(p)
		return err
	case *array.FixedSizeBinaryBuilder:
		p, err := asBytes(v)
		if err == nil && len(p) != dt.(*arrow.FixedSizeBinaryType).ByteWidth {
			return fmt.Errorf("stored value has %d bytes, want %d", len(p), dt.(*arrow.FixedSizeBinaryType).ByteWidth)
		}
		bb.Append(p)
		return err
	case *array.Date32Builder:
		n, err := asInt(v)
		bb.Append(arrow.Date32(n))
		return err
	case *array.Date64Builder:
		n, err := asInt(v)
		bb.Append(arrow.Date64(n))
		return err
	case *array.TimestampBuilder:
		n, err := asInt(v)
		bb.Append(arrow.Timestamp(n))
		return err
	case *array.Time32Builder:
		n, err := asInt(v)
		bb.Append(arrow.Time32(n))
		return err
	case *array.Time64Builder:
		n, err := asInt(v)
		bb.Append(arrow.Time64(n))
		return err
	case *array.DurationBuilder:
		n, err := asInt(v)
		bb.Append(arrow.Duration(n))
		return err
	}
	if d, ok := dt.(arrow.DecimalType); ok {
		var n *big.Int
		if d.GetPrecision() <= 18 {
			i, err := asInt(v)
			if err != nil {
				return err
			}
			n = big.NewInt(i)
		} else {
			s, err := asString(v)
			if err != nil {
				return err
			}
			if n, err = parseDecimal(s, d.GetScale()); err != nil {
				return err
			}
		}
		return appendDecimal(b, n)
	}
	return fmt.Errorf("cannot read a stored %s", dt)
}

func appendDecimal(b array.Builder, n *big.Int) error {
	switch bb := b.(type) {
	case *array.Decimal32Builder:
		bb.Append(decimal.Decimal32(n.Int64()))
	case *array.Decimal64Builder:
		bb.Append(decimal.Decimal64(n.Int64()))
	case *array.Decimal128Builder:
		bb.Append(decimal128.FromBigInt(n))
	case *array.Decimal256Builder:
		bb.Append(decimal256.FromBigInt(n))
	default:
		return fmt.Errorf("not a decimal builder: %s", b.Type())
	}
	return nil
}

func asInt(v any) (int64, error) {
	switch x := v.(type) {
	case int64:
		return x, nil
	case float64:
		return int64(x), nil
	case []byte:
		return strconv.ParseInt(string(x), 10, 64)
	case string:
		return strconv.ParseInt(x, 10, 64)
	}
	return 0, fmt.Errorf("stored value %T is not an integer", v)
}

func asFloat(v any) (float64, error) {
	switch x := v.(type) {
	case float64:
		return x, nil
	case int64:
		return float64(x), nil
	case []byte:
		return strconv.ParseFloat(string(x), 64)
	case string:
		return strconv.ParseFloat(x, 64)
	}
	return 0, fmt.Errorf("stored value %T is not a number", v)
}

func asString(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case []byte:
		return string(x), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), nil
	}
	return "", fmt.Errorf("stored value %T is not text", v)
}

func asBytes(v any) ([]byte, error) {
	switch x := v.(type) {
	case []byte:
		return x, nil
	case string:
		return []byte(x), nil
	}
	return nil, fmt.Errorf("stored value %T is not binary", v)
}

// appendVector decodes a vector BLOB.
func appendVector(b *array.FixedSizeListBuilder, v any) error {
	p, err := asBytes(v)
	if err != nil {
		return err
	}
	t := b.Type().(*arrow.FixedSizeListType)
	n := int(t.Len())
	b.Append(true)
	switch vb := b.ValueBuilder().(type) {
	case *array.Float32Builder:
		if len(p) != 4*n {
			return fmt.Errorf("vector blob of %d bytes, want %d", len(p), 4*n)
		}
		if !endian.IsBigEndian {
			// The blob is the vector's own little-endian floats.
			vb.AppendValues(arrow.Float32Traits.CastFromBytes(p), nil)
			break
		}
		for j := range n {
			vb.Append(math.Float32frombits(binary.LittleEndian.Uint32(p[4*j:])))
		}
	case *array.Float64Builder:
		if len(p) != 8*n {
			return fmt.Errorf("vector blob of %d bytes, want %d", len(p), 8*n)
		}
		for j := range n {
			vb.Append(math.Float64frombits(binary.LittleEndian.Uint64(p[8*j:])))
		}
	case *array.Float16Builder:
		if len(p) != 2*n {
			return fmt.Errorf("vector blob of %d bytes, want %d", len(p), 2*n)
		}
		for j := range n {
			vb.Append(float16.FromBits(binary.LittleEndian.Uint16(p[2*j:])))
		}
	case *array.Uint8Builder:
		if len(p) != n {
			return fmt.Errorf("vector blob of %d bytes, want %d", len(p), n)
		}
		vb.AppendValues(p, nil)
	case *array.Int8Builder:
		if len(p) != n {
			return fmt.Errorf("vector blob of %d bytes, want %d", len(p), n)
		}
		for _, c := range p {
			vb.Append(int8(c))
		}
	default:
		return fmt.Errorf("cannot read a vector of %s", t.Elem())
	}
	return nil
}

// appendJSON appends a value decoded from jsonValue's encoding (numbers as
// json.Number) to a builder of the field's type.
func appendJSON(b array.Builder, v any) error {
	if v == nil {
		b.AppendNull()
		return nil
	}
	switch bb := b.(type) {
	case *array.StructBuilder:
		obj, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("stored struct is a %T", v)
		}
		bb.Append(true)
		for j, f := range bb.Type().(*arrow.StructType).Fields() {
			if err := appendJSON(bb.FieldBuilder(j), obj[f.Name]); err != nil {
				return err
			}
		}
		return nil
	case *array.MapBuilder:
		pairs, ok := v.([]any)
		if !ok {
			return fmt.Errorf("stored map is a %T", v)
		}
		bb.Append(true)
		for _, p := range pairs {
			kv, ok := p.([]any)
			if !ok || len(kv) != 2 {
				return fmt.Errorf("stored map entry is not a pair")
			}
			if err := appendJSON(bb.KeyBuilder(), kv[0]); err != nil {
				return err
			}
			if err := appendJSON(bb.ItemBuilder(), kv[1]); err != nil {
				return err
			}
		}
		return nil
	case array.ListLikeBuilder:
		items, ok := v.([]any)
		if !ok {
			return fmt.Errorf("stored list is a %T", v)
		}
		bb.Append(true)
		for _, it := range items {
			if err := appendJSON(bb.ValueBuilder(), it); err != nil {
				return err
			}
		}
		return nil
	}
	switch x := v.(type) {
	case bool:
		if bb, ok := b.(*array.BooleanBuilder); ok {
			bb.Append(x)
			return nil
		}
		return fmt.Errorf("stored bool for %s", b.Type())
	case json.Number:
		return appendNumber(b, x)
	case string:
		switch b.Type().ID() {
		case arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64:
			return appendNumber(b, json.Number(x))
		case arrow.BINARY, arrow.LARGE_BINARY, arrow.FIXED_SIZE_BINARY:
			p, err := base64.StdEncoding.DecodeString(x)
			if err != nil {
				return err
			}
			return AppendValue(b, p)
		}
		if d, ok := b.Type().(arrow.DecimalType); ok {
			n, err := parseDecimal(x, d.GetScale())
			if err != nil {
				return err
			}
			return appendDecimal(b, n)
		}
		return AppendValue(b, x)
	}
	return fmt.Errorf("stored %T for %s", v, b.Type())
}

// appendNumber appends a JSON number (or a NaN/Infinity string) to a
// numeric, decimal or temporal builder.
func appendNumber(b array.Builder, n json.Number) error {
	if d, ok := b.Type().(arrow.DecimalType); ok {
		v, err := parseDecimal(string(n), d.GetScale())
		if err != nil {
			return err
		}
		return appendDecimal(b, v)
	}
	switch b.Type().ID() {
	case arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64:
		var f float64
		switch n {
		case "NaN":
			f = math.NaN()
		case "Infinity":
			f = math.Inf(1)
		case "-Infinity":
			f = math.Inf(-1)
		default:
			var err error
			if f, err = strconv.ParseFloat(string(n), 64); err != nil {
				return err
			}
		}
		return AppendValue(b, f)
	case arrow.UINT64:
		u, err := strconv.ParseUint(string(n), 10, 64)
		if err != nil {
			return err
		}
		b.(*array.Uint64Builder).Append(u)
		return nil
	}
	i, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil {
		return err
	}
	return AppendValue(b, i)
}

// parseDecimal reads a decimal stored as text (precision above 18) back into its
// unscaled integer.
func parseDecimal(s string, scale int32) (*big.Int, error) {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	intPart, frac, _ := strings.Cut(s, ".")
	if scale < 0 {
		n, ok := new(big.Int).SetString(intPart, 10)
		if !ok {
			return nil, fmt.Errorf("bad decimal %q", s)
		}
		n.Quo(n, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-scale)), nil))
		if neg {
			n.Neg(n)
		}
		return n, nil
	}
	for len(frac) < int(scale) {
		frac += "0"
	}
	n, ok := new(big.Int).SetString(intPart+frac[:scale], 10)
	if !ok {
		return nil, fmt.Errorf("bad decimal %q", s)
	}
	if neg {
		n.Neg(n)
	}
	return n, nil
}
