package expr

import (
	"encoding/base64"
	endian "encoding/binary"
	"encoding/json"
	"math"
	"math/big"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	arrays "github.com/apache/arrow-go/v18/arrow/array"
	"github.com/lancens/lancens/store"
)

// A column is read the way the SQLite row store stored Arrow values (its
// codec), so that the evaluator sees the values the SQL sees: integers as
// int64 (uint64 wrapping), floats as float64 with NaN as NULL, decimals of
// precision ≤ 18 as unscaled integers and wider ones as decimal text,
// temporal values as counts of their unit, lists and maps as JSON text,
// and a struct's fields NULL where the struct is.

// loadBinding returns the values of the column b locates in batch (with
// nullOnly, only whether each row is NULL). It returns a code-13 error
// when the batch does not have the column's type where the binding says.
func loadBinding(batch arrow.RecordBatch, b Binding, nullOnly bool) (vec, error) {
	mismatch := errEval("the record batch does not have the schema the expression was planned for")
	if b.Path[0] >= int(batch.NumCols()) {
		return vec{}, mismatch
	}
	arr := batch.Column(b.Path[0])
	valid := arrowValid(arr)
	for _, j := range b.Path[1:] {
		st, ok := arr.(*arrays.Struct)
		if !ok || j >= st.NumField() {
			return vec{}, mismatch
		}
		arr = st.Field(j)
		valid = andBitmaps(arr.Len(), valid, arrowValid(arr))
	}
	if !arrow.TypeEqual(arr.DataType(), b.Type) {
		return vec{}, mismatch
	}
	if nullOnly && !floating(arr.DataType()) {
		return vec{cls: clsOpaque, valid: valid}, nil
	}
	return loadArray(arr, valid)
}

// widen returns integer values as int64 (uint64 wrapping, as SQLite
// stores it).
func widen[T ~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64](vals []T) []int64 {
	out := make([]int64, len(vals))
	for i, v := range vals {
		out[i] = int64(v)
	}
	return out
}

// floating reports whether dt is a float type, whose NaN values are NULL.
func floating(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64:
		return true
	}
	return false
}

// arrowValid returns the bitmap of arr's non-null rows (nil: all).
func arrowValid(arr arrow.Array) []uint64 {
	if arr.DataType().ID() == arrow.NULL {
		return make([]uint64, words(arr.Len()))
	}
	if arr.NullN() == 0 {
		return nil
	}
	return arrowBits(arr.NullBitmapBytes(), arr.Data().Offset(), arr.Len())
}

// arrowBits returns n bits of an Arrow bitmap starting at bit offset, as
// bitmap words.
func arrowBits(buf []byte, offset, n int) []uint64 {
	out := make([]uint64, words(n))
	if offset%8 == 0 {
		b := buf[offset/8:]
		for w := range out {
			var chunk [8]byte
			copy(chunk[:], b[min(w*8, len(b)):min(w*8+8, len(b))])
			out[w] = endian.LittleEndian.Uint64(chunk[:])
		}
	} else {
		for i := range n {
			j := offset + i
			if buf[j/8]&(1<<(uint(j)%8)) != 0 {
				set(out, i)
			}
		}
	}
	if r := n % 64; r != 0 {
		out[len(out)-1] &= 1<<uint(r) - 1
	}
	return out
}

// loadArray returns the values of arr, NULL outside valid.
func loadArray(arr arrow.Array, valid []uint64) (vec, error) {
	n := arr.Len()
	if store.IsVectorType(arr.DataType()) {
		return vectorBlobs(arr.(*arrays.FixedSizeList), valid), nil
	}
	switch a := arr.(type) {
	case *arrays.Null:
		return nullVec, nil
	case *arrays.Boolean:
		vals := arrowBits(a.Data().Buffers()[1].Bytes(), a.Data().Offset(), n)
		if valid == nil {
			valid = onesBitmap(n)
		}
		t, f := make([]uint64, len(vals)), make([]uint64, len(vals))
		for w := range vals {
			t[w], f[w] = vals[w]&valid[w], ^vals[w]&valid[w]
		}
		return boolVec(t, f), nil
	case *arrays.Int64:
		return vec{cls: clsInt, ints: a.Int64Values(), valid: valid}, nil
	case *arrays.Int8:
		return vec{cls: clsInt, ints: widen(a.Int8Values()), valid: valid}, nil
	case *arrays.Int16:
		return vec{cls: clsInt, ints: widen(a.Int16Values()), valid: valid}, nil
	case *arrays.Int32:
		return vec{cls: clsInt, ints: widen(a.Int32Values()), valid: valid}, nil
	case *arrays.Uint8:
		return vec{cls: clsInt, ints: widen(a.Uint8Values()), valid: valid}, nil
	case *arrays.Uint16:
		return vec{cls: clsInt, ints: widen(a.Uint16Values()), valid: valid}, nil
	case *arrays.Uint32:
		return vec{cls: clsInt, ints: widen(a.Uint32Values()), valid: valid}, nil
	case *arrays.Uint64:
		return vec{cls: clsInt, ints: widen(a.Uint64Values()), valid: valid}, nil
	case *arrays.Date32:
		return vec{cls: clsInt, ints: widen(a.Date32Values()), valid: valid}, nil
	case *arrays.Date64:
		return vec{cls: clsInt, ints: widen(a.Date64Values()), valid: valid}, nil
	case *arrays.Time32:
		return vec{cls: clsInt, ints: widen(a.Time32Values()), valid: valid}, nil
	case *arrays.Time64:
		return vec{cls: clsInt, ints: widen(a.Time64Values()), valid: valid}, nil
	case *arrays.Timestamp:
		return vec{cls: clsInt, ints: widen(a.TimestampValues()), valid: valid}, nil
	case *arrays.Duration:
		return vec{cls: clsInt, ints: widen(a.DurationValues()), valid: valid}, nil
	case *arrays.Float64:
		return floats(a.Float64Values(), valid), nil
	case *arrays.Float32:
		fs := make([]float64, n)
		for i, f := range a.Float32Values() {
			fs[i] = float64(f)
		}
		return floats(fs, valid), nil
	case *arrays.Float16:
		fs := make([]float64, n)
		for i := range fs {
			fs[i] = float64(a.Value(i).Float32())
		}
		return floats(fs, valid), nil
	case *arrays.String:
		return vec{cls: clsText, txt: textCol{data: bufferBytes(a, 2), off32: a.ValueOffsets()}, valid: valid}, nil
	case *arrays.LargeString:
		return vec{cls: clsText, txt: textCol{data: bufferBytes(a, 2), off64: a.ValueOffsets()}, valid: valid}, nil
	case *arrays.Binary:
		return vec{cls: clsBlob, txt: textCol{data: bufferBytes(a, 2), off32: a.ValueOffsets()}, valid: valid}, nil
	case *arrays.LargeBinary:
		return vec{cls: clsBlob, txt: textCol{data: bufferBytes(a, 2), off64: a.ValueOffsets()}, valid: valid}, nil
	case *arrays.StringView:
		return stringsOf(clsText, n, valid, a.Value), nil
	case *arrays.BinaryView:
		return stringsOf(clsBlob, n, valid, func(i int) string { return string(a.Value(i)) }), nil
	case *arrays.FixedSizeBinary:
		return stringsOf(clsBlob, n, valid, func(i int) string { return string(a.Value(i)) }), nil
	case *arrays.Decimal32, *arrays.Decimal64, *arrays.Decimal128, *arrays.Decimal256:
		dt := arr.DataType().(arrow.DecimalType)
		if int(dt.GetPrecision()) <= maxIntPrecision {
			v := vec{cls: clsInt, ints: make([]int64, n), valid: valid}
			for i := range v.ints {
				switch d := arr.(type) {
				case *arrays.Decimal32:
					v.ints[i] = int64(d.Value(i))
				case *arrays.Decimal64:
					v.ints[i] = int64(d.Value(i))
				case *arrays.Decimal128:
					v.ints[i] = int64(d.Value(i).LowBits())
				default:
					v.ints[i] = decimalUnscaled(arr, i).Int64()
				}
			}
			return v, nil
		}
		return stringsOf(clsText, n, valid, func(i int) string {
			return formatDecimal(decimalUnscaled(arr, i), int(dt.GetScale()))
		}), nil
	case *arrays.Dictionary:
		dict, err := loadArray(a.Dictionary(), arrowValid(a.Dictionary()))
		if err != nil {
			return vec{}, err
		}
		b := newBuilder(n)
		for i := range n {
			if has(valid, i) {
				b.put(i, dict.at(a.GetValueIndex(i)))
			}
		}
		return b.vec(), nil
	case *arrays.Struct:
		return vec{cls: clsOpaque, valid: valid}, nil
	case arrays.ListLike:
		var err error
		v := stringsOf(clsText, n, valid, func(i int) string {
			s, e := listJSON(arr, i)
			if e != nil {
				err = e
			}
			return s
		})
		return v, err
	}
	return nullVec, nil
}

// stringsOf returns text or blob values got one by one for the valid rows.
func stringsOf(cls class, n int, valid []uint64, get func(i int) string) vec {
	v := vec{cls: cls, txt: textCol{strs: make([]string, n)}, valid: valid}
	for i := range n {
		if has(valid, i) {
			v.txt.strs[i] = get(i)
		}
	}
	return v
}

// bufferBytes returns the bytes of buffer i of arr (nil when absent).
func bufferBytes(arr arrow.Array, i int) []byte {
	if b := arr.Data().Buffers()[i]; b != nil {
		return b.Bytes()
	}
	return nil
}

// decimalUnscaled returns the unscaled integer of a decimal value.
func decimalUnscaled(arr arrow.Array, i int) *big.Int {
	switch a := arr.(type) {
	case *arrays.Decimal32:
		return big.NewInt(int64(a.Value(i)))
	case *arrays.Decimal64:
		return big.NewInt(int64(a.Value(i)))
	case *arrays.Decimal128:
		return a.Value(i).BigInt()
	case *arrays.Decimal256:
		return a.Value(i).BigInt()
	}
	return new(big.Int)
}

// listJSON returns row i of a list or map array as the JSON text the row
// store stores: elements as jsonElement encodes them.
func listJSON(arr arrow.Array, i int) (string, error) {
	v, err := jsonElement(arr, i)
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", errEval("cannot encode a list as JSON: " + err.Error())
	}
	return string(b), nil
}

// jsonElement returns row i of arr as the SQLite row store encoded it in JSON:
// numbers, strings, booleans and null; binary as base64; temporal values
// as their counts; decimals as exact decimal numbers; floats in their
// shortest form (NaN and infinities as strings); lists as arrays, structs
// as objects, maps as arrays of [key, value] pairs.
func jsonElement(arr arrow.Array, i int) (any, error) {
	if arr.IsNull(i) {
		return nil, nil
	}
	switch a := arr.(type) {
	case *arrays.Dictionary:
		return jsonElement(a.Dictionary(), a.GetValueIndex(i))
	case *arrays.Struct:
		obj := make(map[string]any, a.NumField())
		for j, f := range a.DataType().(*arrow.StructType).Fields() {
			v, err := jsonElement(a.Field(j), i)
			if err != nil {
				return nil, err
			}
			obj[f.Name] = v
		}
		return obj, nil
	case *arrays.Map:
		start, end := a.ValueOffsets(i)
		out := make([]any, 0, end-start)
		for j := int(start); j < int(end); j++ {
			k, err := jsonElement(a.Keys(), j)
			if err != nil {
				return nil, err
			}
			v, err := jsonElement(a.Items(), j)
			if err != nil {
				return nil, err
			}
			out = append(out, []any{k, v})
		}
		return out, nil
	case arrays.ListLike:
		start, end := a.ValueOffsets(i)
		out := make([]any, 0, end-start)
		for j := int(start); j < int(end); j++ {
			v, err := jsonElement(a.ListValues(), j)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case *arrays.Float16:
		return jsonFloat(float64(a.Value(i).Float32()), 32), nil
	case *arrays.Float32:
		return jsonFloat(float64(a.Value(i)), 32), nil
	case *arrays.Float64:
		return jsonFloat(a.Value(i), 64), nil
	case *arrays.Uint64:
		return json.Number(strconv.FormatUint(a.Value(i), 10)), nil
	case *arrays.Boolean:
		return a.Value(i), nil
	case *arrays.Decimal32, *arrays.Decimal64, *arrays.Decimal128, *arrays.Decimal256:
		return json.Number(formatDecimal(decimalUnscaled(arr, i), int(arr.DataType().(arrow.DecimalType).GetScale()))), nil
	case *arrays.Binary:
		return base64.StdEncoding.EncodeToString(a.Value(i)), nil
	case *arrays.LargeBinary:
		return base64.StdEncoding.EncodeToString(a.Value(i)), nil
	case *arrays.BinaryView:
		return base64.StdEncoding.EncodeToString(a.Value(i)), nil
	case *arrays.FixedSizeBinary:
		return base64.StdEncoding.EncodeToString(a.Value(i)), nil
	}
	switch a := arr.(type) {
	case *arrays.String:
		return a.Value(i), nil
	case *arrays.LargeString:
		return a.Value(i), nil
	case *arrays.StringView:
		return a.Value(i), nil
	}
	if n, ok := intAt(arr, i); ok {
		return n, nil
	}
	return nil, nil
}

// intAt returns row i of an array of integers, dates, times, timestamps or
// durations as an int64 (uint64 wrapping); ok is false for other arrays.
func intAt(arr arrow.Array, i int) (int64, bool) {
	switch a := arr.(type) {
	case *arrays.Int8:
		return int64(a.Value(i)), true
	case *arrays.Int16:
		return int64(a.Value(i)), true
	case *arrays.Int32:
		return int64(a.Value(i)), true
	case *arrays.Int64:
		return a.Value(i), true
	case *arrays.Uint8:
		return int64(a.Value(i)), true
	case *arrays.Uint16:
		return int64(a.Value(i)), true
	case *arrays.Uint32:
		return int64(a.Value(i)), true
	case *arrays.Uint64:
		return int64(a.Value(i)), true
	case *arrays.Date32:
		return int64(a.Value(i)), true
	case *arrays.Date64:
		return int64(a.Value(i)), true
	case *arrays.Time32:
		return int64(a.Value(i)), true
	case *arrays.Time64:
		return int64(a.Value(i)), true
	case *arrays.Timestamp:
		return int64(a.Value(i)), true
	case *arrays.Duration:
		return int64(a.Value(i)), true
	}
	return 0, false
}

// jsonFloat keeps the shortest decimal form that reads back to the same
// float of the given bit size; NaN and infinities are strings.
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

// vectorBlobs returns vectors as the SQLite row store stored them: BLOBs of their
// elements, little-endian.
func vectorBlobs(a *arrays.FixedSizeList, valid []uint64) vec {
	size := int(a.DataType().(*arrow.FixedSizeListType).Len())
	values := a.ListValues()
	return stringsOf(clsBlob, a.Len(), valid, func(i int) string {
		var b []byte
		for j := (a.Offset() + i) * size; j < (a.Offset()+i+1)*size; j++ {
			switch v := values.(type) {
			case *arrays.Float16:
				b = endian.LittleEndian.AppendUint16(b, v.Value(j).Uint16())
			case *arrays.Float32:
				b = endian.LittleEndian.AppendUint32(b, math.Float32bits(v.Value(j)))
			case *arrays.Float64:
				b = endian.LittleEndian.AppendUint64(b, math.Float64bits(v.Value(j)))
			case *arrays.Uint8:
				b = append(b, v.Value(j))
			case *arrays.Int8:
				b = append(b, byte(v.Value(j)))
			}
		}
		return string(b)
	})
}
