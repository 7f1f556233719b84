package fts

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"slices"
)

// The serialised form of an Index: magic, format version, whether it keeps
// positions, the highest row id it holds, the number of term counts that
// follow and each row's count of terms (zig-zag, -1 for a row the index
// does not hold), then the terms in byte order, each with its text, its
// rows (ascending, as deltas), their frequencies and, with positions, each
// row's positions (ascending, as deltas); a CRC-32C of everything before it
// ends it. Integers are unsigned varints.
const (
	marshalMagic   = "LNFT"
	marshalVersion = 1
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// errCorrupt is wrapped by every LoadIndex error about the data itself.
var errCorrupt = errors.New("fts: corrupt index data")

// MarshalBinary returns the serialised index, which LoadIndex reads back.
// It takes the index's read lock, and never fails.
func (p *Index) MarshalBinary() ([]byte, error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	b := make([]byte, 0, p.size.Load())
	b = append(b, marshalMagic...)
	b = binary.AppendUvarint(b, marshalVersion)
	pos := uint64(0)
	if p.positions {
		pos = 1
	}
	b = binary.AppendUvarint(b, pos)
	b = binary.AppendVarint(b, p.lastRowID)
	b = binary.AppendUvarint(b, uint64(len(p.docLen)))
	for _, l := range p.docLen {
		b = binary.AppendVarint(b, int64(l))
	}
	terms := make([]string, 0, len(p.terms))
	for t := range p.terms {
		terms = append(terms, t)
	}
	slices.Sort(terms)
	b = binary.AppendUvarint(b, uint64(len(terms)))
	for _, t := range terms {
		ps := p.terms[t]
		b = binary.AppendUvarint(b, uint64(len(t)))
		b = append(b, t...)
		b = binary.AppendUvarint(b, uint64(len(ps.rows)))
		prev := int64(-1)
		for _, id := range ps.rows {
			b = binary.AppendUvarint(b, uint64(id-prev))
			prev = id
		}
		for _, tf := range ps.tf {
			b = binary.AppendUvarint(b, uint64(tf))
		}
		if p.positions {
			for _, at := range ps.pos {
				b = binary.AppendUvarint(b, uint64(len(at)))
				last := int32(-1)
				for _, q := range at {
					b = binary.AppendUvarint(b, uint64(q-last))
					last = q
				}
			}
		}
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, crcTable)), nil
}

// LoadIndex reads an index written by MarshalBinary. It returns an error,
// never panicking, for data that is truncated, corrupt or of another
// format.
func LoadIndex(data []byte) (*Index, error) {
	if len(data) < len(marshalMagic)+4 || string(data[:len(marshalMagic)]) != marshalMagic {
		return nil, fmt.Errorf("%w: not a full-text index", errCorrupt)
	}
	body := data[:len(data)-4]
	if crc32.Checksum(body, crcTable) != binary.LittleEndian.Uint32(data[len(data)-4:]) {
		return nil, fmt.Errorf("%w: checksum mismatch", errCorrupt)
	}
	d := &varints{b: body[len(marshalMagic):]}
	if v := d.uint(1 << 20); v != marshalVersion && d.err == nil {
		return nil, fmt.Errorf("%w: unsupported format version %d", errCorrupt, v)
	}
	p := NewIndex(d.uint(1) == 1)
	p.lastRowID = d.int()
	// Each count of terms takes at least a byte, as does every row and
	// position: lengths are bounded by what is left.
	p.docLen = make([]int32, d.uint(len(d.b)))
	for i := range p.docLen {
		p.docLen[i] = int32(d.int())
	}
	if p.lastRowID < -1 || p.lastRowID >= int64(len(p.docLen)) {
		d.fail("highest row id %d of %d rows", p.lastRowID, len(p.docLen))
	}
	size := int64(cap(p.docLen)) * 4
	for range d.uint(len(d.b)) {
		term := string(d.bytes(d.uint(len(d.b))))
		n := d.uint(len(d.b))
		ps := &postings{rows: make([]int64, n), tf: make([]int32, n)}
		prev := int64(-1)
		for i := range ps.rows {
			delta := d.uint(len(p.docLen))
			prev += int64(delta)
			if delta == 0 || prev >= int64(len(p.docLen)) || p.docLen[prev] < 0 {
				d.fail("term %q: rows out of order or not held", term)
				break
			}
			ps.rows[i] = prev
		}
		for i := range ps.tf {
			ps.tf[i] = int32(d.uint(math.MaxInt32))
		}
		size += termBytes + int64(len(term)) + int64(n)*12
		if p.positions {
			ps.pos = make([][]int32, n)
			for i := range ps.pos {
				at := make([]int32, d.uint(len(d.b)))
				last := int32(-1)
				for k := range at {
					delta := d.uint(math.MaxInt32)
					if delta == 0 {
						d.fail("term %q: positions out of order", term)
					}
					last += int32(delta)
					at[k] = last
				}
				ps.pos[i] = at
				size += 24 + int64(len(at))*4
			}
		}
		if d.err != nil {
			return nil, d.err
		}
		if _, dup := p.terms[term]; dup {
			d.fail("term %q twice", term)
			return nil, d.err
		}
		p.terms[term] = ps
	}
	if d.err == nil && len(d.b) != 0 {
		d.fail("%d trailing bytes", len(d.b))
	}
	if d.err != nil {
		return nil, d.err
	}
	p.size.Add(size)
	return p, nil
}

// varints reads unsigned and zig-zag varints, recording the first error;
// reads after an error return zero values.
type varints struct {
	b   []byte
	err error
}

func (d *varints) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s", errCorrupt, fmt.Sprintf(format, args...))
	}
	d.b = nil
}

// uint reads an unsigned varint of at most limit.
func (d *varints) uint(limit int) int {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("truncated")
		return 0
	}
	d.b = d.b[n:]
	if v > uint64(limit) {
		d.fail("value %d above %d", v, limit)
		return 0
	}
	return int(v)
}

func (d *varints) int() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail("truncated")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *varints) bytes(n int) []byte {
	if n > len(d.b) {
		d.fail("truncated")
		return nil
	}
	out := d.b[:n]
	d.b = d.b[n:]
	return out
}
