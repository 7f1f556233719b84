package expr

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	arrays "github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/decimal256"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancens/lancens/store"
)

// A value becomes an Arrow array the way the SQLite row store read a computed
// SQL value back into a column of ArrowType(t): a REAL read as an integer
// is truncated by Go's conversion, a number read as text is formatted by
// Go, a list's JSON is decoded into its elements.

// toArrow returns the n rows of v, a value of type t, as an array of dt.
// It returns a code-13 error for a value that does not read as dt.
func toArrow(mem memory.Allocator, v vec, t Type, dt arrow.DataType, n int) (arrow.Array, error) {
	b := arrays.NewBuilder(mem, dt)
	defer b.Release()
	b.Reserve(n)
	switch bb := b.(type) {
	case *arrays.BooleanBuilder:
		m := &machine{n: n}
		tr, f := m.bools(v)
		for i := range n {
			switch {
			case has(tr, i):
				bb.Append(true)
			case has(f, i):
				bb.Append(false)
			default:
				bb.AppendNull()
			}
		}
		return b.NewArray(), nil
	case *arrays.Int64Builder:
		if v.cls == clsInt && !v.konst && v.over == nil {
			bb.AppendValues(v.ints, validBools(v.valid, n))
			return b.NewArray(), nil
		}
	case *arrays.Float64Builder:
		if v.cls == clsFloat && !v.konst {
			bb.AppendValues(v.flts, validBools(v.valid, n))
			return b.NewArray(), nil
		}
	case *arrays.StringBuilder:
		if v.cls == clsText && !v.konst {
			for i := range n {
				if has(v.valid, i) {
					bb.Append(v.txt.at(i))
				} else {
					bb.AppendNull()
				}
			}
			return b.NewArray(), nil
		}
	}
	if put := intAppender(b); put != nil && v.cls == clsInt && v.over == nil && !v.konst {
		for i, x := range v.ints {
			if has(v.valid, i) {
				put(x)
			} else {
				b.AppendNull()
			}
		}
		return b.NewArray(), nil
	}
	for i := range n {
		if err := appendStored(b, storedValue(v.at(i))); err != nil {
			return nil, store.Errorf(store.CodeInvalidInput, "cannot read the value of an expression of type %s: %v", t, err)
		}
	}
	return b.NewArray(), nil
}

// intAppender returns how to append an INTEGER to a builder of a type
// read from integers (the temporal types and narrow decimals), or nil.
func intAppender(b arrays.Builder) func(int64) {
	switch bb := b.(type) {
	case *arrays.Date32Builder:
		return func(x int64) { bb.Append(arrow.Date32(x)) }
	case *arrays.Date64Builder:
		return func(x int64) { bb.Append(arrow.Date64(x)) }
	case *arrays.TimestampBuilder:
		return func(x int64) { bb.Append(arrow.Timestamp(x)) }
	case *arrays.Time32Builder:
		return func(x int64) { bb.Append(arrow.Time32(x)) }
	case *arrays.Time64Builder:
		return func(x int64) { bb.Append(arrow.Time64(x)) }
	case *arrays.DurationBuilder:
		return func(x int64) { bb.Append(arrow.Duration(x)) }
	case *arrays.Decimal128Builder:
		return func(x int64) { bb.Append(decimal128.FromI64(x)) }
	}
	return nil
}

// validBools returns a validity bitmap as the []bool Arrow builders take
// (nil when every row is valid).
func validBools(valid []uint64, n int) []bool {
	if valid == nil {
		return nil
	}
	out := make([]bool, n)
	for i := range out {
		out[i] = has(valid, i)
	}
	return out
}

// storedValue returns x as database/sql scans it: nil, int64, float64,
// string or []byte.
func storedValue(x value) any {
	switch x.cls {
	case clsInt:
		return x.i
	case clsFloat:
		return x.f
	case clsText:
		return x.s
	case clsBlob:
		return []byte(x.s)
	}
	return nil
}

// appendStored appends a value as SQL holds it (nil, int64, float64,
// string or []byte) to a builder of one of the types ArrowType returns.
// It returns an error when the value does not fit the type.
func appendStored(b arrays.Builder, v any) error {
	if v == nil {
		b.AppendNull()
		return nil
	}
	if lb, ok := b.(*arrays.ListBuilder); ok {
		s, err := storedString(v)
		if err != nil {
			return err
		}
		dec := json.NewDecoder(strings.NewReader(s))
		dec.UseNumber()
		var doc any
		if err := dec.Decode(&doc); err != nil {
			return fmt.Errorf("stored list is not JSON: %w", err)
		}
		return appendJSON(lb, doc)
	}
	switch bb := b.(type) {
	case *arrays.BooleanBuilder:
		n, err := storedInt(v)
		bb.Append(n != 0)
		return err
	case *arrays.Int64Builder:
		n, err := storedInt(v)
		bb.Append(n)
		return err
	case *arrays.Float64Builder:
		f, err := storedFloat(v)
		bb.Append(f)
		return err
	case *arrays.StringBuilder:
		s, err := storedString(v)
		bb.Append(s)
		return err
	case *arrays.BinaryBuilder:
		switch x := v.(type) {
		case []byte:
			bb.Append(x)
		case string:
			bb.Append([]byte(x))
		default:
			return fmt.Errorf("stored value %T is not binary", v)
		}
		return nil
	case *arrays.Date32Builder:
		n, err := storedInt(v)
		bb.Append(arrow.Date32(n))
		return err
	case *arrays.Date64Builder:
		n, err := storedInt(v)
		bb.Append(arrow.Date64(n))
		return err
	case *arrays.TimestampBuilder:
		n, err := storedInt(v)
		bb.Append(arrow.Timestamp(n))
		return err
	case *arrays.Time32Builder:
		n, err := storedInt(v)
		bb.Append(arrow.Time32(n))
		return err
	case *arrays.Time64Builder:
		n, err := storedInt(v)
		bb.Append(arrow.Time64(n))
		return err
	case *arrays.DurationBuilder:
		n, err := storedInt(v)
		bb.Append(arrow.Duration(n))
		return err
	case *arrays.Decimal128Builder:
		n, err := storedInt(v)
		bb.Append(decimal128.FromBigInt(big.NewInt(n)))
		return err
	case *arrays.Decimal256Builder:
		s, err := storedString(v)
		if err != nil {
			return err
		}
		n, err := parseStoredDecimal(s, int(bb.Type().(*arrow.Decimal256Type).Scale))
		if err != nil {
			return err
		}
		bb.Append(decimal256.FromBigInt(n))
		return nil
	}
	return fmt.Errorf("cannot read a stored %s", b.Type())
}

func storedInt(v any) (int64, error) {
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

func storedFloat(v any) (float64, error) {
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

func storedString(v any) (string, error) {
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

// parseStoredDecimal reads decimal text as the SQLite row store did: the digits
// up to scale after the point (later ones dropped), as an unscaled integer.
func parseStoredDecimal(s string, scale int) (*big.Int, error) {
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
	for len(frac) < scale {
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

// appendJSON appends a JSON value decoded with numbers as json.Number to a
// builder, as the SQLite row store read a stored list: numbers into numeric,
// decimal and temporal builders, base64 strings into binary ones, "NaN"
// and "±Infinity" into floats. It returns an error when the value does
// not fit.
func appendJSON(b arrays.Builder, v any) error {
	if v == nil {
		b.AppendNull()
		return nil
	}
	if lb, ok := b.(*arrays.ListBuilder); ok {
		items, ok := v.([]any)
		if !ok {
			return fmt.Errorf("stored list is a %T", v)
		}
		lb.Append(true)
		for _, it := range items {
			if err := appendJSON(lb.ValueBuilder(), it); err != nil {
				return err
			}
		}
		return nil
	}
	switch x := v.(type) {
	case bool:
		if bb, ok := b.(*arrays.BooleanBuilder); ok {
			bb.Append(x)
			return nil
		}
		return fmt.Errorf("stored bool for %s", b.Type())
	case json.Number:
		return appendNumber(b, x)
	case string:
		switch b.Type().ID() {
		case arrow.FLOAT64:
			return appendNumber(b, json.Number(x))
		case arrow.BINARY:
			p, err := base64.StdEncoding.DecodeString(x)
			if err != nil {
				return err
			}
			return appendStored(b, bytes.Clone(p))
		case arrow.DECIMAL128, arrow.DECIMAL256:
			return appendDecimalText(b, x)
		}
		return appendStored(b, x)
	}
	return fmt.Errorf("stored %T for %s", v, b.Type())
}

// appendNumber appends a JSON number (or a NaN/Infinity string).
func appendNumber(b arrays.Builder, n json.Number) error {
	switch b.Type().ID() {
	case arrow.DECIMAL128, arrow.DECIMAL256:
		return appendDecimalText(b, string(n))
	case arrow.FLOAT64:
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
		b.(*arrays.Float64Builder).Append(f)
		return nil
	}
	i, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil {
		return err
	}
	return appendStored(b, i)
}

// appendDecimalText appends decimal text to a decimal builder.
func appendDecimalText(b arrays.Builder, s string) error {
	d := b.Type().(arrow.DecimalType)
	n, err := parseStoredDecimal(s, int(d.GetScale()))
	if err != nil {
		return err
	}
	switch bb := b.(type) {
	case *arrays.Decimal128Builder:
		bb.Append(decimal128.FromBigInt(n))
	case *arrays.Decimal256Builder:
		bb.Append(decimal256.FromBigInt(n))
	}
	return nil
}
