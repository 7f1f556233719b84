package v21

import "encoding/binary"

// fsstTable is an FSST symbol table as Lance serializes it: a u64
// little-endian header (bits 0–7 the number of symbols, bit 24 set when
// the values are compressed at all, bits 32–63 the magic "FSST"), then
// each symbol as 8 bytes, then each symbol's length as one byte.
type fsstTable struct {
	compressed bool
	n          int
	symbols    [255][8]byte
	lens       [255]byte
}

const fsstMagic = 0x46535354

// fsstEscape marks a literal byte in compressed data.
const fsstEscape = 255

func parseFSSTTable(b []byte) (*fsstTable, error) {
	if len(b) < 8 {
		return nil, corrupt("FSST symbol table of %d bytes", len(b))
	}
	h := binary.LittleEndian.Uint64(b)
	if h>>32 != fsstMagic {
		return nil, corrupt("FSST symbol table has no magic")
	}
	// At most 255 symbols: code 255 is the escape.
	t := &fsstTable{compressed: h&(1<<24) != 0, n: int(h & 0xff)}
	if len(b) < 8+9*t.n {
		return nil, corrupt("FSST symbol table of %d bytes is too short for %d symbols", len(b), t.n)
	}
	for i := 0; i < t.n; i++ {
		copy(t.symbols[i][:], b[8+8*i:16+8*i])
		l := b[8+8*t.n+i]
		if l == 0 || l > 8 {
			return nil, corrupt("FSST symbol %d has length %d", i, l)
		}
		t.lens[i] = l
	}
	return t, nil
}

// decode decompresses the variable-width block in (one FSST string per
// value) into a new variable-width block, charging its size to bud.
func (t *fsstTable) decode(in *block, bud budget) (*block, error) {
	if !t.compressed {
		return in, nil
	}
	start, end := in.offsets[0], in.offsets[in.n]
	// Each input byte yields at most 8 output bytes.
	maxOut := uint64(end-start) * 8
	if err := bud.take(maxOut, "FSST output"); err != nil {
		return nil, err
	}
	out := &block{n: in.n, offsets: make([]int64, in.n+1), data: make([]byte, 0, maxOut)}
	for i := 0; i < in.n; i++ {
		src := in.data[in.offsets[i]:in.offsets[i+1]]
		for j := 0; j < len(src); j++ {
			c := src[j]
			if c == fsstEscape {
				j++
				if j == len(src) {
					return nil, corrupt("FSST value ends in an escape")
				}
				out.data = append(out.data, src[j])
				continue
			}
			if int(c) >= t.n {
				return nil, corrupt("FSST code %d past the %d symbols", c, t.n)
			}
			out.data = append(out.data, t.symbols[c][:t.lens[c]]...)
		}
		out.offsets[i+1] = int64(len(out.data))
	}
	return out, nil
}
