package v21

import (
	"context"

	"github.com/lancens/lancens/lance/file/internal/encoding"
	"github.com/lancens/lancens/lance/internal/pb/enc21pb"
)

// A full-zip page stores large values one after the other in buffer 0,
// each behind a control word holding its repetition level (high bits) and
// definition level (low bits), 0, 1, 2 or 4 bytes wide as bits_rep +
// bits_def need. Fixed-width values follow every visible item's control
// word (null items included); variable-width values follow as a length
// (bits_per_offset wide) and the bytes, for valid items only. Buffer 1,
// when the values are variable-width or the page has lists, is the
// repetition index: the offset of each row in buffer 0, and the end, as
// unsigned integers of 1, 2, 4 or 8 bytes.
//
// A read fetches only the bytes of the rows it wants: found by arithmetic
// when every row has the same size, through the repetition index
// otherwise.

// controlWord reads one control word's levels.
type controlWord struct {
	bytes   int
	bitsDef int
	defMask uint32
	hasRep  bool
	hasDef  bool
}

func newControlWord(bitsRep, bitsDef uint32) (*controlWord, error) {
	if bitsRep > 16 || bitsDef > 16 {
		return nil, corrupt("control words of %d repetition and %d definition bits", bitsRep, bitsDef)
	}
	c := &controlWord{bitsDef: int(bitsDef), hasRep: bitsRep > 0, hasDef: bitsDef > 0}
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

// zipLayout is a parsed full-zip layout.
type zipLayout struct {
	l        *enc21pb.FullZipLayout
	plan     *levelPlan
	cw       *controlWord
	fixed    *fixedPerValue
	variable variablePerValue
	lenWidth int
}

func newZipLayout(l *enc21pb.FullZipLayout) (*zipLayout, error) {
	layers, err := parseLayers(l.GetLayers())
	if err != nil {
		return nil, err
	}
	z := &zipLayout{l: l, plan: newLevelPlan(layers)}
	if z.cw, err = newControlWord(l.GetBitsRep(), l.GetBitsDef()); err != nil {
		return nil, err
	}
	if z.cw.hasRep != (z.plan.maxRep > 0) {
		return nil, corrupt("full-zip control words disagree with the layers about lists")
	}
	switch d := l.GetDetails().(type) {
	case *enc21pb.FullZipLayout_BitsPerValue:
		if z.fixed, err = newFixedPerValue(l.GetValueCompression()); err != nil {
			return nil, err
		}
		if uint64(d.BitsPerValue) != uint64(z.fixed.bytes)*8 || z.fixed.bytes == 0 {
			return nil, corrupt("full-zip values of %d bits, their encoding makes %d", d.BitsPerValue, z.fixed.bytes*8)
		}
	case *enc21pb.FullZipLayout_BitsPerOffset:
		if d.BitsPerOffset != 32 && d.BitsPerOffset != 64 {
			return nil, corrupt("full-zip lengths of %d bits", d.BitsPerOffset)
		}
		z.lenWidth = int(d.BitsPerOffset / 8)
		if z.variable, err = newVariablePerValue(l.GetValueCompression()); err != nil {
			return nil, err
		}
	default:
		return nil, corrupt("full-zip layout has no value width")
	}
	return z, nil
}

// rowSize returns the size of every row when all rows have one, or 0.
func (z *zipLayout) rowSize() int {
	if z.fixed == nil || z.cw.hasRep {
		return 0
	}
	return z.cw.bytes + z.fixed.bytes
}

// read decodes the rows of local (sorted, disjoint) of page pg.
func (z *zipLayout) read(ctx context.Context, f encoding.File, pg *encoding.Page, local []span, bud budget) ([]*Page, error) {
	spans := mergeSpans(local)
	if len(pg.Buffers) == 0 {
		return nil, corrupt("full-zip page without buffers")
	}
	data := pg.Buffers[0]
	byteRanges := make([]encoding.Range, len(spans))
	if size := z.rowSize(); size > 0 {
		if len(pg.Buffers) != 1 {
			return nil, corrupt("full-zip page of fixed-size rows has %d buffers", len(pg.Buffers))
		}
		if total, err := mulCheck(pg.Length, uint64(size), data.Length, "full-zip rows"); err != nil || total != data.Length {
			return nil, corrupt("full-zip page of %d rows of %d bytes has %d bytes", pg.Length, size, data.Length)
		}
		for i, s := range spans {
			byteRanges[i] = encoding.Range{Offset: data.Offset + s.start*uint64(size), Length: (s.end - s.start) * uint64(size)}
		}
	} else {
		if len(pg.Buffers) != 2 {
			return nil, corrupt("full-zip page without a repetition index")
		}
		index := pg.Buffers[1]
		if pg.Length+1 == 0 || index.Length%(pg.Length+1) != 0 {
			return nil, corrupt("repetition index of %d bytes for %d rows", index.Length, pg.Length)
		}
		width := index.Length / (pg.Length + 1)
		switch width {
		case 1, 2, 4, 8:
		default:
			return nil, corrupt("repetition index entries of %d bytes", width)
		}
		entries := make([]encoding.Range, 0, 2*len(spans))
		for _, s := range spans {
			entries = append(entries,
				encoding.Range{Offset: index.Offset + s.start*width, Length: width},
				encoding.Range{Offset: index.Offset + s.end*width, Length: width})
		}
		got, err := f.ReadRanges(ctx, entries)
		if err != nil {
			return nil, err
		}
		for i := range spans {
			start, end := readUint(got[2*i], 0, int(width)), readUint(got[2*i+1], 0, int(width))
			if start > end || end > data.Length {
				return nil, corrupt("repetition index gives rows the bytes %d–%d of %d", start, end, data.Length)
			}
			byteRanges[i] = encoding.Range{Offset: data.Offset + start, Length: end - start}
		}
	}
	bufs, err := f.ReadRanges(ctx, byteRanges)
	if err != nil {
		return nil, err
	}
	pages := make([]*Page, len(spans))
	for i, s := range spans {
		if pages[i], err = z.decode(bufs[i], int(s.start), int(s.end-s.start), bud); err != nil {
			return nil, err
		}
	}
	return pages, nil
}

// decode decodes the bytes of rows [first, first+rows) of a page.
func (z *zipLayout) decode(data []byte, first, rows int, bud budget) (*Page, error) {
	cw := z.cw
	p := &Page{plan: z.plan, firstRow: first, rows: rows}
	levelCap := 0
	if cw.bytes > 0 {
		levelCap = len(data) / cw.bytes
	}
	if cw.hasRep {
		p.rep = make([]uint16, 0, levelCap)
	}
	if cw.hasDef {
		p.def = make([]uint16, 0, levelCap)
	}
	if err := bud.take(4*uint64(levelCap), "full-zip levels"); err != nil {
		return nil, err
	}
	var err error
	if z.fixed != nil {
		size := z.fixed.bytes
		values, n := data, rows
		if cw.bytes > 0 {
			if err := bud.take(uint64(len(data)), "full-zip values"); err != nil {
				return nil, err
			}
			values, n = make([]byte, 0, len(data)), 0
			for off := 0; off < len(data); {
				if off+cw.bytes > len(data) {
					return nil, corrupt("control word past the end of the rows")
				}
				rep, def := cw.parse(data[off:])
				off += cw.bytes
				p.appendLevels(cw, rep, def)
				if int(def) > p.plan.maxVisibleDef {
					continue
				}
				if off+size > len(data) {
					return nil, corrupt("full-zip value past the end of the rows")
				}
				values = append(values, data[off:off+size]...)
				off += size
				n++
			}
		} else if len(data) != rows*size {
			return nil, corrupt("%d full-zip rows of %d bytes in %d bytes", rows, size, len(data))
		}
		if p.vals, err = z.fixed.decode(values, n); err != nil {
			return nil, err
		}
	} else {
		lw := z.lenWidth
		if err := bud.take(uint64(len(data))+8*uint64(levelCap+1), "full-zip values"); err != nil {
			return nil, err
		}
		b := &block{offsets: make([]int64, 1, levelCap+1), data: make([]byte, 0, len(data))}
		for off := 0; off < len(data); {
			var rep, def uint16
			if cw.bytes > 0 {
				if off+cw.bytes > len(data) {
					return nil, corrupt("control word past the end of the rows")
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
					return nil, corrupt("value length past the end of the rows")
				}
				n := readUint(data, off, lw)
				off += lw
				if n > uint64(len(data)-off) {
					return nil, corrupt("value of %d bytes past the end of the rows", n)
				}
				b.data = append(b.data, data[off:off+int(n)]...)
				off += int(n)
			}
			b.offsets = append(b.offsets, int64(len(b.data)))
			b.n++
		}
		if p.vals, err = z.variable(b, bud); err != nil {
			return nil, err
		}
	}
	if err := p.index(bud); err != nil {
		return nil, err
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

// mergeSpans joins spans that touch.
func mergeSpans(in []span) []span {
	out := make([]span, 0, len(in))
	for _, s := range in {
		if n := len(out); n > 0 && out[n-1].end == s.start {
			out[n-1].end = s.end
			continue
		}
		out = append(out, s)
	}
	return out
}
