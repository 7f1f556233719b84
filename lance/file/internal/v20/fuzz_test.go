package v20

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/protobuf/proto"

	"github.com/lancens/lancens/lance/file/internal/encoding"
	"github.com/lancens/lancens/lance/internal/pb/enc20pb"
	"github.com/lancens/lancens/lance/schema"
)

// memFile is a file in memory.
type memFile []byte

func (m memFile) ReadRanges(_ context.Context, rs []encoding.Range) ([][]byte, error) {
	out := make([][]byte, len(rs))
	for i, r := range rs {
		if r.Offset > uint64(len(m)) || r.Length > uint64(len(m))-r.Offset {
			return nil, encoding.Corruptf("a read past the end")
		}
		out[i] = m[r.Offset : r.Offset+r.Length]
	}
	return out, nil
}

// fuzzBudget bounds what one fuzzed decode may allocate.
const fuzzBudget = 64 << 20

// fuzzTypes are the Arrow types fuzzed pages are decoded as.
var fuzzTypes = []arrow.DataType{
	arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Uint64, arrow.FixedWidthTypes.Boolean, arrow.PrimitiveTypes.Uint8,
	arrow.BinaryTypes.String, arrow.BinaryTypes.LargeBinary, arrow.FixedWidthTypes.Float16,
	arrow.FixedSizeListOf(3, arrow.PrimitiveTypes.Float32), arrow.FixedSizeListOf(2, arrow.BinaryTypes.String),
}

// decodePage decodes spans [start, end) of a page of length values with
// encoding enc and buffers bufs as type dt, and fails t on a panic, on an
// error that is not ErrCorrupt, ErrUnsupported or ErrBudget, or on a
// result of the wrong type or length.
func decodePage(t *testing.T, enc *enc20pb.ArrayEncoding, dt arrow.DataType, bufs [][]byte, length, start, end uint64) {
	t.Helper()
	var file memFile
	pg := encoding.Page{Length: length, EncodingType: arrayEncodingURL}
	for _, b := range bufs {
		pg.Buffers = append(pg.Buffers, encoding.Range{Offset: uint64(len(file)), Length: uint64(len(b))})
		file = append(file, b...)
	}
	raw, err := proto.Marshal(enc)
	if err != nil {
		return
	}
	pg.Encoding = raw
	if length == 0 || start >= end || end > length {
		return
	}
	col := &encoding.Column{Pages: []encoding.Page{pg}}
	req := &encoding.Request{
		Field:   &schema.Field{Name: "f", ID: 0},
		Type:    dt,
		Columns: map[int32]*encoding.Column{0: col},
		Rows:    length,
		Ranges:  []encoding.RowRange{{Start: start, End: end}},
		File:    file,
		Budget:  encoding.NewBudget(fuzzBudget),
		Mem:     memory.DefaultAllocator,
	}
	lt, err := schema.LogicalType(dt)
	if err != nil {
		t.Fatal(err)
	}
	req.Field.LogicalType = lt
	arr, err := Decoder{}.Decode(context.Background(), req)
	if err != nil {
		if !errors.Is(err, encoding.ErrCorrupt) && !errors.Is(err, encoding.ErrUnsupported) && !errors.Is(err, encoding.ErrBudget) {
			t.Fatalf("an error of no known kind: %v", err)
		}
		return
	}
	defer arr.Release()
	if !arrow.TypeEqual(arr.DataType(), dt) || uint64(arr.Len()) != end-start {
		t.Fatalf("decoded %d values of %s, want %d of %s", arr.Len(), arr.DataType(), end-start, dt)
	}
	checkSound(t, arr)
}

// checkSound fails t unless every value of arr can be read: Arrow's own
// structural validation where it has one (not UTF-8 validity: like Lance,
// the decoder passes strings through unchecked), then every value
// formatted.
func checkSound(t *testing.T, arr arrow.Array) {
	t.Helper()
	if v, ok := arr.(interface{ Validate() error }); ok {
		if err := v.Validate(); err != nil {
			t.Fatalf("the decoded array is malformed: %v", err)
		}
	}
	for i := 0; i < arr.Len(); i++ {
		_ = arr.ValueStr(i)
	}
}

// seedPages returns pages the writer encodes for sample values of each
// fuzzed type, as seeds: encoding, buffers, type index, length.
func seedPages(t testing.TB) []struct {
	enc  []byte
	bufs [][]byte
	typ  int
	n    uint64
} {
	var out []struct {
		enc  []byte
		bufs [][]byte
		typ  int
		n    uint64
	}
	samples := []string{
		`[1, null, 3, 4]`, `[1, 2, 18446744073709551615]`, `[true, null, false, true, true]`, `[1, 2, null]`,
		`["a", null, "", "ccc"]`, `["AAEC", null, ""]`, `[1.5, null, 2]`,
		`[[1, 2, 3], null, [null, 4, 5]]`, `[["a", "b"], null, ["", null]]`,
	}
	for i, dt := range fuzzTypes {
		arr, _, err := array.FromJSON(memory.DefaultAllocator, dt, strings.NewReader(samples[i]))
		if err != nil {
			t.Fatalf("sample %d: %v", i, err)
		}
		v, err := newValues(dt, nil)
		if err != nil {
			t.Fatal(err)
		}
		v.append(arr)
		var bufs [][]byte
		enc := v.encode(&bufs)
		raw, err := proto.Marshal(enc)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, struct {
			enc  []byte
			bufs [][]byte
			typ  int
			n    uint64
		}{raw, bufs, i, uint64(arr.Len())})
	}
	return out
}

func bufAt(bufs [][]byte, i int) []byte {
	if i < len(bufs) {
		return bufs[i]
	}
	return nil
}

// FuzzPage decodes pages whose encoding trees are fuzzed whole, starting
// from the trees the writer makes for every type.
func FuzzPage(f *testing.F) {
	for _, s := range seedPages(f) {
		f.Add(s.enc, bufAt(s.bufs, 0), bufAt(s.bufs, 1), bufAt(s.bufs, 2), uint8(s.typ), uint16(s.n), uint16(0), uint16(s.n))
	}
	f.Fuzz(func(t *testing.T, encBytes, b0, b1, b2 []byte, typ uint8, length, start, end uint16) {
		var enc enc20pb.ArrayEncoding
		if proto.Unmarshal(encBytes, &enc) != nil {
			return
		}
		decodePage(t, &enc, fuzzTypes[int(typ)%len(fuzzTypes)], [][]byte{b0, b1, b2}, uint64(length), uint64(start), uint64(end))
	})
}

// FuzzFlat decodes flat values and bitmaps, plain or compressed.
func FuzzFlat(f *testing.F) {
	f.Add(uint64(32), uint8(0), []byte{1, 0, 0, 0, 2, 0, 0, 0}, uint8(0), uint16(2), uint16(0), uint16(2))
	f.Add(uint64(1), uint8(2), []byte{0xff}, uint8(0), uint16(8), uint16(3), uint16(7))
	f.Add(uint64(8), uint8(3), []byte{4, 0, 0, 0, 0x40, 1, 2, 3, 4}, uint8(2), uint16(4), uint16(0), uint16(4))
	f.Add(uint64(8), uint8(3), []byte{0x28, 0xb5, 0x2f, 0xfd, 0, 0x58, 0x11, 0, 0, 1, 2, 3}, uint8(1), uint16(3), uint16(1), uint16(3))
	f.Fuzz(func(t *testing.T, bits uint64, typ uint8, buf []byte, scheme uint8, length, start, end uint16) {
		enc := flat(bits, 0)
		if s := []string{"", "zstd", "lz4", "none", "brotli"}[int(scheme)%5]; s != "" {
			enc.GetFlat().Compression = &enc20pb.Compression{Scheme: s}
		}
		decodePage(t, enc, fuzzTypes[int(typ)%len(fuzzTypes)], [][]byte{buf}, uint64(length), uint64(start), uint64(end))
	})
}

// FuzzNullable decodes validity bitmaps over values.
func FuzzNullable(f *testing.F) {
	f.Add(uint8(0), []byte{0x0d}, []byte{1, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0}, uint16(4), uint16(0), uint16(4))
	f.Add(uint8(1), []byte{}, []byte{}, uint16(5), uint16(1), uint16(5))
	f.Add(uint8(2), []byte{0xff}, []byte{7, 0, 0, 0}, uint16(1), uint16(0), uint16(1))
	f.Fuzz(func(t *testing.T, kind uint8, validity, values []byte, length, start, end uint16) {
		n := &enc20pb.Nullable{}
		switch kind % 3 {
		case 0:
			n.Nullability = &enc20pb.Nullable_SomeNulls{SomeNulls: &enc20pb.Nullable_SomeNull{Validity: flat(1, 0), Values: flat(32, 1)}}
		case 1:
			n.Nullability = &enc20pb.Nullable_AllNulls{AllNulls: &enc20pb.Nullable_AllNull{}}
		default:
			n.Nullability = &enc20pb.Nullable_NoNulls{NoNulls: &enc20pb.Nullable_NoNull{Values: flat(32, 1)}}
		}
		enc := &enc20pb.ArrayEncoding{ArrayEncoding: &enc20pb.ArrayEncoding_Nullable{Nullable: n}}
		decodePage(t, enc, arrow.PrimitiveTypes.Int32, [][]byte{validity, values}, uint64(length), uint64(start), uint64(end))
	})
}

// FuzzFixedSizeList decodes fixed-size lists of values.
func FuzzFixedSizeList(f *testing.F) {
	f.Add(uint32(3), false, []byte{0, 0, 128, 63, 0, 0, 0, 64, 0, 0, 64, 64}, uint16(1), uint16(0), uint16(1))
	f.Fuzz(func(t *testing.T, dim uint32, validity bool, items []byte, length, start, end uint16) {
		enc := &enc20pb.ArrayEncoding{ArrayEncoding: &enc20pb.ArrayEncoding_FixedSizeList{FixedSizeList: &enc20pb.FixedSizeList{
			Dimension: dim, HasValidity: validity, Items: noNulls(flat(32, 0)),
		}}}
		decodePage(t, enc, arrow.FixedSizeListOf(3, arrow.PrimitiveTypes.Float32), [][]byte{items}, uint64(length), uint64(start), uint64(end))
	})
}

// FuzzBinary decodes binary offsets (with null adjustment) and bytes.
func FuzzBinary(f *testing.F) {
	ends := func(v ...uint64) []byte {
		var b []byte
		for _, x := range v {
			b = append(b, byte(x), byte(x>>8), byte(x>>16), byte(x>>24), byte(x>>32), byte(x>>40), byte(x>>48), byte(x>>56))
		}
		return b
	}
	f.Add(ends(7, 3, 6, 13, 13), []byte("foofoo"), uint64(7), false, uint16(5), uint16(1), uint16(4))
	f.Add(ends(1), []byte{}, uint64(1), true, uint16(1), uint16(0), uint16(1))
	f.Fuzz(func(t *testing.T, idx, data []byte, adj uint64, large bool, length, start, end uint16) {
		enc := &enc20pb.ArrayEncoding{ArrayEncoding: &enc20pb.ArrayEncoding_Binary{Binary: &enc20pb.Binary{
			Indices: noNulls(flat(64, 0)), Bytes: flat(8, 1), NullAdjustment: adj,
		}}}
		dt := arrow.DataType(arrow.BinaryTypes.String)
		if large {
			dt = arrow.BinaryTypes.LargeBinary
		}
		decodePage(t, enc, dt, [][]byte{idx, data}, uint64(length), uint64(start), uint64(end))
	})
}

// FuzzDictionary decodes string dictionaries.
func FuzzDictionary(f *testing.F) {
	f.Add([]byte{0, 1, 2, 1}, []byte{1, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0}, []byte("abc"), uint32(2), uint8(8), uint16(4), uint16(0), uint16(4))
	f.Fuzz(func(t *testing.T, indices, itemEnds, itemBytes []byte, items uint32, bits uint8, length, start, end uint16) {
		enc := &enc20pb.ArrayEncoding{ArrayEncoding: &enc20pb.ArrayEncoding_Dictionary{Dictionary: &enc20pb.Dictionary{
			Indices: noNulls(flat(uint64(bits), 0)),
			Items: &enc20pb.ArrayEncoding{ArrayEncoding: &enc20pb.ArrayEncoding_Binary{Binary: &enc20pb.Binary{
				Indices: noNulls(flat(64, 1)), Bytes: flat(8, 2), NullAdjustment: uint64(len(itemBytes)) + 1,
			}}},
			NumDictionaryItems: items,
		}}}
		decodePage(t, enc, arrow.BinaryTypes.String, [][]byte{indices, itemEnds, itemBytes}, uint64(length), uint64(start), uint64(end))
	})
}

// FuzzList decodes a list field: a column of list offsets over a column
// of items, two pages each.
func FuzzList(f *testing.F) {
	u64s := func(v ...uint64) []byte {
		var b []byte
		for _, x := range v {
			for k := range 8 {
				b = append(b, byte(x>>(8*k)))
			}
		}
		return b
	}
	f.Add(u64s(2, 9, 2), uint64(7), uint64(2), u64s(1, 1), uint64(3), uint64(1), []byte{1, 0, 2, 0, 3, 0}, uint16(3), uint16(0), uint16(4))
	f.Fuzz(func(t *testing.T, off1 []byte, adj1, items1 uint64, off2 []byte, adj2, items2 uint64, values []byte, itemRows uint16, start, end uint16) {
		listPage := func(off []byte, adj, items uint64) encoding.Page {
			enc := &enc20pb.ArrayEncoding{ArrayEncoding: &enc20pb.ArrayEncoding_List{List: &enc20pb.List{
				Offsets: noNulls(flat(64, 0)), NullOffsetAdjustment: adj, NumItems: items,
			}}}
			raw, _ := proto.Marshal(enc)
			return encoding.Page{Length: uint64(len(off) / 8), EncodingType: arrayEncodingURL, Encoding: raw}
		}
		var file memFile
		place := func(p *encoding.Page, b []byte) {
			p.Buffers = []encoding.Range{{Offset: uint64(len(file)), Length: uint64(len(b))}}
			file = append(file, b...)
		}
		p1, p2 := listPage(off1, adj1, items1), listPage(off2, adj2, items2)
		place(&p1, off1)
		place(&p2, off2)
		p2.First = p1.Length
		itemEnc, _ := proto.Marshal(noNulls(flat(16, 0)))
		ip := encoding.Page{Length: uint64(itemRows), EncodingType: arrayEncodingURL, Encoding: itemEnc}
		place(&ip, values)
		rows := p1.Length + p2.Length
		if start >= end || uint64(end) > rows {
			return
		}
		item := &schema.Field{Name: "item", ID: 1, LogicalType: "int16", Nullable: true}
		field := &schema.Field{Name: "l", ID: 0, LogicalType: "list", Nullable: true, Children: []*schema.Field{item}}
		dt := arrow.ListOf(arrow.PrimitiveTypes.Int16)
		req := &encoding.Request{
			Field: field, Type: dt,
			Columns: map[int32]*encoding.Column{0: {Pages: []encoding.Page{p1, p2}}, 1: {Index: 1, Pages: []encoding.Page{ip}}},
			Rows:    rows, Ranges: []encoding.RowRange{{Start: uint64(start), End: uint64(end)}},
			File: file, Budget: encoding.NewBudget(fuzzBudget), Mem: memory.DefaultAllocator,
		}
		arr, err := Decoder{}.Decode(context.Background(), req)
		if err != nil {
			if !errors.Is(err, encoding.ErrCorrupt) && !errors.Is(err, encoding.ErrUnsupported) && !errors.Is(err, encoding.ErrBudget) {
				t.Fatalf("an error of no known kind: %v", err)
			}
			return
		}
		defer arr.Release()
		if arr.Len() != int(end-start) {
			t.Fatalf("decoded %d lists, want %d", arr.Len(), end-start)
		}
		checkSound(t, arr)
	})
}

// FuzzFSST decodes FSST-compressed strings with fuzzed symbol tables.
func FuzzFSST(f *testing.F) {
	table := make([]byte, 8+256*9) // room for 256 symbols, as Lance pads it

	copy(table, []byte{2, 0, 0, 1, 'T', 'S', 'S', 'F'}) // 2 symbols, compressed
	copy(table[8:], "hello\x00\x00\x00world\x00\x00\x00")
	table[8+16], table[8+17] = 5, 5
	ends := []byte{3, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0}
	f.Add(table, ends, []byte{0, 255, ' ', 1, 1}, uint16(2), uint16(0), uint16(2))
	f.Fuzz(func(t *testing.T, table, idx, data []byte, length, start, end uint16) {
		enc := &enc20pb.ArrayEncoding{ArrayEncoding: &enc20pb.ArrayEncoding_Fsst{Fsst: &enc20pb.Fsst{
			SymbolTable: table,
			Binary: &enc20pb.ArrayEncoding{ArrayEncoding: &enc20pb.ArrayEncoding_Binary{Binary: &enc20pb.Binary{
				Indices: noNulls(flat(64, 0)), Bytes: flat(8, 1), NullAdjustment: uint64(len(data)) + 1,
			}}},
		}}}
		decodePage(t, enc, arrow.BinaryTypes.String, [][]byte{idx, data}, uint64(length), uint64(start), uint64(end))
	})
}

// TestFSSTDecodes decodes the seed of FuzzFSST: codes 0 and 1 are
// "hello" and "world", 255 escapes a space.
func TestFSSTDecodes(t *testing.T) {
	table := make([]byte, 8+256*9) // room for 256 symbols, as Lance pads it

	copy(table, []byte{2, 0, 0, 1, 'T', 'S', 'S', 'F'})
	copy(table[8:], "hello\x00\x00\x00world\x00\x00\x00")
	table[8+16], table[8+17] = 5, 5
	p := &page{ctx: context.Background(), req: &encoding.Request{Budget: encoding.NewBudget(1 << 20), Mem: memory.DefaultAllocator}}
	file := memFile(append([]byte{3, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0}, 0, 255, ' ', 1, 1))
	p.req.File = file
	p.info = &encoding.Page{Buffers: []encoding.Range{{Offset: 0, Length: 16}, {Offset: 16, Length: 5}}, Length: 2}
	enc := &enc20pb.Fsst{SymbolTable: table, Binary: &enc20pb.ArrayEncoding{ArrayEncoding: &enc20pb.ArrayEncoding_Binary{Binary: &enc20pb.Binary{
		Indices: noNulls(flat(64, 0)), Bytes: flat(8, 1), NullAdjustment: 6,
	}}}}
	d, err := p.fsst(enc, arrow.BinaryTypes.String, []span{{0, 2}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := array.NewStringData(d)
	if got.Value(0) != "hello " || got.Value(1) != "worldworld" {
		t.Errorf("decoded %q, %q", got.Value(0), got.Value(1))
	}
}
