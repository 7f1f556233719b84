package tableio

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

var null = []byte("null")

// arrayFromJSON builds an array of type dt from one JSON value per row
// (nil: null), with Arrow's own JSON decoding of dt, one column at a
// time. A string column takes any value: one that is not a JSON string is
// kept as its JSON text. A fixed-size list column is decoded as lists,
// whose sizes are then checked (Arrow's decoding would take lists of any
// size). Returns the index of the first value that does not fit, with the
// reason.
func arrayFromJSON(dt arrow.DataType, values []json.RawMessage) (arrow.Array, int, error) {
	if fsl, ok := dt.(*arrow.FixedSizeListType); ok {
		lists, bad, err := arrayFromJSON(arrow.ListOfField(fsl.ElemField()), values)
		if err != nil {
			return nil, bad, err
		}
		defer lists.Release()
		return listToFixed(lists.(array.ListLike), fsl)
	}
	var buf bytes.Buffer
	buf.Grow(len(values) * 8)
	buf.WriteByte('[')
	stringy := dt.ID() == arrow.STRING || dt.ID() == arrow.LARGE_STRING
	for i, v := range values {
		if i > 0 {
			buf.WriteByte(',')
		}
		switch {
		case v == nil:
			buf.Write(null)
		case stringy && len(v) > 0 && v[0] != '"' && !bytes.Equal(v, null):
			q, _ := json.Marshal(string(v))
			buf.Write(q)
		default:
			buf.Write(v)
		}
	}
	buf.WriteByte(']')
	if arr, err := unmarshalArray(dt, buf.Bytes()); err == nil {
		return arr, -1, nil
	}
	// Find the value that failed, for the message.
	for i, v := range values {
		if v == nil {
			continue
		}
		one, err := unmarshalArray(dt, append(append([]byte{'['}, v...), ']'))
		if err != nil {
			return nil, i, fmt.Errorf("%.80s does not fit type %s: %v", v, FormatType(dt), err)
		}
		one.Release()
	}
	return nil, 0, fmt.Errorf("values do not fit type %s", FormatType(dt))
}

// unmarshalArray decodes a JSON array into an array of type dt. Arrow's
// builders take some values they cannot build (a fixed-size list of
// another size inside a struct) and panic when the array is made: that is
// an error here.
func unmarshalArray(dt arrow.DataType, data []byte) (arr arrow.Array, err error) {
	b := array.NewBuilder(memory.DefaultAllocator, dt)
	defer b.Release()
	defer func() {
		if r := recover(); r != nil {
			arr, err = nil, fmt.Errorf("%v", r)
		}
	}()
	if err := b.UnmarshalJSON(data); err != nil {
		return nil, err
	}
	return b.NewArray(), nil
}

// conformArray converts arr to type to: a list of numbers to a fixed-size
// list (each list must have the size), and anything Arrow can cast. The
// result is a new reference. Returns the index of the first row that does
// not convert, or -1 when the whole conversion fails.
func conformArray(arr arrow.Array, to arrow.DataType) (arrow.Array, int, error) {
	if arrow.TypeEqual(arr.DataType(), to) {
		arr.Retain()
		return arr, -1, nil
	}
	if fsl, ok := to.(*arrow.FixedSizeListType); ok {
		if list, ok := arr.(array.ListLike); ok {
			return listToFixed(list, fsl)
		}
	}
	out, err := compute.CastArray(context.Background(), arr, compute.SafeCastOptions(to))
	if err != nil {
		return nil, -1, fmt.Errorf("cannot convert %s to %s: %v", FormatType(arr.DataType()), FormatType(to), err)
	}
	return out, -1, nil
}

// listToFixed converts a list column to fixed-size lists of to's size, its
// items cast to to's item type. Returns the index of the first list of
// another size.
func listToFixed(list array.ListLike, to *arrow.FixedSizeListType) (arrow.Array, int, error) {
	n := int64(to.Len())
	for i := 0; i < list.Len(); i++ {
		if list.IsNull(i) {
			continue
		}
		if start, end := list.ValueOffsets(i); end-start != n {
			return nil, i, fmt.Errorf("a list of %d values does not fit %s", end-start, FormatType(to))
		}
	}
	items, _, err := conformArray(list.ListValues(), to.Elem())
	if err != nil {
		return nil, -1, err
	}
	defer items.Release()
	// A fixed-size list holds n items in every slot, a null one too: the
	// items are the runs of the lists between null slots, with n nulls
	// for each null slot.
	var pieces []arrow.Array
	defer func() {
		for _, p := range pieces {
			p.Release()
		}
	}()
	runStart := -1
	flush := func(i int) {
		if runStart < 0 {
			return
		}
		from, _ := list.ValueOffsets(runStart)
		_, to := list.ValueOffsets(i - 1)
		pieces = append(pieces, array.NewSlice(items, from, to))
		runStart = -1
	}
	for i := 0; i < list.Len(); i++ {
		if list.IsNull(i) {
			flush(i)
			pieces = append(pieces, array.MakeArrayOfNull(memory.DefaultAllocator, items.DataType(), int(n)))
		} else if runStart < 0 {
			runStart = i
		}
	}
	flush(list.Len())
	var child arrow.Array
	switch len(pieces) {
	case 0:
		child = array.MakeArrayOfNull(memory.DefaultAllocator, items.DataType(), 0)
	case 1:
		child = pieces[0]
		child.Retain()
	default:
		if child, err = array.Concatenate(pieces, memory.DefaultAllocator); err != nil {
			return nil, -1, err
		}
	}
	defer child.Release()
	var validity *memory.Buffer
	if list.NullN() > 0 {
		validity = memory.NewResizableBuffer(memory.DefaultAllocator)
		validity.Resize(int(bitutil.BytesForBits(int64(list.Len()))))
		defer validity.Release()
		bitutil.CopyBitmap(list.NullBitmapBytes(), list.Data().Offset(), list.Len(), validity.Bytes(), 0)
	}
	data := array.NewData(to, list.Len(), []*memory.Buffer{validity}, []arrow.ArrayData{child.Data()}, list.NullN(), 0)
	defer data.Release()
	return array.MakeFromData(data), -1, nil
}

// conformBatch converts the columns of rec to the fields of schema, which
// has as many. The first row of rec is row first of the file (from 1), for
// messages.
func conformBatch(rec arrow.RecordBatch, schema *arrow.Schema, first int64) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, rec.NumCols())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for i, col := range rec.Columns() {
		out, bad, err := conformArray(col, schema.Field(i).Type)
		if err != nil {
			row := first
			if bad >= 0 {
				row += int64(bad)
			}
			return nil, &RowError{Line: row, Unit: "row", Column: schema.Field(i).Name, Err: err}
		}
		cols[i] = out
	}
	return array.NewRecordBatch(schema, cols, rec.NumRows()), nil
}
