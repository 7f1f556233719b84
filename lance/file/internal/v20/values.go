package v20

import (
	"encoding/binary"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"

	"github.com/lancens/lancens/lance/file/internal/compression"
	"github.com/lancens/lancens/lance/file/internal/encoding"
	"github.com/lancens/lancens/lance/internal/pb/enc20pb"
)

// values accumulates the values of one page of a leaf column.
type values interface {
	// append adds the values of arr (of the column's type).
	append(arr arrow.Array)
	// len returns the number of values held.
	len() int
	// bytes returns about how many bytes the page would take.
	bytes() uint64
	// fit returns how many of arr's first values fit in room bytes
	// (maybe 0).
	fit(arr arrow.Array, room uint64) int
	// encode appends the page's buffers to bufs and returns its encoding.
	encode(bufs *[][]byte) *enc20pb.ArrayEncoding
	reset()
}

// newValues returns the page accumulator of a leaf type, or an error
// wrapping ErrUnsupported. md is the field's metadata, which may ask for
// compression of binary values.
func newValues(dt arrow.DataType, md map[string]string) (values, error) {
	switch t := dt.(type) {
	case *arrow.DictionaryType:
		return nil, encoding.Unsupportedf("writing dictionary-typed columns")
	case *arrow.BooleanType:
		return &boolValues{}, nil
	case *arrow.NullType:
		return &nullValues{}, nil
	case *arrow.FixedSizeListType:
		child, err := newValues(t.Elem(), nil)
		if err != nil {
			return nil, err
		}
		return &fslValues{dim: int(t.Len()), child: child}, nil
	}
	if binaryOffsets(dt) != 0 {
		c, err := compression.NewCompressor(md)
		if err != nil {
			return nil, err
		}
		return &binaryWriter{dictionary: dt.ID() == arrow.STRING, compressor: c}, nil
	}
	if bits := bitWidth(dt); bits > 0 && bits%8 == 0 {
		return &fixedValues{width: int(bits / 8)}, nil
	}
	return nil, encoding.Unsupportedf("writing %s to a 2.0 file", dt)
}

// bitmap is a growing bitmap.
type bitmap struct {
	bits []byte
	n    int
	ones int
}

func (b *bitmap) grow(n int) {
	need := int(bitmapBytes(uint64(b.n + n)))
	for len(b.bits) < need {
		b.bits = append(b.bits, 0)
	}
}

// appendBits adds n bits of src from bit off.
func (b *bitmap) appendBits(src []byte, off, n int) {
	b.grow(n)
	copyBits(b.bits, b.n, src, off, n)
	b.ones += bitutil.CountSetBits(src, off, n)
	b.n += n
}

// appendOnes adds n set bits.
func (b *bitmap) appendOnes(n int) {
	b.grow(n)
	i := 0
	for ; i < n && (b.n+i)%8 != 0; i++ {
		setBit(b.bits, b.n+i)
	}
	for ; i+8 <= n; i += 8 {
		b.bits[(b.n+i)/8] = 0xff
	}
	for ; i < n; i++ {
		setBit(b.bits, b.n+i)
	}
	b.n += n
	b.ones += n
}

// appendValidity adds the validity of arr.
func (b *bitmap) appendValidity(arr arrow.Array) {
	d := arr.Data()
	if arr.NullN() == 0 || d.Buffers()[0] == nil {
		b.appendOnes(arr.Len())
		return
	}
	b.appendBits(d.Buffers()[0].Bytes(), d.Offset(), arr.Len())
}

// nullable returns the Nullable wrapper of values whose validity is v:
// no nulls, all nulls (and no buffers), or a validity bitmap buffer
// followed by the values' buffers.
func nullable(v *bitmap, bufs *[][]byte, encodeValues func() *enc20pb.ArrayEncoding) *enc20pb.ArrayEncoding {
	n := &enc20pb.Nullable{}
	switch {
	case v.n == 0: // an empty page, which Lance marks all null
		n.Nullability = &enc20pb.Nullable_AllNulls{AllNulls: &enc20pb.Nullable_AllNull{}}
	case v.ones == v.n:
		n.Nullability = &enc20pb.Nullable_NoNulls{NoNulls: &enc20pb.Nullable_NoNull{Values: encodeValues()}}
	case v.ones == 0:
		n.Nullability = &enc20pb.Nullable_AllNulls{AllNulls: &enc20pb.Nullable_AllNull{}}
	default:
		i := uint32(len(*bufs))
		*bufs = append(*bufs, v.bits)
		validity := flat(1, i)
		n.Nullability = &enc20pb.Nullable_SomeNulls{SomeNulls: &enc20pb.Nullable_SomeNull{Validity: validity, Values: encodeValues()}}
	}
	return &enc20pb.ArrayEncoding{ArrayEncoding: &enc20pb.ArrayEncoding_Nullable{Nullable: n}}
}

// fixedValues holds fixed-width values of width bytes.
type fixedValues struct {
	width    int
	data     []byte
	validity bitmap
}

func (f *fixedValues) append(arr arrow.Array) {
	d := arr.Data()
	raw := d.Buffers()[1].Bytes()
	f.data = append(f.data, raw[d.Offset()*f.width:(d.Offset()+d.Len())*f.width]...)
	f.validity.appendValidity(arr)
}

func (f *fixedValues) len() int      { return f.validity.n }
func (f *fixedValues) bytes() uint64 { return uint64(len(f.data)) }
func (f *fixedValues) fit(_ arrow.Array, room uint64) int {
	return int(min(room/uint64(f.width), 1<<30))
}

func (f *fixedValues) encode(bufs *[][]byte) *enc20pb.ArrayEncoding {
	return nullable(&f.validity, bufs, func() *enc20pb.ArrayEncoding {
		*bufs = append(*bufs, f.data)
		return flat(uint64(8*f.width), uint32(len(*bufs)-1))
	})
}

func (f *fixedValues) reset() { f.data = nil; f.validity = bitmap{} }

// boolValues holds booleans.
type boolValues struct {
	data, validity bitmap
}

func (b *boolValues) append(arr arrow.Array) {
	d := arr.Data()
	b.data.appendBits(d.Buffers()[1].Bytes(), d.Offset(), d.Len())
	b.validity.appendValidity(arr)
}

func (b *boolValues) len() int      { return b.validity.n }
func (b *boolValues) bytes() uint64 { return uint64(len(b.data.bits)) }
func (b *boolValues) fit(_ arrow.Array, room uint64) int {
	return int(min(room*8, 1<<30))
}

func (b *boolValues) encode(bufs *[][]byte) *enc20pb.ArrayEncoding {
	return nullable(&b.validity, bufs, func() *enc20pb.ArrayEncoding {
		*bufs = append(*bufs, b.data.bits)
		return flat(1, uint32(len(*bufs)-1))
	})
}

func (b *boolValues) reset() { b.data, b.validity = bitmap{}, bitmap{} }

// binaryWriter holds variable-length values: the end of each (high bit
// set when null) and their bytes.
type binaryWriter struct {
	ends []uint64
	data []byte
	// dictionary: a page of strings with few distinct values is written
	// as a dictionary, as Lance's 2.0 writer does (for utf8 only).
	dictionary bool
	// compressor, when set, compresses the bytes of pages that are not
	// dictionaries.
	compressor *compression.Compressor
}

// Lance dictionary-encodes a 2.0 page of strings when it has at least
// dictionaryMinValues values and fewer than dictionaryMaxItems distinct
// ones (it estimates the count; this counts exactly).
const (
	dictionaryMinValues = 100
	dictionaryMaxItems  = 100
)

// offsetsOf returns the value offsets of a binary-like array (its own
// len+1, from its slice offset), widened.
func offsetsOf(arr arrow.Array) []int64 {
	var out []int64
	widen := func(o []int32) []int64 {
		out = make([]int64, len(o))
		for i, v := range o {
			out[i] = int64(v)
		}
		return out
	}
	switch a := arr.(type) {
	case *array.String:
		return widen(a.ValueOffsets())
	case *array.Binary:
		return widen(a.ValueOffsets())
	case *array.LargeString:
		return a.ValueOffsets()
	case *array.LargeBinary:
		return a.ValueOffsets()
	}
	panic("offsetsOf: not a binary-like array")
}

// valueData returns the data buffer of a binary-like array.
func valueData(arr arrow.Array) []byte {
	if b := arr.Data().Buffers()[2]; b != nil {
		return b.Bytes()
	}
	return nil
}

func (b *binaryWriter) append(arr arrow.Array) {
	arr = storage(arr)
	data := valueData(arr)
	offsets := offsetsOf(arr)
	if arr.NullN() == 0 {
		base := uint64(len(b.data))
		b.data = append(b.data, data[offsets[0]:offsets[len(offsets)-1]]...)
		for _, o := range offsets[1:] {
			b.ends = append(b.ends, base+uint64(o-offsets[0]))
		}
		return
	}
	for i := 0; i < arr.Len(); i++ {
		if arr.IsNull(i) {
			b.ends = append(b.ends, uint64(len(b.data))|nullFlag)
			continue
		}
		b.data = append(b.data, data[offsets[i]:offsets[i+1]]...)
		b.ends = append(b.ends, uint64(len(b.data)))
	}
}

func (b *binaryWriter) len() int      { return len(b.ends) }
func (b *binaryWriter) bytes() uint64 { return uint64(len(b.data) + 8*len(b.ends)) }

func (b *binaryWriter) fit(arr arrow.Array, room uint64) int {
	offsets := offsetsOf(storage(arr))
	var used uint64
	for i := 0; i < arr.Len(); i++ {
		used += uint64(offsets[i+1]-offsets[i]) + 8
		if used > room {
			return i
		}
	}
	return arr.Len()
}

// encode writes Lance's binary encoding: the ends as 64-bit flat values
// (a null's end plus null_adjustment, one more than the last end), then
// the bytes.
func (b *binaryWriter) encode(bufs *[][]byte) *enc20pb.ArrayEncoding {
	if b.dictionary && len(b.ends) >= dictionaryMinValues {
		if enc := b.encodeDictionary(bufs); enc != nil {
			return enc
		}
	}
	enc := encodeBinary(b.ends, b.data, bufs)
	if c := b.compressor; c != nil {
		last := len(*bufs) - 1
		(*bufs)[last] = c.Compress((*bufs)[last])
		enc.GetBinary().GetBytes().GetFlat().Compression = &enc20pb.Compression{Scheme: c.Scheme().String()}
	}
	return enc
}

// encodeDictionary writes Lance's dictionary of strings (8-bit indices, 0
// for null and k for item k-1, items in order of first appearance,
// binary-encoded; a page of nulls only has one null item), or returns nil
// when the page has too many distinct values.
func (b *binaryWriter) encodeDictionary(bufs *[][]byte) *enc20pb.ArrayEncoding {
	index := map[string]byte{}
	indices := make([]byte, len(b.ends))
	var itemEnds []uint64
	var itemData []byte
	var start uint64
	for i, e := range b.ends {
		if e&nullFlag != 0 {
			start = e &^ nullFlag
			continue
		}
		v := b.data[start:e]
		start = e
		k, ok := index[string(v)]
		if !ok {
			if len(index)+1 >= dictionaryMaxItems {
				return nil
			}
			k = byte(len(index) + 1)
			index[string(v)] = k
			itemData = append(itemData, v...)
			itemEnds = append(itemEnds, uint64(len(itemData)))
		}
		indices[i] = k
	}
	if len(itemEnds) == 0 {
		itemEnds = []uint64{nullFlag}
	}
	*bufs = append(*bufs, indices)
	idx := flat(8, uint32(len(*bufs)-1))
	return &enc20pb.ArrayEncoding{ArrayEncoding: &enc20pb.ArrayEncoding_Dictionary{Dictionary: &enc20pb.Dictionary{
		Indices:            noNulls(idx),
		Items:              encodeBinary(itemEnds, itemData, bufs),
		NumDictionaryItems: uint32(len(itemEnds)),
	}}}
}

// encodeBinary writes values as Lance's binary encoding.
func encodeBinary(endsIn []uint64, data []byte, bufs *[][]byte) *enc20pb.ArrayEncoding {
	adj := uint64(len(data)) + 1
	if len(endsIn) == 0 {
		adj = 0 // as Lance writes an empty page
	}
	ends := make([]byte, 8*len(endsIn))
	for i, e := range endsIn {
		if e&nullFlag != 0 {
			e = e&^nullFlag + adj
		}
		binary.LittleEndian.PutUint64(ends[8*i:], e)
	}
	*bufs = append(*bufs, ends, data)
	n := uint32(len(*bufs))
	return &enc20pb.ArrayEncoding{ArrayEncoding: &enc20pb.ArrayEncoding_Binary{Binary: &enc20pb.Binary{
		Indices:        noNulls(flat(64, n-2)),
		Bytes:          flat(8, n-1),
		NullAdjustment: adj,
	}}}
}

func (b *binaryWriter) reset() { b.ends, b.data = nil, nil }

// fslValues holds fixed-size lists: their validity and their items.
type fslValues struct {
	dim      int
	validity bitmap
	child    values
}

func (f *fslValues) append(arr arrow.Array) {
	l := storage(arr).(*array.FixedSizeList)
	off := int64(l.Data().Offset())
	items := array.NewSlice(l.ListValues(), off*int64(f.dim), (off+int64(l.Len()))*int64(f.dim))
	f.child.append(items)
	items.Release()
	f.validity.appendValidity(arr)
}

func (f *fslValues) len() int      { return f.validity.n }
func (f *fslValues) bytes() uint64 { return f.child.bytes() }

func (f *fslValues) fit(arr arrow.Array, room uint64) int {
	l := storage(arr).(*array.FixedSizeList)
	off := int64(l.Data().Offset())
	items := array.NewSlice(l.ListValues(), off*int64(f.dim), (off+int64(l.Len()))*int64(f.dim))
	defer items.Release()
	return f.child.fit(items, room) / f.dim
}

func (f *fslValues) encode(bufs *[][]byte) *enc20pb.ArrayEncoding {
	return nullable(&f.validity, bufs, func() *enc20pb.ArrayEncoding {
		return &enc20pb.ArrayEncoding{ArrayEncoding: &enc20pb.ArrayEncoding_FixedSizeList{FixedSizeList: &enc20pb.FixedSizeList{
			Dimension: uint32(f.dim),
			Items:     f.child.encode(bufs),
		}}}
	})
}

func (f *fslValues) reset() { f.validity = bitmap{}; f.child.reset() }

// packedValues holds the rows of a packed struct: its fixed-width fields'
// values interleaved, row by row, in one buffer.
type packedValues struct {
	widths []int
	rowLen int
	data   []byte
	n      int
	name   string
}

func newPacked(t *arrow.StructType, name string) (*packedValues, error) {
	p := &packedValues{name: name}
	for _, f := range t.Fields() {
		bits := bitWidth(f.Type)
		if bits == 0 || bits%8 != 0 {
			return nil, encoding.Unsupportedf("packed struct %s has a field of type %s, not fixed-width bytes", name, f.Type)
		}
		p.widths = append(p.widths, int(bits/8))
		p.rowLen += int(bits / 8)
	}
	if p.rowLen == 0 {
		return nil, encoding.Unsupportedf("packed struct %s has no fields", name)
	}
	return p, nil
}

// check refuses nulls: a packed struct has no place for them.
func (p *packedValues) check(arr arrow.Array) error {
	st := arr.(*array.Struct)
	if st.NullN() > 0 {
		return encoding.Unsupportedf("packed struct %s holds null rows", p.name)
	}
	for i := range p.widths {
		if n := st.Field(i).NullN(); n > 0 {
			return encoding.Unsupportedf("a field of packed struct %s holds %d nulls", p.name, n)
		}
	}
	return nil
}

func (p *packedValues) append(arr arrow.Array) {
	st := storage(arr).(*array.Struct)
	start := len(p.data)
	p.data = append(p.data, make([]byte, st.Len()*p.rowLen)...)
	at := 0
	for i, w := range p.widths {
		d := st.Field(i).Data()
		raw := d.Buffers()[1].Bytes()[d.Offset()*w:]
		for r := 0; r < st.Len(); r++ {
			copy(p.data[start+r*p.rowLen+at:], raw[r*w:(r+1)*w])
		}
		at += w
	}
	p.n += st.Len()
}

func (p *packedValues) len() int      { return p.n }
func (p *packedValues) bytes() uint64 { return uint64(len(p.data)) }
func (p *packedValues) fit(_ arrow.Array, room uint64) int {
	return int(min(room/uint64(p.rowLen), 1<<30))
}

func (p *packedValues) encode(bufs *[][]byte) *enc20pb.ArrayEncoding {
	*bufs = append(*bufs, p.data)
	i := uint32(len(*bufs) - 1)
	ps := &enc20pb.PackedStruct{Buffer: &enc20pb.Buffer{BufferIndex: i}}
	for _, w := range p.widths {
		ps.Inner = append(ps.Inner, noNulls(flat(uint64(8*w), 0)))
	}
	return &enc20pb.ArrayEncoding{ArrayEncoding: &enc20pb.ArrayEncoding_PackedStruct{PackedStruct: ps}}
}

func (p *packedValues) reset() { p.data, p.n = nil, 0 }

// nullValues holds values of the null type: all null, no buffers.
type nullValues struct{ n int }

func (v *nullValues) append(arr arrow.Array)            { v.n += arr.Len() }
func (v *nullValues) len() int                          { return v.n }
func (v *nullValues) bytes() uint64                     { return 0 }
func (v *nullValues) fit(arr arrow.Array, _ uint64) int { return arr.Len() }
func (v *nullValues) reset()                            { v.n = 0 }

func (v *nullValues) encode(*[][]byte) *enc20pb.ArrayEncoding {
	return &enc20pb.ArrayEncoding{ArrayEncoding: &enc20pb.ArrayEncoding_Nullable{Nullable: &enc20pb.Nullable{
		Nullability: &enc20pb.Nullable_AllNulls{AllNulls: &enc20pb.Nullable_AllNull{}},
	}}}
}
