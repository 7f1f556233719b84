package arrowin

import (
	"bytes"
	"encoding/binary"
	"math"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
)

// validator checks decoded arrays before anyone reads their values:
// buffers long enough for the declared lengths, null counts that match the
// validity bitmaps, offsets that start at or after zero, never decrease
// and stay inside the data, children long enough for their parents, views
// inside their data buffers, dictionary indices inside their dictionary,
// and UTF-8 in string columns. arrow-go decodes without these checks, and
// reading a value past a buffer's end panics.
type validator struct {
	// dictionaries holds the dictionaries already checked: batches share
	// them, and each is checked once.
	dictionaries map[arrow.ArrayData]bool
}

func newValidator() *validator { return &validator{dictionaries: map[arrow.ArrayData]bool{}} }

// record checks every column of rec. Returns an *Error naming the column.
func (v *validator) record(rec arrow.RecordBatch) error {
	for i, col := range rec.Columns() {
		if err := v.array(col.Data(), rec.ColumnName(i)); err != nil {
			return err
		}
	}
	return nil
}

func (v *validator) array(d arrow.ArrayData, name string) error {
	dt := d.DataType()
	if ext, ok := dt.(arrow.ExtensionType); ok {
		dt = ext.StorageType()
	}
	off, n := d.Offset(), d.Len()
	if off < 0 || n < 0 || off > math.MaxInt-n {
		return invalid("column %q has %d values at offset %d", name, n, off)
	}
	if dt.ID() == arrow.NULL {
		return nil
	}
	if err := validity(d, name); err != nil {
		return err
	}
	end := off + n
	switch t := dt.(type) {
	case *arrow.DictionaryType:
		return v.dictionary(d, t, name)
	case *arrow.BooleanType:
		return need(d, 1, bitutil.BytesForBits(int64(end)), name)
	case *arrow.StringType, *arrow.BinaryType:
		return binaryValues[int32](d, name, t.ID() == arrow.STRING)
	case *arrow.LargeStringType, *arrow.LargeBinaryType:
		return binaryValues[int64](d, name, t.ID() == arrow.LARGE_STRING)
	case *arrow.StringViewType, *arrow.BinaryViewType:
		return views(d, name, t.ID() == arrow.STRING_VIEW)
	case *arrow.ListType:
		return list[int32](v, d, name)
	case *arrow.MapType:
		if err := list[int32](v, d, name); err != nil {
			return err
		}
		if keys := d.Children()[0].Children()[0]; keys.NullN() > 0 {
			return invalid("column %q has null map keys", name)
		}
		return nil
	case *arrow.LargeListType:
		return list[int64](v, d, name)
	case *arrow.FixedSizeListType:
		items, ok := mulFits(end, int(t.Len()))
		if !ok {
			return invalid("column %q is too long", name)
		}
		return v.children(d, items, name)
	case *arrow.StructType:
		return v.children(d, end, name)
	case *arrow.FixedSizeBinaryType:
		size, ok := mulFits(end, t.ByteWidth)
		if !ok {
			return invalid("column %q is too long", name)
		}
		return need(d, 1, int64(size), name)
	case arrow.FixedWidthDataType:
		size, ok := mulFits(end, t.BitWidth()/8)
		if !ok {
			return invalid("column %q is too long", name)
		}
		return need(d, 1, int64(size), name)
	}
	return unsupported("column %q has type %s, which lancens cannot store", name, dt)
}

// validity checks that a validity bitmap, when present, covers the array
// and agrees with the null count, and that nulls have one.
func validity(d arrow.ArrayData, name string) error {
	bm := buffer(d, 0)
	nulls := d.NullN()
	if bm == nil && nulls == 0 {
		return nil
	}
	off, n := d.Offset(), d.Len()
	if int64(len(bm)) < bitutil.BytesForBits(int64(off+n)) {
		return invalid("column %q declares %d nulls but its validity bitmap is too short", name, nulls)
	}
	if got := n - bitutil.CountSetBits(bm, off, n); got != nulls {
		return invalid("column %q declares %d nulls but its validity bitmap marks %d", name, nulls, got)
	}
	return nil
}

// buffer returns the bytes of buffer i, nil when absent.
func buffer(d arrow.ArrayData, i int) []byte {
	bufs := d.Buffers()
	if i >= len(bufs) || bufs[i] == nil {
		return nil
	}
	return bufs[i].Bytes()
}

func need(d arrow.ArrayData, i int, size int64, name string) error {
	if int64(len(buffer(d, i))) < size {
		return invalid("column %q declares %d values but buffer %d holds only %d bytes", name, d.Len(), i, len(buffer(d, i)))
	}
	return nil
}

func mulFits(a, b int) (int, bool) {
	if b < 0 || (b > 0 && a > math.MaxInt/b) {
		return 0, false
	}
	return a * b, true
}

// offsets returns the n+1 offsets of a list or binary array, after checking
// that they start at or after zero and never decrease. An empty array may
// have no offsets buffer.
func offsets[T int32 | int64](d arrow.ArrayData, name string) ([]T, error) {
	off, n := d.Offset(), d.Len()
	if n == 0 {
		return nil, nil
	}
	var zero T
	width := int(binary.Size(zero))
	if err := need(d, 1, int64(off+n+1)*int64(width), name); err != nil {
		return nil, err
	}
	o := arrow.GetData[T](buffer(d, 1))[off : off+n+1]
	if o[0] < 0 {
		return nil, invalid("column %q has a negative offset", name)
	}
	for i := 1; i < len(o); i++ {
		if o[i] < o[i-1] {
			return nil, invalid("column %q has decreasing offsets at row %d", name, i)
		}
	}
	return o, nil
}

// binaryValues checks the offsets of a binary or string array against its
// data, and that every non-null string is UTF-8.
func binaryValues[T int32 | int64](d arrow.ArrayData, name string, isString bool) error {
	o, err := offsets[T](d, name)
	if err != nil || o == nil {
		return err
	}
	data := buffer(d, 2)
	if int64(o[len(o)-1]) > int64(len(data)) {
		return invalid("column %q has offsets past the end of its data", name)
	}
	if !isString {
		return nil
	}
	bm := buffer(d, 0)
	for i := range len(o) - 1 {
		if bm != nil && !bitutil.BitIsSet(bm, d.Offset()+i) {
			continue
		}
		if !utf8.Valid(data[o[i]:o[i+1]]) {
			return invalid("column %q holds a string that is not valid UTF-8 (row %d)", name, i)
		}
	}
	return nil
}

// views checks a string or binary view array: each non-null view's size,
// and its bytes inline or inside one of the data buffers, UTF-8 for
// strings.
func views(d arrow.ArrayData, name string, isString bool) error {
	off, n := d.Offset(), d.Len()
	const width = arrow.ViewHeaderSizeBytes
	if err := need(d, 1, int64((off+n)*width), name); err != nil {
		return err
	}
	vs, bm := buffer(d, 1), buffer(d, 0)
	data := d.Buffers()[2:]
	for i := off; i < off+n; i++ {
		if bm != nil && !bitutil.BitIsSet(bm, i) {
			continue
		}
		v := vs[width*i:]
		size := int(int32(binary.LittleEndian.Uint32(v)))
		var b []byte
		switch {
		case size < 0:
			return invalid("column %q has a view of negative size (row %d)", name, i-off)
		case arrow.IsViewInline(size):
			b = v[4 : 4+size]
		default:
			idx := int(int32(binary.LittleEndian.Uint32(v[8:])))
			at := int(int32(binary.LittleEndian.Uint32(v[12:])))
			if idx < 0 || idx >= len(data) || data[idx] == nil || at < 0 || at > data[idx].Len()-size {
				return invalid("column %q has a view outside its data buffers (row %d)", name, i-off)
			}
			b = data[idx].Bytes()[at : at+size]
			if !bytes.Equal(b[:4], v[4:8]) {
				return invalid("column %q has a view whose prefix does not match its data (row %d)", name, i-off)
			}
		}
		if isString && !utf8.Valid(b) {
			return invalid("column %q holds a string that is not valid UTF-8 (row %d)", name, i-off)
		}
	}
	return nil
}

// list checks a list or map array's offsets and its child, which must hold
// every item they reach.
func list[T int32 | int64](v *validator, d arrow.ArrayData, name string) error {
	o, err := offsets[T](d, name)
	if err != nil {
		return err
	}
	items := 0
	if len(o) > 0 {
		items = int(o[len(o)-1])
	}
	return v.children(d, items, name)
}

// children checks that each child of d has at least items values, then the
// children themselves.
func (v *validator) children(d arrow.ArrayData, items int, name string) error {
	for i, c := range d.Children() {
		child := name + "." + childName(d.DataType(), i)
		if c.Offset()+c.Len() < items {
			return invalid("column %q has %d values where its parent needs %d", child, c.Len(), items)
		}
		if err := v.array(c, child); err != nil {
			return err
		}
	}
	return nil
}

func childName(dt arrow.DataType, i int) string {
	if ext, ok := dt.(arrow.ExtensionType); ok {
		dt = ext.StorageType()
	}
	if nt, ok := dt.(arrow.NestedType); ok && i < len(nt.Fields()) {
		return nt.Fields()[i].Name
	}
	return "?"
}

// dictionary checks a dictionary column's indices (against its dictionary,
// which is checked once).
func (v *validator) dictionary(d arrow.ArrayData, t *arrow.DictionaryType, name string) error {
	width := t.IndexType.(arrow.FixedWidthDataType).BitWidth() / 8
	if err := need(d, 1, int64(d.Offset()+d.Len())*int64(width), name); err != nil {
		return err
	}
	dict := d.Dictionary()
	if dict == nil {
		return invalid("dictionary column %q has no dictionary", name)
	}
	if !v.dictionaries[dict] {
		if err := v.array(dict, name); err != nil {
			return err
		}
		v.dictionaries[dict] = true
	}
	var ok bool
	switch t.IndexType.ID() {
	case arrow.INT8:
		ok = indicesIn[int8](d, dict.Len())
	case arrow.UINT8:
		ok = indicesIn[uint8](d, dict.Len())
	case arrow.INT16:
		ok = indicesIn[int16](d, dict.Len())
	case arrow.UINT16:
		ok = indicesIn[uint16](d, dict.Len())
	case arrow.INT32:
		ok = indicesIn[int32](d, dict.Len())
	case arrow.UINT32:
		ok = indicesIn[uint32](d, dict.Len())
	case arrow.INT64:
		ok = indicesIn[int64](d, dict.Len())
	case arrow.UINT64:
		ok = indicesIn[uint64](d, dict.Len())
	}
	if !ok {
		return invalid("dictionary column %q has an index outside its dictionary of %d values", name, dict.Len())
	}
	return nil
}

func indicesIn[T int8 | uint8 | int16 | uint16 | int32 | uint32 | int64 | uint64](d arrow.ArrayData, size int) bool {
	bm := buffer(d, 0)
	idx := arrow.GetData[T](buffer(d, 1))
	for i := d.Offset(); i < d.Offset()+d.Len(); i++ {
		if bm != nil && !bitutil.BitIsSet(bm, i) {
			continue
		}
		if x := idx[i]; x < 0 || uint64(x) >= uint64(size) {
			return false
		}
	}
	return true
}
