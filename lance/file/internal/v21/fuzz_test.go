package v21

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/protobuf/proto"

	"github.com/lancens/lancens/lance/file/internal/encoding"
	"github.com/lancens/lancens/lance/internal/pb/enc21pb"
	"github.com/lancens/lancens/lance/schema"
)

// memFile is an encoding.File over bytes in memory.
type memFile []byte

func (m memFile) ReadRanges(_ context.Context, ranges []encoding.Range) ([][]byte, error) {
	out := make([][]byte, len(ranges))
	for i, r := range ranges {
		if r.Offset > uint64(len(m)) || r.Length > uint64(len(m))-r.Offset {
			return nil, corrupt("a read of %d bytes at %d past %d", r.Length, r.Offset, len(m))
		}
		out[i] = m[r.Offset : r.Offset+r.Length : r.Offset+r.Length]
	}
	return out, nil
}

// fuzzTypes are the field types a fuzzed page is read as: one leaf each,
// so that one page is the whole field.
var fuzzTypes = []arrow.DataType{
	arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64,
	arrow.FixedWidthTypes.Float16, arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Float64, arrow.FixedWidthTypes.Boolean,
	arrow.BinaryTypes.String, arrow.BinaryTypes.LargeBinary,
	arrow.FixedSizeListOf(4, arrow.PrimitiveTypes.Float32), arrow.FixedSizeListOf(16, arrow.PrimitiveTypes.Uint8),
	arrow.ListOf(arrow.PrimitiveTypes.Int32), arrow.LargeListOf(arrow.BinaryTypes.String),
	arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int64, Nullable: true}),
	arrow.ListOf(arrow.ListOf(arrow.PrimitiveTypes.Int64)),
	arrow.ListOf(arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int32, Nullable: true})),
	arrow.StructOf(arrow.Field{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Float64), Nullable: true}),
	arrow.FixedSizeListOf(1536, arrow.PrimitiveTypes.Float32), arrow.FixedSizeListOf(512, arrow.PrimitiveTypes.Float32),
	arrow.PrimitiveTypes.Uint8, arrow.PrimitiveTypes.Uint16, arrow.PrimitiveTypes.Uint32, arrow.PrimitiveTypes.Uint64,
	arrow.FixedSizeListOf(8, arrow.FixedWidthTypes.Float16), arrow.BinaryTypes.Binary, arrow.BinaryTypes.LargeString,
	arrow.ListOf(arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Float32)),
	arrow.FixedWidthTypes.Date32, &arrow.TimestampType{Unit: arrow.Second}, &arrow.TimestampType{Unit: arrow.Microsecond},
	&arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}, &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"},
	&arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "Europe/Paris"}, &arrow.TimestampType{Unit: arrow.Second, TimeZone: "America/New_York"},
	arrow.LargeListOf(arrow.PrimitiveTypes.Float64), arrow.ListOf(arrow.BinaryTypes.String),
	arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true}),
}

// fuzzPage is a page as a fuzz input: the name of its type (one of
// fuzzTypes; another name picks one by its length), the row count, the
// layout message and the buffers, each after a u32 length. Seeds are
// written by lance/file's TestWriteFuzzSeeds21 from the SDK's files.
type fuzzPage struct {
	typ     string
	rows    uint32
	layout  []byte
	buffers [][]byte
}

func unmarshalFuzzPage(in []byte) (fuzzPage, bool) {
	var p fuzzPage
	if len(in) < 1 || len(in) < 9+int(in[0]) {
		return p, false
	}
	p.typ, in = string(in[1:1+int(in[0])]), in[1+int(in[0]):]
	p.rows = binary.LittleEndian.Uint32(in)
	n := binary.LittleEndian.Uint32(in[4:])
	in = in[8:]
	if uint64(n) > uint64(len(in)) {
		return p, false
	}
	p.layout, in = in[:n], in[n:]
	for len(in) >= 4 && len(p.buffers) < 8 {
		n := binary.LittleEndian.Uint32(in)
		in = in[4:]
		if uint64(n) > uint64(len(in)) {
			return p, false
		}
		p.buffers = append(p.buffers, in[:n])
		in = in[n:]
	}
	return p, true
}

// fieldFor returns a schema field of type dt, ids from 0 in pre-order,
// and the id of its leaf.
func fieldFor(name string, dt arrow.DataType) (*schema.Field, int32) {
	s, err := schema.FromArrow(arrow.NewSchema([]arrow.Field{{Name: name, Type: dt, Nullable: true}}, nil))
	if err != nil {
		panic(err)
	}
	if _, err := s.AssignIDs(0); err != nil {
		panic(err)
	}
	f := s.Fields[0]
	leaf := f
	for !leaf.IsLeaf() {
		leaf = leaf.Children[0]
	}
	return f, leaf.ID
}

// decodeFuzzPage reads a fuzzed page as its type: whole, then a few row
// ranges. It returns the first error.
func decodeFuzzPage(p fuzzPage, budget uint64) error {
	dt := fuzzTypes[len(p.typ)%len(fuzzTypes)]
	for _, t := range fuzzTypes {
		if t.String() == p.typ {
			dt = t
		}
	}
	f, leafID := fieldFor("f", dt)
	var file []byte
	pg := encoding.Page{Length: uint64(p.rows), EncodingType: pageLayoutType, Encoding: p.layout}
	for _, b := range p.buffers {
		pg.Buffers = append(pg.Buffers, encoding.Range{Offset: uint64(len(file)), Length: uint64(len(b))})
		file = append(file, b...)
	}
	if p.rows == 0 {
		return nil
	}
	rows := uint64(p.rows)
	for _, ranges := range [][]encoding.RowRange{
		{{Start: 0, End: rows}},
		{{Start: rows / 2, End: rows}},
		{{Start: 0, End: 1}, {Start: rows / 3, End: rows/3 + 1}, {Start: rows - 1, End: rows}},
	} {
		if ranges[0].End > rows || (len(ranges) > 1 && (ranges[1].Start < ranges[0].End || ranges[2].Start < ranges[1].End)) {
			continue
		}
		col := &encoding.Column{Pages: []encoding.Page{pg}}
		req := &encoding.Request{
			Field: f, Type: dt, Columns: map[int32]*encoding.Column{leafID: col}, Rows: rows,
			Ranges: ranges, File: memFile(file), Budget: encoding.NewBudget(budget), Mem: memory.DefaultAllocator,
		}
		arr, err := Decoder{}.Decode(context.Background(), req)
		if err != nil {
			return err
		}
		var want uint64
		for _, r := range ranges {
			want += r.End - r.Start
		}
		if uint64(arr.Len()) != want || !arrow.TypeEqual(arr.DataType(), dt) {
			panic("decoded the wrong number of rows or the wrong type")
		}
		arr.Release()
	}
	return nil
}

// fuzzBudget is what a fuzzed page may allocate: enough for every seed,
// small enough that the fuzzer stays fast.
const fuzzBudget = 16 << 20

// fuzzPageKind runs a fuzz target over pages of one layout kind (0 for
// any): inputs of another kind are skipped, so each target explores its
// own decoder.
func fuzzPageKind(f *testing.F, kind func(*enc21pb.PageLayout) bool) {
	f.Fuzz(func(t *testing.T, in []byte) {
		p, ok := unmarshalFuzzPage(in)
		if !ok {
			return
		}
		var pl enc21pb.PageLayout
		if proto.Unmarshal(p.layout, &pl) != nil || (kind != nil && !kind(&pl)) {
			return
		}
		err := decodeFuzzPage(p, fuzzBudget)
		if err != nil && !errors.Is(err, encoding.ErrCorrupt) && !errors.Is(err, encoding.ErrUnsupported) && !errors.Is(err, encoding.ErrBudget) {
			t.Fatalf("an error that is not ErrCorrupt, ErrUnsupported or ErrBudget: %v", err)
		}
	})
}

// FuzzMiniBlock decodes mini-block pages: chunk metadata and headers,
// levels, values, dictionaries and the repetition index.
func FuzzMiniBlock(f *testing.F) {
	fuzzPageKind(f, func(l *enc21pb.PageLayout) bool { return l.GetMiniBlockLayout() != nil })
}

// FuzzFullZip decodes full-zip pages: control words, lengths, the
// repetition index, per-value compression.
func FuzzFullZip(f *testing.F) {
	fuzzPageKind(f, func(l *enc21pb.PageLayout) bool { return l.GetFullZipLayout() != nil })
}

// FuzzConstant decodes constant and all-null pages: inline values, value
// buffers, raw and compressed levels.
func FuzzConstant(f *testing.F) {
	fuzzPageKind(f, func(l *enc21pb.PageLayout) bool { return l.GetConstantLayout() != nil })
}

// FuzzBitUnpack unpacks inline and out-of-line bit-packed buffers of
// every word size and width.
func FuzzBitUnpack(f *testing.F) {
	f.Add(byte(0), byte(3), uint16(1000), []byte{3, 0xff, 0x0f})
	f.Add(byte(2), byte(17), uint16(2048), make([]byte, 2*1024*17/8+5))
	f.Add(byte(3), byte(64), uint16(3), make([]byte, 24))
	f.Fuzz(func(t *testing.T, ts, w byte, n uint16, buf []byte) {
		word := []int{8, 16, 32, 64}[ts%4]
		bud := budget{b: encoding.NewBudget(1 << 24)}
		if b, err := unpackInline(buf, int(n), word, bud); err == nil && b.n != int(n) {
			t.Fatal("inline: wrong count")
		}
		if b, err := unpackOutOfLine(buf, int(n), word, int(w)%(word+1), bud); err == nil && b.n != int(n) {
			t.Fatal("out of line: wrong count")
		}
	})
}

// FuzzFSST parses symbol tables and decodes values with them.
func FuzzFSST(f *testing.F) {
	table := []byte{2, 0, 0, 1, 'T', 'S', 'S', 'F', 'a', 'b', 0, 0, 0, 0, 0, 0, 'c', 0, 0, 0, 0, 0, 0, 0, 2, 1}
	f.Add(table, []byte{0, 1, 255, 'z', 0})
	f.Add(append([]byte{}, table[:8]...), []byte{255})
	f.Fuzz(func(t *testing.T, table, data []byte) {
		ft, err := parseFSSTTable(table)
		if err != nil {
			return
		}
		in := &block{n: 2, offsets: []int64{0, int64(len(data) / 2), int64(len(data))}, data: data}
		out, err := ft.decode(in, budget{b: encoding.NewBudget(1 << 24)})
		if err == nil && (out.n != 2 || len(out.offsets) != 3) {
			t.Fatal("wrong shape")
		}
	})
}

// FuzzRLE expands run-length encoded values, in mini-block buffers and
// in the block frame.
func FuzzRLE(f *testing.F) {
	f.Add(byte(0), byte(0), uint16(10), []byte{1, 2}, []byte{5, 5})
	f.Add(byte(2), byte(1), uint16(600), []byte{1, 0, 0, 0}, []byte{0xff, 0xff})
	f.Fuzz(func(t *testing.T, vs, ls byte, n uint16, values, lengths []byte) {
		vb, lb := []int{8, 16, 32, 64}[vs%4], []int{8, 16, 32, 64}[ls%4]
		bud := budget{b: encoding.NewBudget(1 << 24)}
		if b, err := expandRuns(values, lengths, int(n), vb, lb, bud); err == nil && b.n != int(n) {
			t.Fatal("wrong count")
		}
		enc := &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Rle{Rle: &enc21pb.Rle{
			Values:     &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Flat{Flat: &enc21pb.Flat{BitsPerValue: uint64(vb)}}},
			RunLengths: &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Flat{Flat: &enc21pb.Flat{BitsPerValue: uint64(lb)}}},
		}}}
		dec, err := newBlockDecoder(enc)
		if err != nil {
			t.Fatal(err)
		}
		frame := binary.LittleEndian.AppendUint64(nil, uint64(len(values)))
		frame = append(append(frame, values...), lengths...)
		if b, err := dec(frame, int(n), bud); err == nil && b.n != int(n) {
			t.Fatal("block: wrong count")
		}
	})
}

// FuzzDictionary decodes whole-buffer variable-width values (the form of
// a dictionary) and values that index into them.
func FuzzDictionary(f *testing.F) {
	dict := binary.LittleEndian.AppendUint32(nil, 32)
	dict = binary.LittleEndian.AppendUint32(dict, 20)
	for _, o := range []uint32{0, 1, 3} {
		dict = binary.LittleEndian.AppendUint32(dict, o)
	}
	dict = append(dict, "abc"...)
	f.Add(dict, uint16(2), []byte{0, 0, 0, 0, 1, 0, 0, 0})
	f.Fuzz(func(t *testing.T, buf []byte, n uint16, indices []byte) {
		d, err := framedVariable(buf, int(n))
		if err != nil {
			return
		}
		idx := &block{n: len(indices) / 4, bits: 32, data: indices}
		if checkIndices(idx, d.n) != nil {
			return
		}
		parts := []part{{vals: idx, dict: d, start: 0, end: idx.n}}
		offsets, _, err := gatherVariable(parts, idx.n, variableBytes(parts))
		if err != nil || len(offsets) != idx.n+1 {
			t.Fatalf("gathering checked indices: %v", err)
		}
	})
}

// FuzzLevels builds a field's structure from repetition and definition
// levels: each layer's validity and offsets, and the array.
func FuzzLevels(f *testing.F) {
	// list<int32> with a null list, an empty list and a null item.
	f.Add([]byte{3, 6}, []byte{1, 0, 1, 1, 1}, []byte{0, 1, 2, 3, 0}, uint8(5))
	f.Add([]byte{3, 3}, []byte{}, []byte{0, 1, 2, 0}, uint8(4))
	f.Fuzz(func(t *testing.T, layerBytes, rep, def []byte, rows uint8) {
		if len(layerBytes) == 0 || len(layerBytes) > 6 {
			return
		}
		var in []enc21pb.RepDefLayer
		var dt arrow.DataType = arrow.PrimitiveTypes.Int32
		for i, b := range layerBytes {
			l := enc21pb.RepDefLayer(b % 7)
			in = append(in, l)
			if i == 0 {
				continue
			}
			switch l {
			case enc21pb.RepDefLayer_REPDEF_ALL_VALID_ITEM, enc21pb.RepDefLayer_REPDEF_NULLABLE_ITEM:
				dt = arrow.StructOf(arrow.Field{Name: "s", Type: dt, Nullable: true})
			default:
				dt = arrow.ListOf(dt)
			}
		}
		layers, err := parseLayers(in)
		if err != nil {
			return
		}
		p := &Page{plan: newLevelPlan(layers), rows: int(rows)}
		if len(rep) > 0 {
			p.rep = make([]uint16, len(rep))
			for i, r := range rep {
				p.rep[i] = uint16(r % 4)
			}
		}
		if len(def) > 0 {
			p.def = make([]uint16, len(def))
			for i, d := range def {
				p.def[i] = uint16(d % 8)
			}
		}
		// As many values as the levels have visible items, when the
		// levels are valid.
		plan := p.plan
		visible := len(def)
		if p.def != nil {
			visible = 0
			for _, d := range p.def {
				if int(d) <= plan.maxVisibleDef {
					visible++
				}
			}
		} else if p.rep != nil {
			visible = len(rep)
		} else {
			visible = int(rows)
		}
		p.vals = &block{n: visible, bits: 32, data: make([]byte, 4*visible)}
		bud := budget{b: encoding.NewBudget(1 << 24)}
		if p.index(bud) != nil {
			return
		}
		fld, leaf := fieldFor("f", dt)
		c := &Column{bud: bud}
		if err := c.Append(p, 0, p.rows); err != nil {
			return
		}
		arr, err := assemble(fld, dt, map[int32]*Column{leaf: c}, memory.DefaultAllocator, bud)
		if err != nil {
			return
		}
		if arr.Len() != p.rows {
			t.Fatalf("%d rows assembled from a page of %d", arr.Len(), p.rows)
		}
		// Every value of a well-formed array can be visited.
		for i := 0; i < arr.Len(); i++ {
			if _, err := json.Marshal(arr.GetOneForMarshal(i)); err != nil {
				t.Fatal(err)
			}
		}
		arr.Release()
	})
}
