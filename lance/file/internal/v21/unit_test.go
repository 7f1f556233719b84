package v21

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"

	"github.com/lancens/lancens/lance/file/internal/encoding"
	"github.com/lancens/lancens/lance/internal/pb/enc21pb"
)

// packFastLanes is the inverse of unpackFastLanes, written from the
// layout's definition: value r of lane l goes to bits [r*w, (r+1)*w) of
// the lane's words.
func packFastLanes(t, w int, values []uint64) []byte {
	lanes := 1024 / t
	words := make([]uint64, 1024*w/t)
	for lane := 0; lane < lanes; lane++ {
		for row := 0; row < t; row++ {
			v := values[flOrder[row/8]*16+(row%8)*128+lane]
			for b := 0; b < w; b++ {
				if v&(1<<b) != 0 {
					bit := row*w + b
					words[lanes*(bit/t)+lane] |= 1 << (bit % t)
				}
			}
		}
	}
	out := make([]byte, len(words)*t/8)
	for i, x := range words {
		for k := 0; k < t/8; k++ {
			out[i*t/8+k] = byte(x >> (8 * k))
		}
	}
	return out
}

func TestUnpackFastLanes(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, word := range []int{8, 16, 32, 64} {
		for w := 0; w <= word; w++ {
			values := make([]uint64, 1024)
			for i := range values {
				if w > 0 {
					values[i] = r.Uint64() >> (64 - w)
				}
			}
			dst := make([]byte, 1024*word/8)
			unpackFastLanes(word, w, packFastLanes(word, w, values), dst)
			for i, want := range values {
				if got := readUint(dst, i*word/8, word/8); got != want {
					t.Fatalf("%d-bit words packed to %d bits: value %d is %d, want %d", word, w, i, got, want)
				}
			}
		}
	}
}

func TestUnpackOutOfLineTails(t *testing.T) {
	// 1100 values of 16 bits packed to 5: one block, then a tail either
	// packed in a padded block or stored raw.
	values := make([]uint64, 2048)
	for i := range values[:1100] {
		values[i] = uint64(i % 32)
	}
	packed := append(packFastLanes(16, 5, values[:1024]), packFastLanes(16, 5, values[1024:])...)
	raw := packFastLanes(16, 5, values[:1024])
	for _, v := range values[1024:1100] {
		raw = binary.LittleEndian.AppendUint16(raw, uint16(v))
	}
	bud := budget{b: encoding.NewBudget(1 << 20)}
	for name, buf := range map[string][]byte{"packed tail": packed, "raw tail": raw} {
		b, err := unpackOutOfLine(buf, 1100, 16, 5, bud)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for i := 0; i < 1100; i++ {
			if got := binary.LittleEndian.Uint16(b.data[2*i:]); uint64(got) != values[i] {
				t.Fatalf("%s: value %d is %d, want %d", name, i, got, values[i])
			}
		}
	}
	if _, err := unpackOutOfLine(raw[:len(raw)-2], 1100, 16, 5, bud); !errors.Is(err, encoding.ErrCorrupt) {
		t.Errorf("a short buffer: %v, want ErrCorrupt", err)
	}
}

// layerType builds the type of a one-leaf field whose layers (from the
// leaf out) are in, with an int32 leaf.
func layerType(in []enc21pb.RepDefLayer) arrow.DataType {
	var dt arrow.DataType = arrow.PrimitiveTypes.Int32
	for _, l := range in[1:] {
		switch l {
		case enc21pb.RepDefLayer_REPDEF_ALL_VALID_ITEM, enc21pb.RepDefLayer_REPDEF_NULLABLE_ITEM:
			dt = arrow.StructOf(arrow.Field{Name: "s", Type: dt, Nullable: true})
		default:
			dt = arrow.ListOf(dt)
		}
	}
	return dt
}

// TestLevels turns levels into arrays: the examples of Lance's format
// documentation and the shapes SDK files have.
func TestLevels(t *testing.T) {
	const (
		item   = enc21pb.RepDefLayer_REPDEF_ALL_VALID_ITEM
		nitem  = enc21pb.RepDefLayer_REPDEF_NULLABLE_ITEM
		list   = enc21pb.RepDefLayer_REPDEF_ALL_VALID_LIST
		nlist  = enc21pb.RepDefLayer_REPDEF_NULLABLE_LIST
		elist  = enc21pb.RepDefLayer_REPDEF_EMPTYABLE_LIST
		nelist = enc21pb.RepDefLayer_REPDEF_NULL_AND_EMPTY_LIST
	)
	for _, c := range []struct {
		name     string
		layers   []enc21pb.RepDefLayer
		rep, def []uint16
		rows     int
		want     string // the rows as JSON; leaf values count from 0
	}{
		{"nullable items", []enc21pb.RepDefLayer{nitem}, nil, []uint16{0, 1, 0}, 3, `[0,null,2]`},
		// [{"m":{"i":1}}, NULL, {"m":NULL}, {"m":{"i":NULL}}]
		{"struct of struct", []enc21pb.RepDefLayer{nitem, nitem, nitem}, nil, []uint16{0, 3, 2, 1}, 4,
			`[{"s":{"s":0}},null,{"s":null},{"s":{"s":null}}]`},
		// [[0,1],[],[2]] lists that may be empty, then a null list.
		{"list null and empty", []enc21pb.RepDefLayer{item, nelist}, []uint16{1, 0, 1, 1, 1}, []uint16{0, 0, 2, 0, 1}, 4,
			`[[0,1],[],[2],null]`},
		{"list only empty", []enc21pb.RepDefLayer{item, elist}, []uint16{1, 1, 0}, []uint16{1, 0, 0}, 2, `[[],[0,1]]`},
		{"list only null", []enc21pb.RepDefLayer{nitem, nlist}, []uint16{1, 0, 1}, []uint16{0, 1, 2}, 2, `[[0,null],null]`},
		{"list all valid", []enc21pb.RepDefLayer{item, list}, []uint16{1, 0, 0, 1}, nil, 2, `[[0,1,2],[3]]`},
		// [[[0,1],[],[2]],[[3]],[]] and a null outer list.
		{"list of lists", []enc21pb.RepDefLayer{item, elist, nelist}, []uint16{2, 0, 1, 1, 2, 2, 2}, []uint16{0, 0, 1, 0, 0, 3, 2}, 4,
			`[[[0,1],[],[2]],[[3]],[],null]`},
		// A null struct in a list still has a slot among the items.
		{"list of structs", []enc21pb.RepDefLayer{nitem, nitem, elist}, []uint16{1, 0, 0, 1}, []uint16{0, 2, 1, 3}, 2,
			`[[{"s":0},null,{"s":null}],[]]`},
		// A null struct above a list: the list is null, no items.
		{"struct of list", []enc21pb.RepDefLayer{item, nlist, nitem}, []uint16{1, 0, 1, 1}, []uint16{0, 0, 2, 1}, 3,
			`[{"s":[0,1]},null,{"s":null}]`},
	} {
		t.Run(c.name, func(t *testing.T) {
			layers, err := parseLayers(c.layers)
			if err != nil {
				t.Fatal(err)
			}
			p := &Page{plan: newLevelPlan(layers), rows: c.rows, rep: c.rep, def: c.def}
			visible := max(len(c.rep), len(c.def))
			if c.def != nil {
				visible = 0
				for _, d := range c.def {
					if int(d) <= p.plan.maxVisibleDef {
						visible++
					}
				}
			}
			p.vals = &block{n: visible, bits: 32, data: make([]byte, 4*visible)}
			for i := 0; i < visible; i++ {
				binary.LittleEndian.PutUint32(p.vals.data[4*i:], uint32(i))
			}
			bud := budget{b: encoding.NewBudget(1 << 20)}
			if err := p.index(bud); err != nil {
				t.Fatal(err)
			}
			dt := layerType(c.layers)
			f, leaf := fieldFor("f", dt)
			col := &Column{bud: bud}
			if err := col.Append(p, 0, c.rows); err != nil {
				t.Fatal(err)
			}
			arr, err := assemble(f, dt, map[int32]*Column{leaf: col}, memory.DefaultAllocator, bud)
			if err != nil {
				t.Fatal(err)
			}
			defer arr.Release()
			got, _ := json.Marshal(arr)
			if string(got) != c.want {
				t.Errorf("got %s, want %s", got, c.want)
			}
		})
	}
}

func TestGeneralCompression(t *testing.T) {
	plain := []byte("a buffer that repeats, a buffer that repeats, a buffer that repeats")
	lz := make([]byte, lz4.CompressBlockBound(len(plain)))
	n, err := lz4.CompressBlock(plain, lz, nil)
	if err != nil {
		t.Fatal(err)
	}
	lzFramed := append(binary.LittleEndian.AppendUint32(nil, uint32(len(plain))), lz[:n]...)
	enc, _ := zstd.NewWriter(nil)
	zs := enc.EncodeAll(plain, nil)
	zsFramed := append(binary.LittleEndian.AppendUint64(nil, uint64(len(plain))), zs...)
	lied := append(binary.LittleEndian.AppendUint64(nil, uint64(len(plain)-1)), zs...)
	bud := budget{b: encoding.NewBudget(1 << 20)}
	for _, c := range []struct {
		name    string
		scheme  enc21pb.CompressionScheme
		in      []byte
		corrupt bool
	}{
		{"lz4", enc21pb.CompressionScheme_COMPRESSION_ALGORITHM_LZ4, lzFramed, false},
		{"zstd", enc21pb.CompressionScheme_COMPRESSION_ALGORITHM_ZSTD, zsFramed, false},
		{"zstd without length", enc21pb.CompressionScheme_COMPRESSION_ALGORITHM_ZSTD, zs, false},
		{"zstd longer than declared", enc21pb.CompressionScheme_COMPRESSION_ALGORITHM_ZSTD, lied, true},
		{"lz4 truncated", enc21pb.CompressionScheme_COMPRESSION_ALGORITHM_LZ4, lzFramed[:len(lzFramed)-3], true},
		{"lz4 without length", enc21pb.CompressionScheme_COMPRESSION_ALGORITHM_LZ4, []byte{1, 2}, true},
	} {
		got, err := decompressBuffer(c.scheme, c.in, bud)
		switch {
		case c.corrupt && !errors.Is(err, encoding.ErrCorrupt):
			t.Errorf("%s: %v, want ErrCorrupt", c.name, err)
		case !c.corrupt && (err != nil || string(got) != string(plain)):
			t.Errorf("%s: %q, %v", c.name, got, err)
		}
	}
	// A declared length past the budget is refused before allocating.
	huge := append(binary.LittleEndian.AppendUint64(nil, 1<<40), zs...)
	if _, err := decompressBuffer(enc21pb.CompressionScheme_COMPRESSION_ALGORITHM_ZSTD, huge, bud); !errors.Is(err, encoding.ErrBudget) {
		t.Errorf("1 TiB declared: %v, want ErrBudget", err)
	}
}

func TestFSSTDecode(t *testing.T) {
	// Symbols: 0 = "ab", 1 = "c"; code 255 escapes a literal.
	table := binary.LittleEndian.AppendUint64(nil, fsstMagic<<32|1<<24|2)
	table = append(table, 'a', 'b', 0, 0, 0, 0, 0, 0, 'c', 0, 0, 0, 0, 0, 0, 0, 2, 1)
	ft, err := parseFSSTTable(table)
	if err != nil {
		t.Fatal(err)
	}
	bud := budget{b: encoding.NewBudget(1 << 20)}
	in := &block{n: 2, offsets: []int64{0, 3, 5}, data: []byte{0, 1, 0, 255, 'z'}}
	out, err := ft.decode(in, bud)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(out.data); got != "abcabz" || out.offsets[1] != 5 {
		t.Errorf("decoded %q with offsets %v", got, out.offsets)
	}
	for _, bad := range [][]byte{{2}, {255}} {
		if _, err := ft.decode(&block{n: 1, offsets: []int64{0, int64(len(bad))}, data: bad}, bud); !errors.Is(err, encoding.ErrCorrupt) {
			t.Errorf("%v: %v, want ErrCorrupt", bad, err)
		}
	}
}

func TestFramedVariable(t *testing.T) {
	// The current header (u32 width, u32 start) and the old one (u8 width,
	// u32 count, u32 start) hold "a", "", "bc".
	cur := binary.LittleEndian.AppendUint32(nil, 32)
	cur = binary.LittleEndian.AppendUint32(cur, 24)
	old := []byte{32}
	old = binary.LittleEndian.AppendUint32(old, 3)
	old = binary.LittleEndian.AppendUint32(old, 25)
	for _, o := range []uint32{0, 1, 1, 3} {
		cur = binary.LittleEndian.AppendUint32(cur, o)
		old = binary.LittleEndian.AppendUint32(old, o)
	}
	for name, buf := range map[string][]byte{"current": append(cur, "abc"...), "old": append(old, "abc"...)} {
		b, err := framedVariable(buf, 3)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if string(b.data[b.offsets[2]:b.offsets[3]]) != "bc" || b.offsets[1] != 1 {
			t.Errorf("%s: offsets %v data %q", name, b.offsets, b.data)
		}
		if _, err := framedVariable(buf, 4); !errors.Is(err, encoding.ErrCorrupt) {
			t.Errorf("%s: 4 values from 3: %v, want ErrCorrupt", name, err)
		}
	}
}
