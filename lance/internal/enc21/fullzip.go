package enc21

import (
	"github.com/lancens/lancens/lance/internal/pb/enc21pb"
)

// A full-zip page stores large values one after the other in buffer 0,
// each behind a control word holding its repetition level (high bits) and
// definition level (low bits), 0, 1, 2 or 4 bytes wide as bits_rep +
// bits_def need. Fixed-width values follow every visible item's control
// word (null items included); variable-width values follow as a length
// (bits_per_offset wide) and the bytes, for valid items only. Buffer 1,
// when present, is the repetition index: the offset of each row in buffer
// 0, plus the end (used for random access only).

// controlWord reads one control word's levels.
type controlWord struct {
	bytes   int
	bitsRep int
	bitsDef int
	defMask uint32
	hasRep  bool
	hasDef  bool
}

func newControlWord(bitsRep, bitsDef uint32) (*controlWord, error) {
	if bitsRep > 16 || bitsDef > 16 {
		return nil, corrupt("control words of %d repetition and %d definition bits", bitsRep, bitsDef)
	}
	c := &controlWord{bitsRep: int(bitsRep), bitsDef: int(bitsDef), hasRep: bitsRep > 0, hasDef: bitsDef > 0}
	c.defMask = (uint32(1) << bitsDef) - 1
	switch total := bitsRep + bitsDef; {
	case total == 0:
	case total <= 8:
		c.bytes = 1
	case total <= 16:
		c.bytes = 2
	default:
		c.bytes = 4
	}
	return c, nil
}

func (c *controlWord) parse(b []byte) (rep, def uint16) {
	w := uint32(readUint(b, 0, c.bytes))
	if c.hasDef {
		def = uint16(w & c.defMask)
	}
	if c.hasRep {
		rep = uint16(w >> c.bitsDef)
	}
	return rep, def
}

func decodeFullZip(l *enc21pb.FullZipLayout, buffers [][]byte, rows int, bud *budget) (*Page, error) {
	layers, err := parseLayers(l.GetLayers())
	if err != nil {
		return nil, err
	}
	if len(buffers) != 1 && len(buffers) != 2 {
		return nil, corrupt("full-zip page has %d buffers", len(buffers))
	}
	cw, err := newControlWord(l.GetBitsRep(), l.GetBitsDef())
	if err != nil {
		return nil, err
	}
	items := int(l.GetNumItems())
	if err := bud.items(uint64(items), "the page's items"); err != nil {
		return nil, err
	}
	p := &Page{plan: newLevelPlan(layers)}
	if cw.hasRep != (p.plan.maxRep > 0) {
		return nil, corrupt("full-zip control words disagree with the layers about lists")
	}
	data := buffers[0]
	if cw.hasRep {
		p.rep = make([]uint16, 0, min(items, len(data)/cw.bytes))
	}
	if cw.hasDef {
		p.def = make([]uint16, 0, min(items, len(data)/max(cw.bytes, 1)))
	}
	switch d := l.GetDetails().(type) {
	case *enc21pb.FullZipLayout_BitsPerValue:
		dec, err := newFixedPerValue(l.GetValueCompression())
		if err != nil {
			return nil, err
		}
		if uint64(d.BitsPerValue) != uint64(dec.bytes)*8 {
			return nil, corrupt("full-zip values of %d bits, their encoding makes %d", d.BitsPerValue, dec.bytes*8)
		}
		if dec.bytes == 0 {
			return nil, corrupt("full-zip values of 0 bytes")
		}
		var values []byte
		n := 0
		if cw.bytes == 0 {
			n, values = rows, data
		} else {
			if err := bud.take(uint64(len(data)), "full-zip values"); err != nil {
				return nil, err
			}
			values = make([]byte, 0, len(data))
			for off := 0; off < len(data); {
				if off+cw.bytes > len(data) {
					return nil, corrupt("control word past the end of the page")
				}
				rep, def := cw.parse(data[off:])
				off += cw.bytes
				p.appendLevels(cw, rep, def)
				if int(def) > p.plan.maxVisibleDef {
					continue
				}
				if off+dec.bytes > len(data) {
					return nil, corrupt("full-zip value past the end of the page")
				}
				values = append(values, data[off:off+dec.bytes]...)
				off += dec.bytes
				n++
			}
		}
		if p.vals, err = dec.decode(values, n); err != nil {
			return nil, err
		}
		if cw.bytes == 0 && len(data) != n*dec.bytes {
			return nil, corrupt("full-zip page of %d rows of %d bytes has %d bytes", n, dec.bytes, len(data))
		}
	case *enc21pb.FullZipLayout_BitsPerOffset:
		if d.BitsPerOffset != 32 && d.BitsPerOffset != 64 {
			return nil, corrupt("full-zip lengths of %d bits", d.BitsPerOffset)
		}
		lw := int(d.BitsPerOffset / 8)
		dec, err := newVariablePerValue(l.GetValueCompression())
		if err != nil {
			return nil, err
		}
		if err := bud.take(uint64(len(data))+8*uint64(items+1), "full-zip values"); err != nil {
			return nil, err
		}
		b := &block{offsets: make([]int64, 1, items+1), data: make([]byte, 0, len(data))}
		for off := 0; off < len(data); {
			if len(b.offsets) > items+1 {
				return nil, corrupt("full-zip page holds more than its %d items", items)
			}
			var rep, def uint16
			if cw.bytes > 0 {
				if off+cw.bytes > len(data) {
					return nil, corrupt("control word past the end of the page")
				}
				rep, def = cw.parse(data[off:])
				off += cw.bytes
				p.appendLevels(cw, rep, def)
			}
			if int(def) > p.plan.maxVisibleDef {
				continue
			}
			if def == 0 {
				if off+lw > len(data) {
					return nil, corrupt("value length past the end of the page")
				}
				n := readUint(data, off, lw)
				off += lw
				if n > uint64(len(data)-off) {
					return nil, corrupt("value of %d bytes past the end of the page", n)
				}
				b.data = append(b.data, data[off:off+int(n)]...)
				off += int(n)
			}
			b.offsets = append(b.offsets, int64(len(b.data)))
			b.n++
		}
		if p.vals, err = dec(b, bud); err != nil {
			return nil, err
		}
	default:
		return nil, corrupt("full-zip layout has no value width")
	}
	if p.rep != nil || p.def != nil {
		if got := max(len(p.rep), len(p.def)); got != items {
			return nil, corrupt("full-zip page holds %d items, its layout says %d", got, items)
		}
	}
	return p, nil
}

func (p *Page) appendLevels(cw *controlWord, rep, def uint16) {
	if cw.hasRep {
		p.rep = append(p.rep, rep)
	}
	if cw.hasDef {
		p.def = append(p.def, def)
	}
}
