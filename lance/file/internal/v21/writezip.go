package v21

import (
	"encoding/binary"

	"github.com/lancens/lancens/lance/internal/pb/enc21pb"
)

// nextPositions returns the position after the n-th visible one from
// pos: a mini-block chunk's levels end with its last value, and the
// levels of null or empty lists after it go to the next chunk.
func nextPositions(def []uint16, plan *levelPlan, pos, n int) int {
	if def == nil {
		return pos + n
	}
	for ; n > 0; pos++ {
		if int(def[pos]) <= plan.maxVisibleDef {
			n--
		}
	}
	return pos
}

// chunk writes one mini-block chunk: levels [ps, pe) and values [v, v+n).
func (s *valueSink) chunk(rep, def []uint16, ps, pe, v, n, sizeWidth int) ([]byte, error) {
	bufs := s.chunkBuffers(v, n)
	levels := 0
	if rep != nil || def != nil {
		levels = pe - ps
	}
	if levels > 0xffff || 2*levels > 0xffff {
		return nil, errChunkTooLarge
	}
	out := binary.LittleEndian.AppendUint16(nil, uint16(levels))
	var repBytes, defBytes []byte
	if rep != nil {
		repBytes = u16Bytes(rep[ps:pe])
		out = binary.LittleEndian.AppendUint16(out, uint16(len(repBytes)))
	}
	if def != nil {
		defBytes = u16Bytes(def[ps:pe])
		out = binary.LittleEndian.AppendUint16(out, uint16(len(defBytes)))
	}
	for _, b := range bufs {
		if sizeWidth == 2 {
			if len(b) > 0xffff {
				return nil, errChunkTooLarge
			}
			out = binary.LittleEndian.AppendUint16(out, uint16(len(b)))
		} else {
			out = binary.LittleEndian.AppendUint32(out, uint32(len(b)))
		}
	}
	pad := func() { out = append(out, make([]byte, pad8(len(out))-len(out))...) }
	pad()
	if rep != nil {
		out = append(out, repBytes...)
		pad()
	}
	if def != nil {
		out = append(out, defBytes...)
		pad()
	}
	for _, b := range bufs {
		out = append(out, b...)
		pad()
	}
	if len(out) > chunkMax {
		return nil, errChunkTooLarge
	}
	return out, nil
}

// appendRepIndex adds a chunk's entry to the repetition index, as Lance
// computes it: the rows that end in the chunk and the levels after its
// last row start (0 in the last chunk); a chunk that starts with a row
// makes the previous chunk's last row end there.
func appendRepIndex(index [][2]uint64, rep []uint16, maxRep uint16, last bool) [][2]uint64 {
	var rows, leftovers uint64
	if len(rep) == 0 {
		return append(index, [2]uint64{})
	}
	for _, r := range rep[1:] {
		if r == maxRep {
			rows++
		}
	}
	if !last {
		leftovers = uint64(len(rep))
		for i := len(rep) - 1; i >= 0; i-- {
			if rep[i] == maxRep {
				leftovers = uint64(len(rep) - i)
				break
			}
		}
	}
	if n := len(index); n > 0 && len(rep) > 0 && rep[0] == maxRep && index[n-1][1] != 0 {
		index[n-1][0]++
		index[n-1][1] = 0
	}
	if last {
		rows++
	}
	return append(index, [2]uint64{rows, leftovers})
}

// fullZip writes a full-zip page: each position's control word, then the
// value of each visible item (fixed width), or the length and bytes of
// each valid one (variable width); and, for lists or variable-width
// values, the repetition index of each row's offset.
func (l *leafEncoder) fullZip(layers []enc21pb.RepDefLayer, rep, def []uint16, plan *levelPlan) (*enc21pb.PageLayout, [][]byte) {
	s := &l.vals
	var bitsRep, bitsDef uint32
	if rep != nil {
		bitsRep = bitsFor(plan.maxRep)
	}
	if def != nil {
		bitsDef = bitsFor(plan.maxDef)
	}
	cwBytes := 0
	switch t := bitsRep + bitsDef; {
	case t == 0:
	case t <= 8:
		cwBytes = 1
	case t <= 16:
		cwBytes = 2
	default:
		cwBytes = 4
	}
	fixed := s.kind != sinkVariable
	positions := len(l.event)
	var data []byte
	var rowStarts []uint64
	v := 0
	if fixed && cwBytes == 0 && (s.kind != sinkVector || s.itemNulls == 0) {
		// Neither levels nor item validity: the values as they are.
		data, v, positions = s.data, s.n, 0
	}
	for i := 0; i < positions; i++ {
		var r, d uint16
		if rep != nil {
			r = rep[i]
		}
		if def != nil {
			d = def[i]
		}
		if rep == nil || r == uint16(plan.maxRep) {
			rowStarts = append(rowStarts, uint64(len(data)))
		}
		if cwBytes > 0 {
			w := uint32(r)<<bitsDef | uint32(d)
			switch cwBytes {
			case 1:
				data = append(data, byte(w))
			case 2:
				data = binary.LittleEndian.AppendUint16(data, uint16(w))
			default:
				data = binary.LittleEndian.AppendUint32(data, w)
			}
		}
		if int(d) > plan.maxVisibleDef {
			continue
		}
		switch {
		case fixed:
			data = append(data, s.zipped(v)...)
		case d == 0:
			b := s.data[s.offsets[v]:s.offsets[v+1]]
			if s.width == 4 {
				data = binary.LittleEndian.AppendUint32(data, uint32(len(b)))
			} else {
				data = binary.LittleEndian.AppendUint64(data, uint64(len(b)))
			}
			data = append(data, b...)
		}
		v++
	}
	rowStarts = append(rowStarts, uint64(len(data)))
	fz := &enc21pb.FullZipLayout{
		BitsRep:          bitsRep,
		BitsDef:          bitsDef,
		NumItems:         uint32(positions),
		NumVisibleItems:  uint32(s.n),
		ValueCompression: s.valueEncoding(),
		Layers:           layers,
	}
	if fixed {
		fz.Details = &enc21pb.FullZipLayout_BitsPerValue{BitsPerValue: uint32(8 * len(s.zipped(0)))}
	} else {
		fz.Details = &enc21pb.FullZipLayout_BitsPerOffset{BitsPerOffset: uint32(8 * s.width)}
	}
	bufs := [][]byte{data}
	if rep != nil || !fixed {
		bufs = append(bufs, bytePack(rowStarts))
	}
	return &enc21pb.PageLayout{Layout: &enc21pb.PageLayout_FullZipLayout{FullZipLayout: fz}}, bufs
}

// zipped returns fixed-width value v as full-zip stores it: a vector's
// item validity (when the page has null items), then its items.
func (s *valueSink) zipped(v int) []byte {
	if s.kind != sinkVector {
		w := s.bits / 8
		return s.data[v*w : (v+1)*w]
	}
	rb := s.dim * s.bits / 8
	items := s.data[v*rb : (v+1)*rb]
	if s.itemNulls == 0 {
		return items
	}
	return append(appendBits(nil, 0, s.bitmap, v*s.dim, s.dim), items...)
}

// bytePack writes values as unsigned integers of the fewest bytes (1, 2,
// 4 or 8) that hold the largest.
func bytePack(vals []uint64) []byte {
	width := 1
	for _, v := range vals {
		for width < 8 && v >= 1<<(8*width) {
			width *= 2
		}
	}
	out := make([]byte, 0, width*len(vals))
	for _, v := range vals {
		for k := 0; k < width; k++ {
			out = append(out, byte(v>>(8*k)))
		}
	}
	return out
}
