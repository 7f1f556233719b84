package compression

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/lancens/lancens/lance/file/internal/encoding"
)

// fsstTable serializes symbols as Lance does, compressed or not.
func fsstTable(compressed bool, symbols ...string) []byte {
	h := uint64(fsstMagic)<<32 | uint64(len(symbols))
	if compressed {
		h |= 1 << 24
	}
	t := binary.LittleEndian.AppendUint64(nil, h)
	for _, s := range symbols {
		var w [8]byte
		copy(w[:], s)
		t = append(t, w[:]...)
	}
	for _, s := range symbols {
		t = append(t, byte(len(s)))
	}
	return t
}

// naiveFSST decodes src one code at a time, the plain reading of the
// format; ok is false where the format says the value is corrupt.
func naiveFSST(symbols []string, src []byte) (out []byte, ok bool) {
	for j := 0; j < len(src); j++ {
		switch c := src[j]; {
		case c == fsstEscape:
			if j++; j == len(src) {
				return nil, false
			}
			out = append(out, src[j])
		case int(c) < len(symbols):
			out = append(out, symbols[c]...)
		default:
			return nil, false
		}
	}
	return out, true
}

func TestFSSTDecodeValues(t *testing.T) {
	symbols := []string{"ab", "c", "lancedb!", "x"}
	ft, err := ParseFSST(fsstTable(true, symbols...))
	if err != nil {
		t.Fatal(err)
	}
	// Values end on an 8-byte symbol, an escape and a 1-byte symbol:
	// every one is written with slack that the next overwrites.
	data := []byte{0, 1, 2, 255, 'z', 2, 3, 0, 2}
	offsets := []int64{0, 3, 5, 5, 9}
	out, outOffsets, err := ft.DecodeValues(data, offsets, encoding.NewBudget(1<<20))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"abclancedb!", "z", "", "lancedb!xablancedb!"}
	for i, w := range want {
		if got := string(out[outOffsets[i]:outOffsets[i+1]]); got != w {
			t.Errorf("value %d = %q, want %q", i, got, w)
		}
	}
	if len(out) != int(outOffsets[len(want)]) {
		t.Errorf("%d bytes for values ending at %d", len(out), outOffsets[len(want)])
	}
	for _, c := range []struct {
		name    string
		data    []byte
		offsets []int64
	}{
		{"code past the symbols", []byte{4}, []int64{0, 1}},
		{"trailing escape", []byte{0, 255}, []int64{0, 2}},
		{"escape across values", []byte{255, 'a'}, []int64{0, 1, 2}},
		{"offsets past the data", []byte{0}, []int64{0, 2}},
		{"offsets backwards", []byte{0, 0}, []int64{0, 2, 1}},
		{"no offsets", nil, nil},
	} {
		if _, _, err := ft.DecodeValues(c.data, c.offsets, encoding.NewBudget(1<<20)); !errors.Is(err, encoding.ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", c.name, err)
		}
	}
	// 10,000 codes of an 8-byte symbol need 80 KB: past a 64 KiB budget.
	if _, _, err := ft.DecodeValues(bytes.Repeat([]byte{2}, 10000), []int64{0, 10000}, encoding.NewBudget(64<<10)); !errors.Is(err, encoding.ErrBudget) {
		t.Errorf("80 KB from a 64 KiB budget: %v, want ErrBudget", err)
	}
}

func TestParseFSST(t *testing.T) {
	good := fsstTable(true, "ab")
	if ft, err := ParseFSST(good); err != nil || !ft.Compressed() {
		t.Fatalf("ParseFSST = %v, %v", ft, err)
	}
	if ft, err := ParseFSST(fsstTable(false)); err != nil || ft.Compressed() {
		t.Fatalf("uncompressed: %v, %v", ft, err)
	}
	long := fsstTable(true, "ab")
	long[len(long)-1] = 9
	for name, table := range map[string][]byte{
		"short header":      good[:7],
		"no magic":          append([]byte{1, 0, 0, 1, 0, 0, 0, 0}, good[8:]...),
		"missing lengths":   good[:len(good)-1],
		"symbol of 9 bytes": long,
		"empty symbol":      append(good[:len(good)-1:len(good)-1], 0),
	} {
		if _, err := ParseFSST(table); !errors.Is(err, encoding.ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", name, err)
		}
	}
}

func TestDecompress(t *testing.T) {
	plain := bytes.Repeat([]byte("a buffer that repeats, "), 50)
	zc, _ := NewCompressor(map[string]string{"lance-encoding:compression": "zstd", "lance-encoding:compression-level": "3"})
	lc, _ := NewCompressor(map[string]string{"lance-encoding:compression": "lz4"})
	if nc, err := NewCompressor(map[string]string{"lance-encoding:compression": "fsst"}); nc != nil || err != nil {
		t.Errorf("fsst compressor = %v, %v; want none", nc, err)
	}
	enc, _ := zstd.NewWriter(nil)
	bare := enc.EncodeAll(plain, nil)
	lied := append(binary.LittleEndian.AppendUint64(nil, uint64(len(plain)-1)), bare...)
	// Random bytes do not compress: LZ4 writes them as literals.
	noise := make([]byte, 300)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range noise {
		noise[i] = byte(r.Uint32())
	}
	for _, c := range []struct {
		name   string
		scheme Scheme
		in     []byte
		want   []byte
		err    error
	}{
		{"zstd", Zstd, zc.Compress(plain), plain, nil},
		{"lz4", LZ4, lc.Compress(plain), plain, nil},
		{"lz4 literals", LZ4, lc.Compress(noise), noise, nil},
		{"lz4 empty", LZ4, lc.Compress(nil), []byte{}, nil},
		{"zstd without length", Zstd, bare, plain, nil},
		{"none", None, plain, plain, nil},
		{"zstd longer than declared", Zstd, lied, nil, encoding.ErrCorrupt},
		{"lz4 truncated", LZ4, lc.Compress(plain)[:20], nil, encoding.ErrCorrupt},
		{"lz4 without length", LZ4, []byte{1, 2}, nil, encoding.ErrCorrupt},
		{"zstd of garbage", Zstd, []byte{0x28, 0xb5, 0x2f, 0xfd, 0, 1, 2, 3, 4}, nil, encoding.ErrCorrupt},
		{"1 TiB declared", Zstd, append(binary.LittleEndian.AppendUint64(nil, 1<<40), bare...), nil, encoding.ErrBudget},
		{"4 GiB declared", LZ4, []byte{0xff, 0xff, 0xff, 0xff, 0}, nil, encoding.ErrBudget},
		{"another scheme", Scheme(9), plain, nil, encoding.ErrUnsupported},
	} {
		got, err := Decompress(c.scheme, c.in, encoding.NewBudget(1<<20))
		switch {
		case c.err != nil && !errors.Is(err, c.err):
			t.Errorf("%s: %v, want %v", c.name, err, c.err)
		case c.err == nil && (err != nil || !bytes.Equal(got, c.want)):
			t.Errorf("%s: %d bytes, %v", c.name, len(got), err)
		}
	}
	// A bare stream is charged as it decodes.
	big := enc.EncodeAll(make([]byte, 1<<20), nil)
	if _, err := Decompress(Zstd, big, encoding.NewBudget(1<<19)); !errors.Is(err, encoding.ErrBudget) {
		t.Errorf("1 MiB bare stream from a 512 KiB budget: %v, want ErrBudget", err)
	}
}

func TestParseScheme(t *testing.T) {
	for name, want := range map[string]Scheme{"": None, "none": None, "lz4": LZ4, "zstd": Zstd} {
		if s, err := ParseScheme(name); err != nil || s != want {
			t.Errorf("ParseScheme(%q) = %v, %v", name, s, err)
		}
		if name != "" && want.String() != name {
			t.Errorf("%v.String() = %q, want %q", want, want.String(), name)
		}
	}
	if _, err := ParseScheme("brotli"); !errors.Is(err, encoding.ErrUnsupported) {
		t.Errorf("brotli: %v, want ErrUnsupported", err)
	}
}

// FuzzFSST decodes values with fuzzed symbol tables and checks the fast
// decoder against the plain reading of the format, byte for byte.
func FuzzFSST(f *testing.F) {
	f.Add([]byte("ab\x00c\x00lancedb!\x00x"), []byte{0, 1, 2, 255, 'z', 2, 3}, byte(3))
	f.Add([]byte("abcdefgh"), []byte{255}, byte(1))
	f.Fuzz(func(t *testing.T, syms, data []byte, cut byte) {
		symbols := []string{}
		for s := range bytes.SplitSeq(syms, []byte{0}) {
			if len(symbols) < 255 && len(s) >= 1 && len(s) <= 8 {
				symbols = append(symbols, string(s))
			}
		}
		ft, err := ParseFSST(fsstTable(true, symbols...))
		if err != nil {
			t.Fatal(err)
		}
		mid := min(int(cut), len(data))
		offsets := []int64{0, int64(mid), int64(len(data))}
		out, outOffsets, err := ft.DecodeValues(data, offsets, encoding.NewBudget(1<<24))
		a, okA := naiveFSST(symbols, data[:mid])
		b, okB := naiveFSST(symbols, data[mid:])
		if (err == nil) != (okA && okB) {
			t.Fatalf("DecodeValues: %v; the plain reading: %v, %v", err, okA, okB)
		}
		if err != nil {
			return
		}
		if string(out) != string(a)+string(b) || outOffsets[1] != int64(len(a)) || outOffsets[2] != int64(len(out)) {
			t.Fatalf("decoded %q at %v, want %q + %q", out, outOffsets, a, b)
		}
	})
}

// FuzzDecompress decompresses zstd and LZ4 buffers as Lance frames them.
func FuzzDecompress(f *testing.F) {
	f.Add(true, []byte{3, 0, 0, 0, 0, 0, 0, 0, 0x28, 0xb5, 0x2f, 0xfd, 0x20, 0x03, 0x19, 0, 0, 0x61, 0x62, 0x63})
	f.Add(false, []byte{3, 0, 0, 0, 0x30, 0x61, 0x62, 0x63})
	f.Fuzz(func(t *testing.T, zstd bool, data []byte) {
		scheme := LZ4
		if zstd {
			scheme = Zstd
		}
		out, err := Decompress(scheme, data, encoding.NewBudget(1<<20))
		if err == nil && len(out) > 1<<20 {
			t.Fatalf("decompressed %d bytes past the budget", len(out))
		}
		if err != nil && !errors.Is(err, encoding.ErrCorrupt) && !errors.Is(err, encoding.ErrBudget) {
			t.Fatalf("an error of no known kind: %v", err)
		}
	})
}
