package v20

import (
	"context"
	"encoding/binary"
	"math"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/protobuf/proto"

	"github.com/lancens/lancens/lance/file/internal/compression"
	"github.com/lancens/lancens/lance/file/internal/encoding"
	"github.com/lancens/lancens/lance/internal/pb/enc20pb"
)

// maxEncodingDepth bounds the nesting of a page's encoding tree.
const maxEncodingDepth = 32

// span is the values [start, end) of a page (or of a column).
type span struct{ start, end uint64 }

func total(spans []span) uint64 {
	var n uint64
	for _, s := range spans {
		n += s.end - s.start
	}
	return n
}

// page decodes values of one page.
type page struct {
	ctx  context.Context
	req  *encoding.Request
	col  *encoding.Column
	info *encoding.Page
}

// parseArrayEncoding returns a page's ArrayEncoding, or an error wrapping
// ErrCorrupt when the page has another kind of encoding.
func parseArrayEncoding(p *encoding.Page) (*enc20pb.ArrayEncoding, error) {
	if !strings.HasSuffix(p.EncodingType, "/lance.encodings.ArrayEncoding") {
		return nil, encoding.Corruptf("a 2.0 page's encoding is %q, not a lance.encodings.ArrayEncoding", p.EncodingType)
	}
	var e enc20pb.ArrayEncoding
	if err := proto.Unmarshal(p.Encoding, &e); err != nil {
		return nil, encoding.Corruptf("a page encoding: %v", err)
	}
	return &e, nil
}

// buffer returns where the buffer b of the page lies in the file.
func (p *page) buffer(b *enc20pb.Buffer) (encoding.Range, error) {
	i := uint64(b.GetBufferIndex())
	var list []encoding.Range
	switch b.GetBufferType() {
	case enc20pb.Buffer_page:
		list = p.info.Buffers
	case enc20pb.Buffer_column:
		list = p.col.Buffers
	case enc20pb.Buffer_file:
		list = p.req.GlobalBuffers
	default:
		return encoding.Range{}, encoding.Corruptf("a buffer of unknown type %d", b.GetBufferType())
	}
	if i >= uint64(len(list)) {
		return encoding.Range{}, encoding.Corruptf("the encoding names %s buffer %d of %d", b.GetBufferType(), i, len(list))
	}
	return list[i], nil
}

// read returns the bytes of the given ranges of buffer buf: one slice per
// range, in order. It checks each range against the buffer's size.
func (p *page) read(buf encoding.Range, ranges []encoding.Range) ([][]byte, error) {
	abs := make([]encoding.Range, len(ranges))
	for i, r := range ranges {
		if r.Offset > buf.Length || r.Length > buf.Length-r.Offset {
			return nil, encoding.Corruptf("a read of %d bytes at %d of a %d-byte buffer", r.Length, r.Offset, buf.Length)
		}
		abs[i] = encoding.Range{Offset: buf.Offset + r.Offset, Length: r.Length}
	}
	return p.req.File.ReadRanges(p.ctx, abs)
}

// whole returns the content of buffer buf, decompressed with the scheme
// a Compression names ("zstd" or "lz4"; package compression reads Lance's
// framing of each). It returns an error wrapping ErrUnsupported for
// another scheme, and what compression.Decompress returns.
func (p *page) whole(buf encoding.Range, scheme string) ([]byte, error) {
	s, err := compression.ParseScheme(scheme)
	if err != nil {
		return nil, err
	}
	b, err := p.read(buf, []encoding.Range{{Offset: 0, Length: buf.Length}})
	if err != nil {
		return nil, err
	}
	return compression.Decompress(s, b[0], p.req.Budget)
}

// allocN returns count*width zeroed bytes charged to the read's budget.
func (p *page) allocN(count, width uint64) ([]byte, error) {
	n, ok := encoding.Mul(count, width)
	if !ok {
		return nil, encoding.ErrBudget
	}
	return p.alloc(n)
}

// alloc returns n zeroed bytes charged to the read's budget.
func (p *page) alloc(n uint64) ([]byte, error) {
	if err := p.req.Budget.Take(n); err != nil {
		return nil, err
	}
	if n > math.MaxInt {
		return nil, encoding.ErrBudget
	}
	return make([]byte, n), nil
}

// decode returns the values at spans (sorted, disjoint, within the page)
// of the array enc encodes, as data of type dt.
func (p *page) decode(enc *enc20pb.ArrayEncoding, dt arrow.DataType, spans []span, depth int) (arrow.ArrayData, error) {
	if depth > maxEncodingDepth {
		return nil, encoding.Corruptf("a page encoding nests more than %d deep", maxEncodingDepth)
	}
	switch e := enc.GetArrayEncoding().(type) {
	case *enc20pb.ArrayEncoding_Nullable:
		return p.nullable(e.Nullable, dt, spans, depth)
	case *enc20pb.ArrayEncoding_Flat:
		return p.flat(e.Flat, dt, spans)
	case *enc20pb.ArrayEncoding_FixedSizeList:
		return p.fixedSizeList(e.FixedSizeList, dt, spans, depth)
	case *enc20pb.ArrayEncoding_Binary:
		return p.binary(e.Binary, dt, spans, depth)
	case *enc20pb.ArrayEncoding_Dictionary:
		return p.dictionary(e.Dictionary, dt, spans, depth)
	case *enc20pb.ArrayEncoding_PackedStruct:
		return p.packedStruct(e.PackedStruct, dt, spans)
	case *enc20pb.ArrayEncoding_Fsst:
		return p.fsst(e.Fsst, dt, spans, depth)
	case nil:
		return nil, encoding.Corruptf("a page encoding is empty")
	}
	return nil, encoding.Unsupportedf("the 2.0 encoding %T", enc.GetArrayEncoding())
}

func (p *page) nullable(n *enc20pb.Nullable, dt arrow.DataType, spans []span, depth int) (arrow.ArrayData, error) {
	switch v := n.GetNullability().(type) {
	case *enc20pb.Nullable_NoNulls:
		return p.decode(v.NoNulls.GetValues(), dt, spans, depth+1)
	case *enc20pb.Nullable_AllNulls:
		return p.nulls(dt, total(spans))
	case *enc20pb.Nullable_SomeNulls:
		validity, err := p.decode(v.SomeNulls.GetValidity(), arrow.FixedWidthTypes.Boolean, spans, depth+1)
		if err != nil {
			return nil, err
		}
		defer validity.Release()
		values, err := p.decode(v.SomeNulls.GetValues(), dt, spans, depth+1)
		if err != nil {
			return nil, err
		}
		defer values.Release()
		return withValidity(values, bufferBytes(validity, 1)), nil
	}
	return nil, encoding.Corruptf("a nullable encoding without nullability")
}

// nulls returns n nulls of type dt.
func (p *page) nulls(dt arrow.DataType, n uint64) (arrow.ArrayData, error) {
	size, ok := encoding.Mul(n, approxWidth(dt)+1)
	if !ok || n > math.MaxInt32 {
		return nil, encoding.ErrBudget
	}
	if err := p.req.Budget.Take(size); err != nil {
		return nil, err
	}
	arr := array.MakeArrayOfNull(p.req.Mem, dt, int(n))
	defer arr.Release()
	d := arr.Data()
	d.Retain()
	return d, nil
}

// approxWidth estimates the bytes a value of dt takes, for budgets
// (saturating rather than overflowing).
func approxWidth(dt arrow.DataType) uint64 {
	switch t := dt.(type) {
	case *arrow.FixedSizeListType:
		w, ok := encoding.Mul(uint64(t.Len()), approxWidth(t.Elem()))
		if !ok {
			return math.MaxUint32
		}
		return min(w, math.MaxUint32)
	case arrow.FixedWidthDataType:
		return uint64(t.BitWidth()+7) / 8
	case *arrow.StructType:
		var w uint64
		for _, f := range t.Fields() {
			w = min(w+approxWidth(f.Type), math.MaxUint32)
		}
		return w
	}
	return 8
}

// withValidity returns d with validity (a bitmap of d's length, 1 =
// valid) as its validity, combined with any it has.
func withValidity(d arrow.ArrayData, validity []byte) arrow.ArrayData {
	n := d.Len()
	if need := int(bitmapBytes(uint64(n))); len(validity) < need {
		// A validity decoded from an unusual encoding may come short: the
		// missing bits are nulls.
		validity = append(slices.Clip(validity), make([]byte, need-len(validity))...)
	}
	bits := validity
	if old := d.Buffers()[0]; old != nil && old.Len() > 0 {
		bits = make([]byte, len(validity))
		ob := old.Bytes()
		for i := range bits {
			if i < len(ob) {
				bits[i] = validity[i] & ob[i]
			}
		}
	}
	buffers := append([]*memory.Buffer{memory.NewBufferBytes(bits)}, d.Buffers()[1:]...)
	return array.NewData(d.DataType(), n, buffers, d.Children(), array.UnknownNullCount, 0)
}

// bufferBytes returns the bytes of buffer i of d, or nil.
func bufferBytes(d arrow.ArrayData, i int) []byte {
	if bs := d.Buffers(); i < len(bs) && bs[i] != nil {
		return bs[i].Bytes()
	}
	return nil
}

// bitWidth returns the width in bits of a value of a fixed-width type, or
// 0 for other types (dictionaries and nulls included).
func bitWidth(dt arrow.DataType) uint64 {
	if fw, ok := dt.(arrow.FixedWidthDataType); ok && dt.ID() != arrow.NULL && dt.ID() != arrow.DICTIONARY {
		return uint64(fw.BitWidth())
	}
	return 0
}

func (p *page) flat(f *enc20pb.Flat, dt arrow.DataType, spans []span) (arrow.ArrayData, error) {
	bits := f.GetBitsPerValue()
	if want := bitWidth(dt); want == 0 || bits != want {
		return nil, encoding.Corruptf("a flat buffer of %d-bit values for %s", bits, dt)
	}
	buf, err := p.buffer(f.GetBuffer())
	if err != nil {
		return nil, err
	}
	n := total(spans)
	scheme := f.GetCompression().GetScheme()
	var whole []byte // the decompressed buffer, when compressed
	if scheme != "" && scheme != "none" {
		if whole, err = p.whole(buf, scheme); err != nil {
			return nil, err
		}
	}
	if bits == 1 {
		return p.flatBits(buf, whole, spans, dt, n)
	}
	if bits%8 != 0 {
		return nil, encoding.Unsupportedf("flat values of %d bits", bits)
	}
	w := bits / 8
	// Every span ends within the page, and pages hold at most 2^64 bits of
	// values: the products below cannot overflow once checked.
	last := spans[len(spans)-1].end
	size, ok := encoding.Mul(last, w)
	if !ok {
		return nil, encoding.Corruptf("a flat page of %d %d-byte values overflows", last, w)
	}
	var out []byte
	if whole != nil {
		if size > uint64(len(whole)) {
			return nil, encoding.Corruptf("a flat buffer decompresses to %d bytes, fewer than its %d values need", len(whole), last)
		}
		if len(spans) == 1 {
			out = whole[spans[0].start*w : spans[0].end*w]
		} else {
			if out, err = p.alloc(n * w); err != nil {
				return nil, err
			}
			at := uint64(0)
			for _, s := range spans {
				at += uint64(copy(out[at:], whole[s.start*w:s.end*w]))
			}
		}
	} else {
		if size > buf.Length {
			return nil, encoding.Corruptf("a flat buffer of %d bytes is too small for %d %d-byte values", buf.Length, last, w)
		}
		ranges := make([]encoding.Range, len(spans))
		for i, s := range spans {
			ranges[i] = encoding.Range{Offset: s.start * w, Length: (s.end - s.start) * w}
		}
		parts, err := p.read(buf, ranges)
		if err != nil {
			return nil, err
		}
		if len(parts) == 1 {
			out = parts[0]
		} else {
			if out, err = p.alloc(n * w); err != nil {
				return nil, err
			}
			at := 0
			for _, part := range parts {
				at += copy(out[at:], part)
			}
		}
	}
	return array.NewData(dt, int(n), []*memory.Buffer{nil, memory.NewBufferBytes(out)}, nil, 0, 0), nil
}

// flatBits decodes a bitmap (booleans, or validity).
func (p *page) flatBits(buf encoding.Range, whole []byte, spans []span, dt arrow.DataType, n uint64) (arrow.ArrayData, error) {
	last := spans[len(spans)-1].end
	need := bitmapBytes(last)
	out, err := p.alloc(bitmapBytes(n))
	if err != nil {
		return nil, err
	}
	if whole != nil {
		if need > uint64(len(whole)) {
			return nil, encoding.Corruptf("a bitmap decompresses to %d bytes, fewer than its %d bits need", len(whole), last)
		}
		at := 0
		for _, s := range spans {
			copyBits(out, at, whole, int(s.start), int(s.end-s.start))
			at += int(s.end - s.start)
		}
	} else {
		if need > buf.Length {
			return nil, encoding.Corruptf("a bitmap of %d bytes is too small for %d bits", buf.Length, last)
		}
		ranges := make([]encoding.Range, len(spans))
		for i, s := range spans {
			first := s.start / 8
			ranges[i] = encoding.Range{Offset: first, Length: bitmapBytes(s.end) - first}
		}
		parts, err := p.read(buf, ranges)
		if err != nil {
			return nil, err
		}
		at := 0
		for i, s := range spans {
			copyBits(out, at, parts[i], int(s.start%8), int(s.end-s.start))
			at += int(s.end - s.start)
		}
	}
	return array.NewData(dt, int(n), []*memory.Buffer{nil, memory.NewBufferBytes(out)}, nil, 0, 0), nil
}

func (p *page) fixedSizeList(f *enc20pb.FixedSizeList, dt arrow.DataType, spans []span, depth int) (arrow.ArrayData, error) {
	t, ok := dt.(*arrow.FixedSizeListType)
	if !ok || uint64(t.Len()) != uint64(f.GetDimension()) {
		return nil, encoding.Corruptf("a fixed-size list of %d items for %s", f.GetDimension(), dt)
	}
	if f.GetHasValidity() {
		return nil, encoding.Unsupportedf("fixed-size lists with validity inside the list encoding")
	}
	dim := uint64(t.Len())
	items := make([]span, len(spans))
	for i, s := range spans {
		end, ok := encoding.Mul(s.end, dim)
		if !ok {
			return nil, encoding.Corruptf("a fixed-size list page of %d lists of %d overflows", s.end, dim)
		}
		items[i] = span{s.start * dim, end}
	}
	child, err := p.decode(f.GetItems(), t.Elem(), items, depth+1)
	if err != nil {
		return nil, err
	}
	defer child.Release()
	return array.NewData(dt, int(total(spans)), []*memory.Buffer{nil}, []arrow.ArrayData{child}, 0, 0), nil
}

// binaryOffsets returns the Arrow offsets type of a binary-like type: 4 or
// 8 bytes, or 0 for another type.
func binaryOffsets(dt arrow.DataType) int {
	switch dt.ID() {
	case arrow.STRING, arrow.BINARY:
		return 4
	case arrow.LARGE_STRING, arrow.LARGE_BINARY:
		return 8
	}
	return 0
}

// u64s returns the values of uint64 data.
func u64s(d arrow.ArrayData) []uint64 {
	return array.NewUint64Data(d).Uint64Values()
}

func (p *page) binary(b *enc20pb.Binary, dt arrow.DataType, spans []span, depth int) (arrow.ArrayData, error) {
	width := binaryOffsets(dt)
	if width == 0 {
		return nil, encoding.Corruptf("a binary encoding for %s", dt)
	}
	// Each value's entry is the end of its bytes (plus null_adjustment when
	// it is null): reading values [a, b) takes the entries [a-1, b).
	entries := make([]span, len(spans))
	for i, s := range spans {
		entries[i] = s
		if s.start > 0 {
			entries[i].start--
		}
	}
	idx, err := p.decode(b.GetIndices(), arrow.PrimitiveTypes.Uint64, entries, depth+1)
	if err != nil {
		return nil, err
	}
	defer idx.Release()
	ends := u64s(idx)
	adj := b.GetNullAdjustment()
	norm := func(v uint64) (uint64, bool) {
		if v >= adj {
			return v - adj, false
		}
		return v, true
	}
	n := total(spans)
	offsets, err := p.allocN(n+1, uint64(width))
	if err != nil {
		return nil, err
	}
	var validity []byte
	var byteSpans []span
	var at, row uint64 // position in ends; output row
	var cum uint64     // bytes so far
	for _, s := range spans {
		var prev uint64
		if s.start > 0 {
			prev, _ = norm(ends[at])
			at++
		}
		first := prev
		for range s.end - s.start {
			end, valid := norm(ends[at])
			at++
			if end < prev {
				return nil, encoding.Corruptf("binary offsets go backwards (%d after %d)", end, prev)
			}
			cum += end - prev
			prev = end
			row++
			if !valid {
				if validity == nil {
					if validity, err = p.alloc(bitmapBytes(n)); err != nil {
						return nil, err
					}
					for i := uint64(0); i < row-1; i++ {
						setBit(validity, int(i))
					}
				}
			} else if validity != nil {
				setBit(validity, int(row-1))
			}
			if width == 4 {
				if cum > math.MaxInt32 {
					return nil, encoding.Unsupportedf("more than 2 GiB of %s values in one read: read fewer rows, or use a large type", dt)
				}
				binary.LittleEndian.PutUint32(offsets[4*row:], uint32(cum))
			} else {
				binary.LittleEndian.PutUint64(offsets[8*row:], cum)
			}
		}
		if prev > first {
			byteSpans = append(byteSpans, span{first, prev})
		}
	}
	var data []byte
	if len(byteSpans) > 0 {
		bytesData, err := p.decode(b.GetBytes(), arrow.PrimitiveTypes.Uint8, byteSpans, depth+1)
		if err != nil {
			return nil, err
		}
		data = bufferBytes(bytesData, 1)
		bytesData.Release()
	}
	if uint64(len(data)) < cum {
		return nil, encoding.Corruptf("binary values need %d bytes, their buffer decodes to %d", cum, len(data))
	}
	vbuf, nulls := validityBuffer(validity)
	return array.NewData(dt, int(n), []*memory.Buffer{vbuf, memory.NewBufferBytes(offsets), memory.NewBufferBytes(data)}, nil, nulls, 0), nil
}

// leafBits returns the bit width of the flat values at the bottom of a
// chain of no-null wrappers, or 0.
func leafBits(enc *enc20pb.ArrayEncoding) uint64 {
	for range maxEncodingDepth {
		switch e := enc.GetArrayEncoding().(type) {
		case *enc20pb.ArrayEncoding_Flat:
			return e.Flat.GetBitsPerValue()
		case *enc20pb.ArrayEncoding_Nullable:
			nn, ok := e.Nullable.GetNullability().(*enc20pb.Nullable_NoNulls)
			if !ok {
				return 0
			}
			enc = nn.NoNulls.GetValues()
		default:
			return 0
		}
	}
	return 0
}

// dictionary decodes Lance's dictionary of strings: index 0 is null, index
// k the dictionary's item k-1.
func (p *page) dictionary(d *enc20pb.Dictionary, dt arrow.DataType, spans []span, depth int) (arrow.ArrayData, error) {
	width := binaryOffsets(dt)
	if width == 0 {
		return nil, encoding.Unsupportedf("a dictionary page for %s", dt)
	}
	var indexType arrow.DataType
	switch leafBits(d.GetIndices()) {
	case 8:
		indexType = arrow.PrimitiveTypes.Uint8
	case 16:
		indexType = arrow.PrimitiveTypes.Uint16
	case 32:
		indexType = arrow.PrimitiveTypes.Uint32
	default:
		return nil, encoding.Unsupportedf("dictionary indices that are not 8, 16 or 32-bit flat values")
	}
	idxData, err := p.decode(d.GetIndices(), indexType, spans, depth+1)
	if err != nil {
		return nil, err
	}
	defer idxData.Release()
	numItems := uint64(d.GetNumDictionaryItems())
	var items arrow.ArrayData
	if numItems > 0 {
		if items, err = p.decode(d.GetItems(), dt, []span{{0, numItems}}, depth+1); err != nil {
			return nil, err
		}
		defer items.Release()
	}
	return p.gatherDictionary(idxData, indexType, items, numItems, dt, width, total(spans))
}

// gatherDictionary builds the n values idx points at in items.
func (p *page) gatherDictionary(idx arrow.ArrayData, indexType arrow.DataType, items arrow.ArrayData, numItems uint64, dt arrow.DataType, width int, n uint64) (arrow.ArrayData, error) {
	raw := bufferBytes(idx, 1)
	if uint64(len(raw)) < n*uint64(bitWidth(indexType)/8) {
		return nil, encoding.Corruptf("dictionary indices decode to %d bytes, too few for %d values", len(raw), n)
	}
	index := func(i uint64) uint64 {
		switch indexType.ID() {
		case arrow.UINT8:
			return uint64(raw[i])
		case arrow.UINT16:
			return uint64(binary.LittleEndian.Uint16(raw[2*i:]))
		}
		return uint64(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	var item binaryValues
	if items != nil {
		var err error
		if item, err = binaryOf(items); err != nil {
			return nil, err
		}
	}
	// First pass: check the indices and size the values.
	var size uint64
	anyNull := false
	for i := range n {
		k := index(i)
		if k > numItems {
			return nil, encoding.Corruptf("a dictionary index %d past the %d items", k, numItems)
		}
		if k == 0 || !item.valid(k-1) {
			anyNull = true
			continue
		}
		size += item.end(k-1) - item.start(k-1)
	}
	if width == 4 && size > math.MaxInt32 {
		return nil, encoding.Unsupportedf("more than 2 GiB of %s values in one read: read fewer rows, or use a large type", dt)
	}
	offsets, err := p.allocN(n+1, uint64(width))
	if err != nil {
		return nil, err
	}
	data, err := p.alloc(size)
	if err != nil {
		return nil, err
	}
	var validity []byte
	if anyNull {
		if validity, err = p.alloc(bitmapBytes(n)); err != nil {
			return nil, err
		}
	}
	var at uint64
	for i := range n {
		if k := index(i); k > 0 && item.valid(k-1) {
			at += uint64(copy(data[at:], item.data[item.start(k-1):item.end(k-1)]))
			if validity != nil {
				setBit(validity, int(i))
			}
		}
		if width == 4 {
			binary.LittleEndian.PutUint32(offsets[4*(i+1):], uint32(at))
		} else {
			binary.LittleEndian.PutUint64(offsets[8*(i+1):], at)
		}
	}
	vbuf, nulls := validityBuffer(validity)
	return array.NewData(dt, int(n), []*memory.Buffer{vbuf, memory.NewBufferBytes(offsets), memory.NewBufferBytes(data)}, nil, nulls, 0), nil
}

// binaryValues reads the values of decoded binary-like data (offset 0,
// offsets checked by binary).
type binaryValues struct {
	validity []byte
	offsets  []byte
	width    int
	data     []byte
	n        uint64
}

// binaryOf returns a reader of binary-like data decoded from a page, after
// checking its offsets lie within its data.
func binaryOf(d arrow.ArrayData) (binaryValues, error) {
	v := binaryValues{width: binaryOffsets(d.DataType()), n: uint64(d.Len()), offsets: bufferBytes(d, 1), data: bufferBytes(d, 2)}
	if d.Buffers()[0] != nil && d.NullN() > 0 {
		v.validity = bufferBytes(d, 0)
	}
	if v.width == 0 || d.Offset() != 0 || uint64(len(v.offsets)) < (v.n+1)*uint64(v.width) ||
		(v.validity != nil && uint64(len(v.validity)) < bitmapBytes(v.n)) {
		return binaryValues{}, encoding.Corruptf("dictionary items decode to malformed %s data", d.DataType())
	}
	prev := v.offset(0)
	for i := uint64(1); i <= v.n; i++ {
		o := v.offset(i)
		if o < prev || o > uint64(len(v.data)) {
			return binaryValues{}, encoding.Corruptf("dictionary items have offsets out of order or past their %d bytes", len(v.data))
		}
		prev = o
	}
	return v, nil
}

func (v binaryValues) offset(i uint64) uint64 {
	if v.width == 4 {
		return uint64(binary.LittleEndian.Uint32(v.offsets[4*i:]))
	}
	return binary.LittleEndian.Uint64(v.offsets[8*i:])
}

func (v binaryValues) start(i uint64) uint64 { return v.offset(i) }
func (v binaryValues) end(i uint64) uint64   { return v.offset(i + 1) }

// valid reports whether item i exists and is not null.
func (v binaryValues) valid(i uint64) bool {
	if i >= v.n {
		return false
	}
	return v.validity == nil || getBit(v.validity, int(i))
}

// packedStruct decodes a struct whose fixed-width fields are stored row by
// row in one buffer: each row holds its fields' values back to back, in
// the widths of the fields' flat encodings.
func (p *page) packedStruct(ps *enc20pb.PackedStruct, dt arrow.DataType, spans []span) (arrow.ArrayData, error) {
	t, ok := dt.(*arrow.StructType)
	if !ok || t.NumFields() == 0 {
		return nil, encoding.Corruptf("a packed struct of %d fields for %s", len(ps.GetInner()), dt)
	}
	if t.NumFields() != len(ps.GetInner()) {
		return nil, encoding.Unsupportedf("reading %d of a packed struct's %d fields: project the whole struct", t.NumFields(), len(ps.GetInner()))
	}
	widths := make([]uint64, t.NumFields())
	var row uint64
	for i, inner := range ps.GetInner() {
		bits := leafBits(inner)
		if bits == 0 || bits%8 != 0 || bits != bitWidth(t.Field(i).Type) {
			return nil, encoding.Unsupportedf("a packed struct field of %d bits for %s", bits, t.Field(i).Type)
		}
		widths[i] = bits / 8
		row += bits / 8
	}
	buf, err := p.buffer(ps.GetBuffer())
	if err != nil {
		return nil, err
	}
	if last := spans[len(spans)-1].end; last > buf.Length/row {
		return nil, encoding.Corruptf("a packed struct buffer of %d bytes is too small for %d rows of %d bytes", buf.Length, last, row)
	}
	ranges := make([]encoding.Range, len(spans))
	for i, s := range spans {
		ranges[i] = encoding.Range{Offset: s.start * row, Length: (s.end - s.start) * row}
	}
	parts, err := p.read(buf, ranges)
	if err != nil {
		return nil, err
	}
	n := total(spans)
	children := make([]arrow.ArrayData, len(widths))
	var at uint64 // offset of a field within a row
	for i, w := range widths {
		out, err := p.allocN(n, w)
		if err != nil {
			return nil, err
		}
		var k uint64
		for _, part := range parts {
			for r := uint64(0); r*row < uint64(len(part)); r++ {
				copy(out[k*w:(k+1)*w], part[r*row+at:r*row+at+w])
				k++
			}
		}
		at += w
		children[i] = array.NewData(t.Field(i).Type, int(n), []*memory.Buffer{nil, memory.NewBufferBytes(out)}, nil, 0, 0)
	}
	defer func() {
		for _, c := range children {
			c.Release()
		}
	}()
	return array.NewData(dt, int(n), []*memory.Buffer{nil}, children, 0, 0), nil
}

// fsst decodes strings compressed with FSST (package compression reads
// the symbol table and the codes). A table that says the values are not
// compressed (Lance leaves small pages as they are) passes them through.
func (p *page) fsst(f *enc20pb.Fsst, dt arrow.DataType, spans []span, depth int) (arrow.ArrayData, error) {
	width := binaryOffsets(dt)
	if width == 0 {
		return nil, encoding.Corruptf("FSST for %s", dt)
	}
	table, err := compression.ParseFSST(f.GetSymbolTable())
	if err != nil {
		return nil, err
	}
	inner, err := p.decode(f.GetBinary(), dt, spans, depth+1)
	if err != nil {
		return nil, err
	}
	defer inner.Release()
	if !table.Compressed() {
		inner.Retain()
		return inner, nil
	}
	in, err := binaryOf(inner)
	if err != nil {
		return nil, err
	}
	// First the decoded size, checking every code, then the bytes.
	var size uint64
	for i := range in.n {
		if in.valid(i) {
			n, err := table.Size(in.data[in.start(i):in.end(i)])
			if err != nil {
				return nil, err
			}
			size += uint64(n)
		}
	}
	if width == 4 && size > math.MaxInt32 {
		return nil, encoding.Unsupportedf("more than 2 GiB of %s values in one read: read fewer rows, or use a large type", dt)
	}
	offsets, err := p.allocN(in.n+1, uint64(width))
	if err != nil {
		return nil, err
	}
	out, err := p.alloc(size + compression.Slack)
	if err != nil {
		return nil, err
	}
	at := 0
	for i := range in.n {
		if in.valid(i) {
			at += table.Decode(out[at:], in.data[in.start(i):in.end(i)])
		}
		if width == 4 {
			binary.LittleEndian.PutUint32(offsets[4*(i+1):], uint32(at))
		} else {
			binary.LittleEndian.PutUint64(offsets[8*(i+1):], uint64(at))
		}
	}
	buffers := []*memory.Buffer{inner.Buffers()[0], memory.NewBufferBytes(offsets), memory.NewBufferBytes(out[:size])}
	nulls := 0
	if buffers[0] != nil {
		nulls = array.UnknownNullCount
	}
	return array.NewData(dt, int(in.n), buffers, nil, nulls, 0), nil
}
