package engine

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal256"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancens/lancens/store"
)

// narrow returns the values of a, an expression's value in the canonical
// type package expr gives it (int64, float64, utf8, binary, a zone-less
// timestamp, lists of these …), as an array of dt, the type of the column
// it is stored in. It converts as earlier releases read a stored value back
// into a column: integers and floats by Go's conversions (a float
// truncated into an integer column), text and binary to their large and
// fixed-size forms, temporal values relabelled with the column's zone,
// lists element by element. It returns InvalidInput (13) for a value
// that does not read as dt (binary of the wrong width, say).
func narrow(mem memory.Allocator, a arrow.Array, dt arrow.DataType) (arrow.Array, error) {
	if arrow.TypeEqual(a.DataType(), dt) {
		a.Retain()
		return a, nil
	}
	if a.DataType().ID() == arrow.NULL || a.NullN() == a.Len() {
		return array.MakeArrayOfNull(mem, dt, a.Len()), nil
	}
	if sameLayout(a.DataType(), dt) {
		d := a.Data()
		return fromData(array.NewData(dt, d.Len(), d.Buffers(), d.Children(), d.NullN(), d.Offset())), nil
	}
	if out, ok := narrowList(mem, a, dt); ok {
		return out, nil
	}
	b := array.NewBuilder(mem, dt)
	defer b.Release()
	b.Reserve(a.Len())
	put, err := appender(b, a)
	if err != nil {
		return nil, err
	}
	for i := range a.Len() {
		if a.IsNull(i) {
			b.AppendNull()
			continue
		}
		if err := put(i); err != nil {
			return nil, store.Errorf(store.CodeInvalidInput, "cannot store a value of type %s in a column of type %s: %v", a.DataType(), dt, err)
		}
	}
	return b.NewArray(), nil
}

// sameLayout reports whether values of type from are values of type to
// under another label: a timestamp given a zone, a date, time or
// duration of the same width, a string as binary.
func sameLayout(from, to arrow.DataType) bool {
	switch f := from.(type) {
	case *arrow.TimestampType:
		t, ok := to.(*arrow.TimestampType)
		return ok && t.Unit == f.Unit
	case *arrow.DurationType:
		t, ok := to.(*arrow.DurationType)
		return ok && t.Unit == f.Unit
	case *arrow.Time32Type:
		t, ok := to.(*arrow.Time32Type)
		return ok && t.Unit == f.Unit
	case *arrow.Time64Type:
		t, ok := to.(*arrow.Time64Type)
		return ok && t.Unit == f.Unit
	case *arrow.Decimal128Type:
		t, ok := to.(*arrow.Decimal128Type)
		return ok && t.Scale == f.Scale
	}
	return false
}

// narrowList narrows a list's elements to the element type of dt (a list,
// large list or fixed-size list); ok is false when a or dt is no list.
func narrowList(mem memory.Allocator, a arrow.Array, dt arrow.DataType) (arrow.Array, bool) {
	src, ok := a.(*array.List)
	if !ok {
		return nil, false
	}
	var elem arrow.DataType
	switch t := dt.(type) {
	case *arrow.ListType:
		elem = t.Elem()
	case *arrow.LargeListType:
		elem = t.Elem()
	case *arrow.FixedSizeListType:
		elem = t.Elem()
	default:
		return nil, false
	}
	values, err := narrow(mem, src.ListValues(), elem)
	if err != nil {
		return nil, false
	}
	defer values.Release()
	b := array.NewBuilder(mem, dt)
	defer b.Release()
	for i := range src.Len() {
		if src.IsNull(i) {
			b.AppendNull()
			continue
		}
		start, end := src.ValueOffsets(i)
		switch lb := b.(type) {
		case *array.ListBuilder:
			lb.Append(true)
		case *array.LargeListBuilder:
			lb.Append(true)
		case *array.FixedSizeListBuilder:
			if int(end-start) != int(dt.(*arrow.FixedSizeListType).Len()) {
				return nil, false
			}
			lb.Append(true)
		}
		vb := b.(array.ListLikeBuilder).ValueBuilder()
		for j := start; j < end; j++ {
			if err := appendFrom(vb, values, int(j)); err != nil {
				return nil, false
			}
		}
	}
	return b.NewArray(), true
}

// appendFrom appends row i of a, an array of b's type, to b.
func appendFrom(b array.Builder, a arrow.Array, i int) error {
	if a.IsNull(i) {
		b.AppendNull()
		return nil
	}
	slice := array.NewSlice(a, int64(i), int64(i)+1)
	defer slice.Release()
	for j := range slice.Len() {
		if err := b.AppendValueFromString(slice.ValueStr(j)); err != nil {
			return err
		}
	}
	return nil
}

// appender returns how to append row i of a to b, converting it.
func appender(b array.Builder, a arrow.Array) (func(i int) error, error) {
	ints, isInt := a.(*array.Int64)
	floats, isFloat := a.(*array.Float64)
	num := func(i int) (int64, float64) {
		if isInt {
			return ints.Value(i), float64(ints.Value(i))
		}
		return int64(floats.Value(i)), floats.Value(i)
	}
	numeric := isInt || isFloat
	switch bb := b.(type) {
	case *array.Int8Builder:
		if numeric {
			return func(i int) error { n, _ := num(i); bb.Append(int8(n)); return nil }, nil
		}
	case *array.Int16Builder:
		if numeric {
			return func(i int) error { n, _ := num(i); bb.Append(int16(n)); return nil }, nil
		}
	case *array.Int32Builder:
		if numeric {
			return func(i int) error { n, _ := num(i); bb.Append(int32(n)); return nil }, nil
		}
	case *array.Int64Builder:
		if numeric {
			return func(i int) error { n, _ := num(i); bb.Append(n); return nil }, nil
		}
	case *array.Uint8Builder:
		if numeric {
			return func(i int) error { n, _ := num(i); bb.Append(uint8(n)); return nil }, nil
		}
	case *array.Uint16Builder:
		if numeric {
			return func(i int) error { n, _ := num(i); bb.Append(uint16(n)); return nil }, nil
		}
	case *array.Uint32Builder:
		if numeric {
			return func(i int) error { n, _ := num(i); bb.Append(uint32(n)); return nil }, nil
		}
	case *array.Uint64Builder:
		if numeric {
			return func(i int) error { n, _ := num(i); bb.Append(uint64(n)); return nil }, nil
		}
	case *array.Float16Builder:
		if numeric {
			return func(i int) error { _, f := num(i); bb.Append(float16.New(float32(f))); return nil }, nil
		}
	case *array.Float32Builder:
		if numeric {
			return func(i int) error { _, f := num(i); bb.Append(float32(f)); return nil }, nil
		}
	case *array.Float64Builder:
		if numeric {
			return func(i int) error { _, f := num(i); bb.Append(f); return nil }, nil
		}
	case *array.BooleanBuilder:
		if numeric {
			return func(i int) error { n, _ := num(i); bb.Append(n != 0); return nil }, nil
		}
	case *array.LargeStringBuilder:
		if s, ok := a.(*array.String); ok {
			return func(i int) error { bb.Append(s.Value(i)); return nil }, nil
		}
	case *array.BinaryBuilder:
		if s, ok := a.(*array.Binary); ok { // binary into large_binary
			return func(i int) error { bb.Append(s.Value(i)); return nil }, nil
		}
	case *array.FixedSizeBinaryBuilder:
		if s, ok := a.(*array.Binary); ok {
			w := bb.Type().(*arrow.FixedSizeBinaryType).ByteWidth
			return func(i int) error {
				if len(s.Value(i)) != w {
					return fmt.Errorf("%d bytes, not %d", len(s.Value(i)), w)
				}
				bb.Append(s.Value(i))
				return nil
			}, nil
		}
	case *array.Decimal256Builder:
		if d, ok := a.(*array.Decimal128); ok {
			return func(i int) error { bb.Append(decimal256.FromBigInt(d.Value(i).BigInt())); return nil }, nil
		}
	case *array.Date64Builder:
		if d, ok := a.(*array.Date32); ok {
			return func(i int) error { bb.Append(arrow.Date64(int64(d.Value(i)) * 86_400_000)); return nil }, nil
		}
	}
	return nil, store.Errorf(store.CodeInvalidInput, "cannot store a value of type %s in a column of type %s", a.DataType(), b.Type())
}
