package compression

import (
	"encoding/binary"

	"github.com/lancens/lancens/lance/file/internal/encoding"
)

// FSST is a symbol table of FSST (Fast Static Symbol Table) compression,
// as Lance serializes it in both format families: a u64 little-endian
// header (bits 0–7 the number of symbols, bit 24 set when the values are
// compressed at all, bits 32–63 the magic "FSST"), then each symbol as 8
// bytes, then each symbol's length as one byte. (Format 2.0 pads the
// table to room for 256 symbols; 2.1 does not.)
//
// A compressed value is a run of codes: code c < the number of symbols
// stands for symbol c, code 255 for the one literal byte after it.
type FSST struct {
	compressed bool
	// symbols holds each symbol in the low bytes of a word, so that a
	// decoder writes it with one 8-byte store; lens[c] is the length of
	// symbol c, 0 for a code past the symbols and for the escape.
	symbols [256]uint64
	lens    [256]uint8
	n       int
}

const fsstMagic = 0x46535354

// fsstEscape marks a literal byte in compressed data.
const fsstEscape = 255

// Slack is how many bytes past a value's decoded size Decode may write
// (and then leave as they were): a symbol is written as one 8-byte store.
const Slack = 7

// ParseFSST reads a symbol table. It returns an error wrapping ErrCorrupt
// for a table without the magic, shorter than its symbols need, or with a
// symbol of a length outside 1–8.
func ParseFSST(table []byte) (*FSST, error) {
	if len(table) < 8 {
		return nil, encoding.Corruptf("an FSST symbol table of %d bytes", len(table))
	}
	h := binary.LittleEndian.Uint64(table)
	if h>>32 != fsstMagic {
		return nil, encoding.Corruptf("an FSST symbol table without its magic")
	}
	// At most 255 symbols: code 255 is the escape.
	t := &FSST{compressed: h&(1<<24) != 0, n: int(h & 0xff)}
	if len(table) < 8+9*t.n {
		return nil, encoding.Corruptf("an FSST symbol table of %d bytes is too short for %d symbols", len(table), t.n)
	}
	for c := range t.n {
		l := table[8+8*t.n+c]
		if l == 0 || l > 8 {
			return nil, encoding.Corruptf("FSST symbol %d has length %d", c, l)
		}
		t.symbols[c] = binary.LittleEndian.Uint64(table[8+8*c:])
		t.lens[c] = l
	}
	return t, nil
}

// Compressed reports whether values are compressed with the table (Lance
// leaves small pages as they are, with a table that says so).
func (t *FSST) Compressed() bool { return t.compressed }

// Size returns the decoded size of the compressed value src. It returns
// an error wrapping ErrCorrupt for a code past the table's symbols or a
// value that ends in an escape.
func (t *FSST) Size(src []byte) (int, error) {
	size := 0
	for j := 0; j < len(src); j++ {
		c := src[j]
		l := int(t.lens[c])
		if l == 0 {
			if c != fsstEscape {
				return 0, encoding.Corruptf("FSST code %d past the %d symbols", c, t.n)
			}
			if j++; j == len(src) {
				return 0, encoding.Corruptf("an FSST value ends in an escape")
			}
			l = 1
		}
		size += l
	}
	return size, nil
}

// Decode decodes the compressed value src into dst and returns its
// length. src must be a value Size accepted and dst at least Size(src) +
// Slack bytes long; the bytes of dst past the value may be overwritten.
func (t *FSST) Decode(dst, src []byte) int {
	p := 0
	for j := 0; j < len(src); j++ {
		c := src[j]
		if c == fsstEscape {
			j++
			dst[p] = src[j]
			p++
			continue
		}
		binary.LittleEndian.PutUint64(dst[p:], t.symbols[c])
		p += int(t.lens[c])
	}
	return p
}

// DecodeValues decodes n compressed values, value i being
// data[offsets[i]:offsets[i+1]], into one buffer and their offsets in it,
// charging both to bud first. It returns an error wrapping ErrCorrupt for
// offsets out of order or past data and for a value Size refuses, and
// ErrBudget when the decoded values need more memory than bud has left.
func (t *FSST) DecodeValues(data []byte, offsets []int64, bud *encoding.Budget) ([]byte, []int64, error) {
	n := len(offsets) - 1
	if n < 0 {
		return nil, nil, encoding.Corruptf("FSST values without offsets")
	}
	total := 0
	for i := range n {
		s, e := offsets[i], offsets[i+1]
		if s < 0 || e < s || e > int64(len(data)) {
			return nil, nil, encoding.Corruptf("FSST value %d at bytes %d–%d of %d", i, s, e, len(data))
		}
		size, err := t.Size(data[s:e])
		if err != nil {
			return nil, nil, err
		}
		total += size
	}
	if err := bud.Take(uint64(total) + Slack + 8*uint64(n+1)); err != nil {
		return nil, nil, err
	}
	out := make([]byte, total+Slack)
	outOffsets := make([]int64, n+1)
	p := 0
	for i := range n {
		p += t.Decode(out[p:], data[offsets[i]:offsets[i+1]])
		outOffsets[i+1] = int64(p)
	}
	return out[:total], outOffsets, nil
}
