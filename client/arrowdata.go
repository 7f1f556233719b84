package client

import (
	"fmt"
	"io"
	"math"
	"reflect"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Data is rows to write, in Arrow form. Make it with Structs (a slice of Go
// structs), Maps (maps and a schema), Records (Arrow record batches) or
// FromReader (an Arrow record reader).
type Data struct {
	open func() (array.RecordReader, error)
}

// Records returns the batches as Data; schema is what they all have, and
// is needed when there are none (to create an empty table).
func Records(schema *arrow.Schema, batches ...arrow.RecordBatch) Data {
	return Data{open: func() (array.RecordReader, error) {
		r, err := array.NewRecordReader(schema, batches)
		if err != nil {
			return nil, invalid("%v", err)
		}
		return r, nil
	}}
}

// FromReader returns the batches r yields as Data, read as the request is
// sent; writing Data releases r.
func FromReader(r array.RecordReader) Data {
	return Data{open: func() (array.RecordReader, error) { return r, nil }}
}

// Structs returns rows as Data, one column per exported field of T (a
// struct type), in field order:
//
//	type Doc struct {
//		ID     int64      `arrow:"id"`
//		Text   string     `arrow:"text"`
//		Vector []float32  `arrow:"vector,fixed_size=4"`
//		Score  *float64   `arrow:"score"` // a pointer: nullable
//		Tags   []string   `arrow:"tags"`
//		At     time.Time  `arrow:"at"`
//		Skip   string     `arrow:"-"`
//	}
//
// Column types: bool, intN, uintN, floatN and string as themselves (int and
// uint as 64 bits), []byte as binary, time.Time as timestamp[us, UTC],
// time.Duration as duration[ns], a slice as a list (a fixed-size list with
// fixed_size=N, which every row's slice must match), an array [N]T as a
// fixed-size list, a struct as a struct. Vectors are []float32 with
// fixed_size. Columns are not nullable unless the field is a pointer or
// tagged nullable. Writing the Data fails with InvalidInput (13) for a field
// type with no Arrow column type or a slice of the wrong length.
func Structs[T any](rows []T) Data {
	return Data{open: func() (array.RecordReader, error) {
		schema, err := SchemaOf[T]()
		if err != nil {
			return nil, err
		}
		t := reflect.TypeFor[T]()
		fields, _ := structFields(structType(t))
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		defer b.Release()
		for i := range rows {
			v := reflect.ValueOf(&rows[i]).Elem()
			if t.Kind() == reflect.Pointer {
				if v.IsNil() {
					return nil, invalid("row %d is a nil pointer", i)
				}
				v = v.Elem()
			}
			for j, f := range fields {
				if err := appendValue(b.Field(j), v.FieldByIndex(f.index)); err != nil {
					return nil, invalid("row %d, column %s: %v", i, f.field.Name, err)
				}
			}
		}
		return recordReader(b)
	}}
}

func structType(t reflect.Type) reflect.Type {
	if t.Kind() == reflect.Pointer {
		return t.Elem()
	}
	return t
}

// Maps returns rows as Data with the given schema. Each map holds the
// values of one row by column name; a missing column is null. Values may be
// any Go value that fits the column: numbers of any Go numeric type that
// hold the value exactly (float64 from encoding/json too), strings, []byte,
// time.Time, slices ([]any or typed) for lists and vectors, and
// map[string]any or structs for struct columns. Writing the Data fails with
// InvalidInput (13) for a key that is not a column, a value that does not
// fit, or null in a column that is not nullable.
func Maps(schema *arrow.Schema, rows []map[string]any) Data {
	return Data{open: func() (array.RecordReader, error) {
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		defer b.Release()
		for i, row := range rows {
			for k := range row {
				if !schema.HasField(k) {
					return nil, invalid("row %d has %q, which is not a column of the schema", i, k)
				}
			}
			for j, f := range schema.Fields() {
				v, ok := row[f.Name]
				if (!ok || v == nil) && !f.Nullable {
					return nil, invalid("row %d: column %s is not nullable", i, f.Name)
				}
				if err := appendValue(b.Field(j), reflect.ValueOf(v)); err != nil {
					return nil, invalid("row %d, column %s: %v", i, f.Name, err)
				}
			}
		}
		return recordReader(b)
	}}
}

// recordReader returns a reader of what b has built, as one batch.
func recordReader(b *array.RecordBuilder) (array.RecordReader, error) {
	rec := b.NewRecordBatch()
	defer rec.Release()
	return array.NewRecordReader(rec.Schema(), []arrow.RecordBatch{rec})
}

// writeTo writes r as an Arrow IPC stream and releases it. Returns the
// reader's or the writer's error.
func writeStream(w io.Writer, r array.RecordReader) error {
	defer r.Release()
	iw := ipc.NewWriter(w, ipc.WithSchema(r.Schema()))
	for r.Next() {
		if err := iw.Write(r.RecordBatch()); err != nil {
			return err
		}
	}
	if err := r.Err(); err != nil {
		return err
	}
	return iw.Close()
}

// appendValue appends the Go value v to b, converting it to b's type.
// Nil pointers, nil interfaces and invalid values append null.
func appendValue(b array.Builder, v reflect.Value) error {
	for v.IsValid() && (v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface) {
		if v.IsNil() {
			b.AppendNull()
			return nil
		}
		v = v.Elem()
	}
	if !v.IsValid() {
		b.AppendNull()
		return nil
	}
	mismatch := func() error { return fmt.Errorf("a %s value does not fit a %s column", v.Type(), b.Type()) }
	switch b := b.(type) {
	case *array.BooleanBuilder:
		if v.Kind() != reflect.Bool {
			return mismatch()
		}
		b.Append(v.Bool())
	case *array.Int8Builder:
		return appendInt(v, math.MinInt8, math.MaxInt8, func(n int64) { b.Append(int8(n)) })
	case *array.Int16Builder:
		return appendInt(v, math.MinInt16, math.MaxInt16, func(n int64) { b.Append(int16(n)) })
	case *array.Int32Builder:
		return appendInt(v, math.MinInt32, math.MaxInt32, func(n int64) { b.Append(int32(n)) })
	case *array.Int64Builder:
		return appendInt(v, math.MinInt64, math.MaxInt64, b.Append)
	case *array.Uint8Builder:
		return appendUint(v, math.MaxUint8, func(n uint64) { b.Append(uint8(n)) })
	case *array.Uint16Builder:
		return appendUint(v, math.MaxUint16, func(n uint64) { b.Append(uint16(n)) })
	case *array.Uint32Builder:
		return appendUint(v, math.MaxUint32, func(n uint64) { b.Append(uint32(n)) })
	case *array.Uint64Builder:
		return appendUint(v, math.MaxUint64, b.Append)
	case *array.Float16Builder:
		return appendFloat(v, func(f float64) { b.Append(float16.New(float32(f))) })
	case *array.Float32Builder:
		return appendFloat(v, func(f float64) { b.Append(float32(f)) })
	case *array.Float64Builder:
		return appendFloat(v, b.Append)
	case *array.StringBuilder:
		if v.Kind() != reflect.String {
			return mismatch()
		}
		b.Append(v.String())
	case *array.LargeStringBuilder:
		if v.Kind() != reflect.String {
			return mismatch()
		}
		b.Append(v.String())
	case *array.BinaryBuilder:
		switch {
		case v.Kind() == reflect.String:
			b.AppendString(v.String())
		case v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8:
			b.Append(v.Bytes())
		default:
			return mismatch()
		}
	case *array.FixedSizeBinaryBuilder:
		if v.Kind() != reflect.Slice || v.Type().Elem().Kind() != reflect.Uint8 {
			return mismatch()
		}
		if want := b.Type().(*arrow.FixedSizeBinaryType).ByteWidth; v.Len() != want {
			return fmt.Errorf("%d bytes, the column holds %d", v.Len(), want)
		}
		b.Append(v.Bytes())
	case *array.TimestampBuilder:
		t, ok := v.Interface().(time.Time)
		if !ok {
			return mismatch()
		}
		ts, err := arrow.TimestampFromTime(t, b.Type().(*arrow.TimestampType).Unit)
		if err != nil {
			return err
		}
		b.Append(ts)
	case *array.Date32Builder:
		t, ok := v.Interface().(time.Time)
		if !ok {
			return mismatch()
		}
		b.Append(arrow.Date32FromTime(t))
	case *array.DurationBuilder:
		d, ok := v.Interface().(time.Duration)
		if !ok {
			return mismatch()
		}
		b.Append(arrow.Duration(d / b.Type().(*arrow.DurationType).Unit.Multiplier()))
	case *array.FixedSizeListBuilder:
		if v.Kind() != reflect.Slice && v.Kind() != reflect.Array {
			return mismatch()
		}
		if want := int(b.Type().(*arrow.FixedSizeListType).Len()); v.Len() != want {
			return fmt.Errorf("%d items, the column holds %d", v.Len(), want)
		}
		b.Append(true)
		return appendItems(b.ValueBuilder(), v)
	case *array.ListBuilder:
		if v.Kind() != reflect.Slice && v.Kind() != reflect.Array {
			return mismatch()
		}
		b.Append(true)
		return appendItems(b.ValueBuilder(), v)
	case *array.LargeListBuilder:
		if v.Kind() != reflect.Slice && v.Kind() != reflect.Array {
			return mismatch()
		}
		b.Append(true)
		return appendItems(b.ValueBuilder(), v)
	case *array.StructBuilder:
		return appendStruct(b, v, mismatch)
	default:
		return fmt.Errorf("columns of type %s cannot be filled from Go values; pass Arrow records", b.Type())
	}
	return nil
}

func appendItems(b array.Builder, v reflect.Value) error {
	for i := range v.Len() {
		if err := appendValue(b, v.Index(i)); err != nil {
			return fmt.Errorf("item %d: %w", i, err)
		}
	}
	return nil
}

// appendStruct appends a Go struct (fields matched by column name) or a
// map[string]any to a struct column.
func appendStruct(b *array.StructBuilder, v reflect.Value, mismatch func() error) error {
	st := b.Type().(*arrow.StructType)
	var field func(name string) reflect.Value
	switch {
	case v.Kind() == reflect.Map && v.Type().Key().Kind() == reflect.String:
		for _, k := range v.MapKeys() {
			if _, ok := st.FieldIdx(k.String()); !ok {
				return fmt.Errorf("%q is not a field of %s", k.String(), st)
			}
		}
		field = func(name string) reflect.Value { return v.MapIndex(reflect.ValueOf(name).Convert(v.Type().Key())) }
	case v.Kind() == reflect.Struct:
		fields, err := structFields(v.Type())
		if err != nil {
			return err
		}
		byName := make(map[string][]int, len(fields))
		for _, f := range fields {
			byName[f.field.Name] = f.index
		}
		field = func(name string) reflect.Value {
			if idx, ok := byName[name]; ok {
				return v.FieldByIndex(idx)
			}
			return reflect.Value{}
		}
	default:
		return mismatch()
	}
	b.Append(true)
	for i, f := range st.Fields() {
		if err := appendValue(b.FieldBuilder(i), field(f.Name)); err != nil {
			return fmt.Errorf("field %s: %w", f.Name, err)
		}
	}
	return nil
}

func appendInt(v reflect.Value, lo, hi int64, add func(int64)) error {
	var n int64
	switch {
	case v.CanInt():
		n = v.Int()
	case v.CanUint():
		if v.Uint() > math.MaxInt64 {
			return fmt.Errorf("%d is out of range", v.Uint())
		}
		n = int64(v.Uint())
	case v.CanFloat():
		f := v.Float()
		if f != math.Trunc(f) || f < math.MinInt64 || f >= math.MaxInt64 {
			return fmt.Errorf("%v is not a whole number in range", f)
		}
		n = int64(f)
	default:
		return fmt.Errorf("a %s value is not a number", v.Type())
	}
	if n < lo || n > hi {
		return fmt.Errorf("%d is out of range", n)
	}
	add(n)
	return nil
}

func appendUint(v reflect.Value, hi uint64, add func(uint64)) error {
	var n uint64
	switch {
	case v.CanInt():
		if v.Int() < 0 {
			return fmt.Errorf("%d is negative", v.Int())
		}
		n = uint64(v.Int())
	case v.CanUint():
		n = v.Uint()
	case v.CanFloat():
		f := v.Float()
		if f != math.Trunc(f) || f < 0 || f >= math.MaxUint64 {
			return fmt.Errorf("%v is not a whole number in range", f)
		}
		n = uint64(f)
	default:
		return fmt.Errorf("a %s value is not a number", v.Type())
	}
	if n > hi {
		return fmt.Errorf("%d is out of range", n)
	}
	add(n)
	return nil
}

func appendFloat(v reflect.Value, add func(float64)) error {
	switch {
	case v.CanFloat():
		add(v.Float())
	case v.CanInt():
		add(float64(v.Int()))
	case v.CanUint():
		add(float64(v.Uint()))
	default:
		return fmt.Errorf("a %s value is not a number", v.Type())
	}
	return nil
}
