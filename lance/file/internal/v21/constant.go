package v21

import (
	"context"
	"encoding/binary"

	"github.com/lancens/lancens/lance/file/internal/encoding"
	"github.com/lancens/lancens/lance/internal/pb/enc21pb"
)

// A constant page (2.1 writers call it all-null) has no values of its
// own: every visible item is null, or, from 2.2 on, one and the same
// value. The value is inline_value (the Arrow value buffer of one
// fixed-width value) or sits in buffer 0, framed as a u32 count of Arrow
// buffers, a u32 length for each, and the buffers. Repetition and
// definition levels, when the page needs them, follow in the next two
// buffers (empty: none); without rep_compression or def_compression they
// are raw u16 values.
//
// Buffers by count: 0, no levels (constant inline, or all null); 1, the
// value; 2, the levels (constant inline, or all null); 3, the value and
// the levels. A read decodes the whole page.
type constLayout struct {
	l    *enc21pb.ConstantLayout
	plan *levelPlan
}

func newConstLayout(l *enc21pb.ConstantLayout) (*constLayout, error) {
	layers, err := parseLayers(l.GetLayers())
	if err != nil {
		return nil, err
	}
	return &constLayout{l: l, plan: newLevelPlan(layers)}, nil
}

func (c *constLayout) read(ctx context.Context, f encoding.File, pg *encoding.Page, bud budget) (*Page, error) {
	buffers, err := f.ReadRanges(ctx, pg.Buffers)
	if err != nil {
		return nil, err
	}
	p, err := c.decode(buffers, int(pg.Length), bud)
	if err != nil {
		return nil, err
	}
	if err := p.index(bud); err != nil {
		return nil, err
	}
	return p, nil
}

func (c *constLayout) decode(buffers [][]byte, rows int, bud budget) (*Page, error) {
	l := c.l
	var err error
	p := &Page{plan: c.plan, rows: rows}
	var value *block // one value; nil for all null
	inline := l.InlineValue != nil
	levelBufs := buffers
	switch {
	case inline && (len(buffers) == 0 || len(buffers) == 2):
		if len(l.InlineValue) == 0 || len(l.InlineValue) > 32 {
			return nil, corrupt("inline constant of %d bytes", len(l.InlineValue))
		}
		value = &block{n: 1, bits: 8 * len(l.InlineValue), data: l.InlineValue}
	case !inline && (len(buffers) == 0 || len(buffers) == 2):
	case !inline && (len(buffers) == 1 || len(buffers) == 3):
		if value, err = scalarBuffer(buffers[0]); err != nil {
			return nil, err
		}
		levelBufs = buffers[1:]
	default:
		return nil, corrupt("constant page with %d buffers", len(buffers))
	}
	if len(levelBufs) == 2 {
		if p.rep, err = constantLevels(l.GetRepCompression(), levelBufs[0], l.GetNumRepValues(), bud); err != nil {
			return nil, err
		}
		if p.def, err = constantLevels(l.GetDefCompression(), levelBufs[1], l.GetNumDefValues(), bud); err != nil {
			return nil, err
		}
	}
	// Count the visible items: the page's values.
	visible := rows
	switch {
	case p.def != nil:
		visible = 0
		for _, d := range p.def {
			if int(d) <= p.plan.maxVisibleDef {
				visible++
			}
		}
	case p.rep != nil:
		visible = len(p.rep)
	}
	if value == nil {
		p.vals = &block{n: visible, null: true}
		return p, nil
	}
	p.vals = &block{n: visible, scalar: true, bits: value.bits, data: value.data, offsets: value.offsets}
	return p, nil
}

// constantLevels reads the levels of a constant page: none when buf is
// empty, raw u16 values without compression, otherwise n values.
func constantLevels(e *enc21pb.CompressiveEncoding, buf []byte, n uint64, bud budget) ([]uint16, error) {
	if len(buf) == 0 {
		return nil, nil
	}
	if e == nil {
		if len(buf)%2 != 0 {
			return nil, corrupt("levels of %d bytes", len(buf))
		}
		if err := bud.take(uint64(len(buf)), "levels"); err != nil {
			return nil, err
		}
		out := make([]uint16, len(buf)/2)
		for i := range out {
			out[i] = binary.LittleEndian.Uint16(buf[2*i:])
		}
		return out, nil
	}
	if err := bud.items(n, "the page's levels"); err != nil {
		return nil, err
	}
	dec, err := newBlockDecoder(e)
	if err != nil {
		return nil, err
	}
	return levels(dec, buf, int(n), bud)
}

// scalarBuffer reads one value framed as Arrow buffers: one buffer for a
// fixed-width value, two (offsets, bytes) for a variable-width one.
func scalarBuffer(buf []byte) (*block, error) {
	if len(buf) < 4 {
		return nil, corrupt("constant value of %d bytes", len(buf))
	}
	count := binary.LittleEndian.Uint32(buf)
	if count == 0 || count > 2 || len(buf) < 4+4*int(count) {
		return nil, corrupt("constant value of %d buffers", count)
	}
	lens := make([]int, count)
	off := 4 + 4*int(count)
	for i := range lens {
		lens[i] = int(binary.LittleEndian.Uint32(buf[4+4*i:]))
		if lens[i] < 0 || lens[i] > len(buf)-off {
			return nil, corrupt("constant value buffer of %d bytes", lens[i])
		}
		off += lens[i]
	}
	if off != len(buf) {
		return nil, corrupt("constant value has trailing bytes")
	}
	first := buf[4+4*int(count):]
	if count == 1 {
		return &block{n: 1, bits: 8 * lens[0], data: first[:lens[0]]}, nil
	}
	offsets, data := first[:lens[0]], first[lens[0]:lens[0]+lens[1]]
	var start, end uint64
	switch lens[0] {
	case 8:
		start, end = uint64(binary.LittleEndian.Uint32(offsets)), uint64(binary.LittleEndian.Uint32(offsets[4:]))
	case 16:
		start, end = binary.LittleEndian.Uint64(offsets), binary.LittleEndian.Uint64(offsets[8:])
	default:
		return nil, corrupt("constant value offsets of %d bytes", lens[0])
	}
	if start > end || end > uint64(len(data)) {
		return nil, corrupt("constant value offsets out of range")
	}
	return &block{n: 1, offsets: []int64{0, int64(end - start)}, data: data[start:end]}, nil
}
