package client

import (
	"fmt"
	"math"
	"reflect"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// Row is one result row: its values by column name, nil for null. Values
// have the Go type of the column: bool, intN, uintN, float32 (also for
// float16), float64, string, []byte, time.Time (timestamps and dates, in
// UTC), time.Duration, a typed slice for lists of numbers or strings
// without nulls (vectors are []float32), []any for other lists, and
// map[string]any for structs. Other types come as Arrow renders them for
// JSON.
type Row map[string]any

// rowsOf returns the rows of rec.
func rowsOf(rec arrow.RecordBatch) []Row {
	rows := make([]Row, rec.NumRows())
	for i := range rows {
		rows[i] = make(Row, rec.NumCols())
	}
	for j, col := range rec.Columns() {
		name := rec.ColumnName(j)
		for i := range rows {
			rows[i][name] = valueAt(col, i)
		}
	}
	return rows
}

// valueAt returns item i of arr as a Go value (see Row).
func valueAt(arr arrow.Array, i int) any {
	if arr.IsNull(i) {
		return nil
	}
	switch a := arr.(type) {
	case *array.Boolean:
		return a.Value(i)
	case *array.Int8:
		return a.Value(i)
	case *array.Int16:
		return a.Value(i)
	case *array.Int32:
		return a.Value(i)
	case *array.Int64:
		return a.Value(i)
	case *array.Uint8:
		return a.Value(i)
	case *array.Uint16:
		return a.Value(i)
	case *array.Uint32:
		return a.Value(i)
	case *array.Uint64:
		return a.Value(i)
	case *array.Float16:
		return a.Value(i).Float32()
	case *array.Float32:
		return a.Value(i)
	case *array.Float64:
		return a.Value(i)
	case *array.String:
		return a.Value(i)
	case *array.LargeString:
		return a.Value(i)
	case *array.Binary:
		return append([]byte(nil), a.Value(i)...)
	case *array.LargeBinary:
		return append([]byte(nil), a.Value(i)...)
	case *array.FixedSizeBinary:
		return append([]byte(nil), a.Value(i)...)
	case *array.Timestamp:
		return a.Value(i).ToTime(a.DataType().(*arrow.TimestampType).Unit)
	case *array.Date32:
		return a.Value(i).ToTime()
	case *array.Date64:
		return a.Value(i).ToTime()
	case *array.Duration:
		return time.Duration(a.Value(i)) * a.DataType().(*arrow.DurationType).Unit.Multiplier()
	case array.ListLike: // lists, large lists, fixed-size lists and maps
		start, end := a.ValueOffsets(i)
		return listValues(a.ListValues(), int(start), int(end))
	case *array.Struct:
		st := a.DataType().(*arrow.StructType)
		m := make(map[string]any, a.NumField())
		for f := range a.NumField() {
			m[st.Field(f).Name] = valueAt(a.Field(f), i)
		}
		return m
	case *array.Dictionary:
		return valueAt(a.Dictionary(), a.GetValueIndex(i))
	}
	return arr.GetOneForMarshal(i)
}

// listValues returns items start to end of values: a typed slice for
// numbers and strings without nulls, else []any.
func listValues(values arrow.Array, start, end int) any {
	if values.NullN() == 0 || noNulls(values, start, end) {
		switch v := values.(type) {
		case *array.Float32:
			return append([]float32(nil), v.Float32Values()[start:end]...)
		case *array.Float64:
			return append([]float64(nil), v.Float64Values()[start:end]...)
		case *array.Int32:
			return append([]int32(nil), v.Int32Values()[start:end]...)
		case *array.Int64:
			return append([]int64(nil), v.Int64Values()[start:end]...)
		case *array.Uint8:
			return append([]uint8(nil), v.Uint8Values()[start:end]...)
		case *array.String:
			out := make([]string, end-start)
			for k := range out {
				out[k] = v.Value(start + k)
			}
			return out
		}
	}
	out := make([]any, end-start)
	for k := range out {
		out[k] = valueAt(values, start+k)
	}
	return out
}

func noNulls(a arrow.Array, start, end int) bool {
	for k := start; k < end; k++ {
		if a.IsNull(k) {
			return false
		}
	}
	return true
}

// scanRow sets the fields of the struct dst from row, matching columns by
// the names Structs gives fields; columns without a field and fields without
// a column are left alone. Returns an error naming the first column whose
// value does not fit its field.
func scanRow(dst reflect.Value, row Row) error {
	fields, err := structFields(dst.Type())
	if err != nil {
		return err
	}
	for _, f := range fields {
		v, ok := row[f.field.Name]
		if !ok {
			continue
		}
		if err := assign(dst.FieldByIndex(f.index), v); err != nil {
			return fmt.Errorf("column %s: %w", f.field.Name, err)
		}
	}
	return nil
}

// assign sets dst to the Go value src from a Row, converting numbers, slices
// and structs.
func assign(dst reflect.Value, src any) error {
	if src == nil {
		dst.SetZero()
		return nil
	}
	sv := reflect.ValueOf(src)
	if sv.Type().AssignableTo(dst.Type()) {
		dst.Set(sv)
		return nil
	}
	mismatch := fmt.Errorf("a %T value does not fit a field of type %s", src, dst.Type())
	switch dst.Kind() {
	case reflect.Pointer:
		p := reflect.New(dst.Type().Elem())
		if err := assign(p.Elem(), src); err != nil {
			return err
		}
		dst.Set(p)
		return nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		switch {
		case sv.CanInt() && !dst.OverflowInt(sv.Int()):
			dst.SetInt(sv.Int())
		case sv.CanUint() && sv.Uint() <= math.MaxInt64 && !dst.OverflowInt(int64(sv.Uint())):
			dst.SetInt(int64(sv.Uint()))
		default:
			return mismatch
		}
		return nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		switch {
		case sv.CanUint() && !dst.OverflowUint(sv.Uint()):
			dst.SetUint(sv.Uint())
		case sv.CanInt() && sv.Int() >= 0 && !dst.OverflowUint(uint64(sv.Int())):
			dst.SetUint(uint64(sv.Int()))
		default:
			return mismatch
		}
		return nil
	case reflect.Float32, reflect.Float64:
		switch {
		case sv.CanFloat():
			dst.SetFloat(sv.Float())
		case sv.CanInt():
			dst.SetFloat(float64(sv.Int()))
		case sv.CanUint():
			dst.SetFloat(float64(sv.Uint()))
		default:
			return mismatch
		}
		return nil
	case reflect.Slice, reflect.Array:
		if sv.Kind() != reflect.Slice {
			return mismatch
		}
		n := sv.Len()
		if dst.Kind() == reflect.Array {
			if dst.Len() != n {
				return fmt.Errorf("%d items do not fit %s", n, dst.Type())
			}
		} else {
			dst.Set(reflect.MakeSlice(dst.Type(), n, n))
		}
		for i := range n {
			if err := assign(dst.Index(i), sv.Index(i).Interface()); err != nil {
				return fmt.Errorf("item %d: %w", i, err)
			}
		}
		return nil
	case reflect.Struct:
		m, ok := src.(map[string]any)
		if !ok {
			return mismatch
		}
		return scanRow(dst, m)
	}
	return mismatch
}
