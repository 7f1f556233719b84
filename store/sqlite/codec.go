package sqlite

import (
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
	"github.com/apache/arrow-go/v18/arrow/endian"

	"github.com/lancens/lancens/store"
)

// This file is the one place that converts between Arrow values and their
// SQLite storage:
//
//	bool                         INTEGER 0/1
//	int8…int64, uint8…uint32     INTEGER
//	uint64                       INTEGER (the same 64 bits)
//	float16, float32, float64    REAL
//	utf8, large_utf8, utf8_view  TEXT
//	binary (all kinds)           BLOB
//	date32 / date64              INTEGER days / milliseconds since the epoch
//	timestamp, time, duration    INTEGER count of the type's unit
//	decimal, precision ≤ 18      INTEGER unscaled value
//	decimal, precision > 18      TEXT decimal
//	vector: fixed_size_list of float16/float32/float64/uint8/int8
//	                             BLOB, little-endian elements
//	other lists, maps            TEXT, JSON (see jsonValue)
//	struct                       one column per child, plus a validity
//	                             column (1, or NULL for a null struct)
//	dictionary                   stored as its values
//	null                         INTEGER, always NULL

// checkType returns TableSchemaValidationError (20) naming field when its
// type cannot be stored.
func checkType(field string, dt arrow.DataType) error {
	switch t := dt.(type) {
	case *arrow.StructType:
		for _, f := range t.Fields() {
			if err := checkType(field+"."+f.Name, f.Type); err != nil {
				return err
			}
		}
		return nil
	case *arrow.DictionaryType:
		if _, nested := t.ValueType.(arrow.NestedType); nested {
			return unsupportedType(field, dt)
		}
		return checkType(field, t.ValueType)
	case arrow.ListLikeType:
		switch dt.ID() {
		case arrow.LIST_VIEW, arrow.LARGE_LIST_VIEW:
			return unsupportedType(field, dt)
		}
		return checkType(field+".item", t.Elem())
	}
	switch dt.ID() {
	case arrow.NULL, arrow.BOOL, arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
		arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64,
		arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW,
		arrow.BINARY, arrow.LARGE_BINARY, arrow.BINARY_VIEW, arrow.FIXED_SIZE_BINARY,
		arrow.DATE32, arrow.DATE64, arrow.TIMESTAMP, arrow.TIME32, arrow.TIME64, arrow.DURATION,
		arrow.DECIMAL32, arrow.DECIMAL64, arrow.DECIMAL128, arrow.DECIMAL256:
		return nil
	}
	return unsupportedType(field, dt)
}

func unsupportedType(field string, dt arrow.DataType) error {
	return store.Errorf(store.CodeTableSchemaValidationError, "field %q has type %s, which lancens cannot store", field, dt)
}

// storedType returns the type a field keeps once stored: dictionaries become
// their values and view types their base types, recursively.
func storedType(dt arrow.DataType) arrow.DataType {
	switch t := dt.(type) {
	case *arrow.DictionaryType:
		return storedType(t.ValueType)
	case *arrow.StructType:
		fields := make([]arrow.Field, len(t.Fields()))
		for i, f := range t.Fields() {
			f.Type = storedType(f.Type)
			fields[i] = f
		}
		return arrow.StructOf(fields...)
	case *arrow.ListType:
		return arrow.ListOfField(storedField(t.ElemField()))
	case *arrow.LargeListType:
		return arrow.LargeListOfField(storedField(t.ElemField()))
	case *arrow.FixedSizeListType:
		return arrow.FixedSizeListOfField(t.Len(), storedField(t.ElemField()))
	case *arrow.MapType:
		m := arrow.MapOfFields(storedField(t.KeyField()), storedField(t.ItemField()))
		m.KeysSorted = t.KeysSorted
		return m
	}
	switch dt.ID() {
	case arrow.STRING_VIEW:
		return arrow.BinaryTypes.String
	case arrow.BINARY_VIEW:
		return arrow.BinaryTypes.Binary
	}
	return dt
}

func storedField(f arrow.Field) arrow.Field {
	f.Type = storedType(f.Type)
	return f
}

// sqlType returns the declared SQLite type of a leaf column.
func sqlType(dt arrow.DataType) string {
	if store.IsVectorType(dt) {
		return "BLOB"
	}
	switch dt.ID() {
	case arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64:
		return "REAL"
	case arrow.STRING, arrow.LARGE_STRING, arrow.LIST, arrow.LARGE_LIST, arrow.FIXED_SIZE_LIST, arrow.MAP:
		return "TEXT"
	case arrow.BINARY, arrow.LARGE_BINARY, arrow.FIXED_SIZE_BINARY:
		return "BLOB"
	}
	if d, ok := dt.(arrow.DecimalType); ok && d.GetPrecision() > 18 {
		return "TEXT"
	}
	return "INTEGER"
}

// valueFunc returns the SQL value of row i of one leaf array.
type valueFunc func(i int) (any, error)

// leafValues returns the SQL value reader of a leaf (non-struct) array.
// Dictionary arrays are read through their values.
func leafValues(arr arrow.Array) valueFunc {
	if d, ok := arr.(*array.Dictionary); ok {
		values := leafValues(d.Dictionary())
		return func(i int) (any, error) {
			if d.IsNull(i) {
				return nil, nil
			}
			return values(d.GetValueIndex(i))
		}
	}
	get := leafValue(arr)
	return func(i int) (any, error) {
		if arr.IsNull(i) {
			return nil, nil
		}
		return get(i)
	}
}

// leafValue returns the reader of valid rows of a leaf array.
func leafValue(arr arrow.Array) valueFunc {
	switch a := arr.(type) {
	case *array.Null:
		return func(int) (any, error) { return nil, nil }
	case *array.Boolean:
		return func(i int) (any, error) {
			if a.Value(i) {
				return int64(1), nil
			}
			return int64(0), nil
		}
	case *array.Int8:
		return func(i int) (any, error) { return int64(a.Value(i)), nil }
	case *array.Int16:
		return func(i int) (any, error) { return int64(a.Value(i)), nil }
	case *array.Int32:
		return func(i int) (any, error) { return int64(a.Value(i)), nil }
	case *array.Int64:
		return func(i int) (any, error) { return a.Value(i), nil }
	case *array.Uint8:
		return func(i int) (any, error) { return int64(a.Value(i)), nil }
	case *array.Uint16:
		return func(i int) (any, error) { return int64(a.Value(i)), nil }
	case *array.Uint32:
		return func(i int) (any, error) { return int64(a.Value(i)), nil }
	case *array.Uint64:
		return func(i int) (any, error) { return int64(a.Value(i)), nil }
	case *array.Float16:
		return func(i int) (any, error) { return float64(a.Value(i).Float32()), nil }
	case *array.Float32:
		return func(i int) (any, error) { return float64(a.Value(i)), nil }
	case *array.Float64:
		return func(i int) (any, error) { return a.Value(i), nil }
	case *array.String:
		return func(i int) (any, error) { return a.Value(i), nil }
	case *array.LargeString:
		return func(i int) (any, error) { return a.Value(i), nil }
	case *array.StringView:
		return func(i int) (any, error) { return a.Value(i), nil }
	case *array.Binary:
		return func(i int) (any, error) { return copyBytes(a.Value(i)), nil }
	case *array.LargeBinary:
		return func(i int) (any, error) { return copyBytes(a.Value(i)), nil }
	case *array.BinaryView:
		return func(i int) (any, error) { return copyBytes(a.Value(i)), nil }
	case *array.FixedSizeBinary:
		return func(i int) (any, error) { return copyBytes(a.Value(i)), nil }
	case *array.Date32:
		return func(i int) (any, error) { return int64(a.Value(i)), nil }
	case *array.Date64:
		return func(i int) (any, error) { return int64(a.Value(i)), nil }
	case *array.Timestamp:
		return func(i int) (any, error) { return int64(a.Value(i)), nil }
	case *array.Time32:
		return func(i int) (any, error) { return int64(a.Value(i)), nil }
	case *array.Time64:
		return func(i int) (any, error) { return int64(a.Value(i)), nil }
	case *array.Duration:
		return func(i int) (any, error) { return int64(a.Value(i)), nil }
	case *array.Decimal32, *array.Decimal64, *array.Decimal128, *array.Decimal256:
		prec := arr.DataType().(arrow.DecimalType).GetPrecision()
		return func(i int) (any, error) { return decimalSQL(arr, i, prec), nil }
	case *array.FixedSizeList:
		if store.IsVectorType(arr.DataType()) {
			return vectorBlob(a)
		}
	}
	return func(i int) (any, error) {
		v, err := jsonValue(arr, i)
		if err != nil {
			return nil, err
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, store.Errorf(store.CodeTableSchemaValidationError, "cannot store a value of type %s: %v", arr.DataType(), err)
		}
		return string(b), nil
	}
}

func copyBytes(b []byte) []byte { return append([]byte{}, b...) }

// decimalUnscaled returns the unscaled integer of a decimal value.
func decimalUnscaled(arr arrow.Array, i int) *big.Int {
	switch a := arr.(type) {
	case *array.Decimal32:
		return big.NewInt(int64(a.Value(i)))
	case *array.Decimal64:
		return big.NewInt(int64(a.Value(i)))
	case *array.Decimal128:
		return a.Value(i).BigInt()
	case *array.Decimal256:
		return a.Value(i).BigInt()
	}
	return new(big.Int)
}

func decimalSQL(arr arrow.Array, i int, precision int32) any {
	n := decimalUnscaled(arr, i)
	if precision <= 18 {
		return n.Int64()
	}
	return formatDecimal(n, arr.DataType().(arrow.DecimalType).GetScale())
}

// formatDecimal writes unscaled×10^−scale in plain decimal notation.
func formatDecimal(n *big.Int, scale int32) string {
	if scale <= 0 {
		s := n.String()
		if scale < 0 && n.Sign() != 0 {
			s += strings.Repeat("0", int(-scale))
		}
		return s
	}
	neg := n.Sign() < 0
	digits := new(big.Int).Abs(n).String()
	for len(digits) <= int(scale) {
		digits = "0" + digits
	}
	s := digits[:len(digits)-int(scale)] + "." + digits[len(digits)-int(scale):]
	if neg {
		s = "-" + s
	}
	return s
}

// vectorBlob encodes vectors as little-endian element bytes. On a
// little-endian machine float vectors are Arrow's own bytes, shared rather
// than copied (Arrow buffers do not change, and SQLite copies what it
// binds).
func vectorBlob(a *array.FixedSizeList) valueFunc {
	n := int(a.DataType().(*arrow.FixedSizeListType).Len())
	values := a.ListValues()
	off := a.Offset()
	return func(i int) (any, error) {
		start := (off + i) * n
		if !endian.IsBigEndian {
			switch v := values.(type) {
			case *array.Float32:
				return arrow.Float32Traits.CastToBytes(v.Float32Values()[start : start+n]), nil
			case *array.Float64:
				return arrow.Float64Traits.CastToBytes(v.Float64Values()[start : start+n]), nil
			case *array.Float16:
				return arrow.Float16Traits.CastToBytes(v.Values()[start : start+n]), nil
			}
		}
		switch v := values.(type) {
		case *array.Float32:
			out := make([]byte, 4*n)
			for j := range n {
				binary.LittleEndian.PutUint32(out[4*j:], math.Float32bits(v.Value(start+j)))
			}
			return out, nil
		case *array.Float64:
			out := make([]byte, 8*n)
			for j := range n {
				binary.LittleEndian.PutUint64(out[8*j:], math.Float64bits(v.Value(start+j)))
			}
			return out, nil
		case *array.Float16:
			out := make([]byte, 2*n)
			for j := range n {
				binary.LittleEndian.PutUint16(out[2*j:], v.Value(start+j).Uint16())
			}
			return out, nil
		case *array.Uint8:
			return copyBytes(v.Uint8Values()[start : start+n]), nil
		case *array.Int8:
			out := make([]byte, n)
			for j := range n {
				out[j] = byte(v.Value(start + j))
			}
			return out, nil
		}
		return nil, fmt.Errorf("vector of %s", values.DataType())
	}
}

// jsonValue returns row i of arr as a value for encoding/json: numbers,
// strings, bools, nil; binary as base64 strings; temporal values as their
// integer counts; decimals as exact decimal numbers; lists as slices; structs as objects;
// maps as lists of [key, value] pairs. Floats that JSON cannot hold (NaN,
// ±Inf) are strings.
func jsonValue(arr arrow.Array, i int) (any, error) {
	if arr.IsNull(i) {
		return nil, nil
	}
	switch a := arr.(type) {
	case *array.Dictionary:
		return jsonValue(a.Dictionary(), a.GetValueIndex(i))
	case *array.Struct:
		obj := make(map[string]any, a.NumField())
		for j, f := range a.DataType().(*arrow.StructType).Fields() {
			v, err := jsonValue(a.Field(j), i)
			if err != nil {
				return nil, err
			}
			obj[f.Name] = v
		}
		return obj, nil
	case *array.Map:
		start, end := a.ValueOffsets(i)
		keys, items := a.Keys(), a.Items()
		out := make([]any, 0, end-start)
		for j := int(start); j < int(end); j++ {
			k, err := jsonValue(keys, j)
			if err != nil {
				return nil, err
			}
			v, err := jsonValue(items, j)
			if err != nil {
				return nil, err
			}
			out = append(out, []any{k, v})
		}
		return out, nil
	case array.ListLike:
		start, end := a.ValueOffsets(i)
		values := a.ListValues()
		out := make([]any, 0, end-start)
		for j := int(start); j < int(end); j++ {
			v, err := jsonValue(values, j)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case *array.Float16:
		return jsonFloat(float64(a.Value(i).Float32()), 32), nil
	case *array.Float32:
		return jsonFloat(float64(a.Value(i)), 32), nil
	case *array.Float64:
		return jsonFloat(a.Value(i), 64), nil
	case *array.Uint64:
		return json.Number(strconv.FormatUint(a.Value(i), 10)), nil
	case *array.Decimal32, *array.Decimal64, *array.Decimal128, *array.Decimal256:
		return json.Number(formatDecimal(decimalUnscaled(arr, i), arr.DataType().(arrow.DecimalType).GetScale())), nil
	}
	v, err := leafValue(arr)(i)
	if err != nil {
		return nil, err
	}
	if b, ok := v.([]byte); ok {
		return base64.StdEncoding.EncodeToString(b), nil
	}
	if arr.DataType().ID() == arrow.BOOL {
		return v.(int64) == 1, nil
	}
	return v, nil
}

// jsonFloat keeps the shortest decimal form that reads back to the same
// float of the given bit size.
func jsonFloat(f float64, bits int) any {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return json.Number(strconv.FormatFloat(f, 'g', -1, bits))
}
