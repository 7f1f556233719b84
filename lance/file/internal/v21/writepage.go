package v21

import (
	"encoding/binary"
	"errors"
	"math/bits"

	"github.com/lancens/lancens/lance/file/internal/encoding"
	"github.com/lancens/lancens/lance/internal/pb/enc21pb"
)

const (
	// narrowBytes: values this large or larger go to full-zip pages, as
	// Lance decides.
	narrowBytes = 256
	// chunkTarget is the value bytes a mini-block chunk aims at, and
	// chunkMax the most bytes a chunk may take whole (the u16 grammar's
	// limit, kept for 2.2 too).
	chunkTarget = 8 << 10
	chunkMax    = 32 << 10
	// chunkValues is the most values in a chunk.
	chunkValues = 4096
)

var errChunkTooLarge = errors.New("a mini-block chunk would exceed its size limit")

// page returns the buffered rows as a page.
func (l *leafEncoder) page() (encoding.EncodedPage, error) {
	in, rep, def := l.levels()
	layers, _ := parseLayers(in)
	plan := newLevelPlan(layers)
	s := &l.vals
	var (
		layout *enc21pb.PageLayout
		bufs   [][]byte
		err    error
	)
	switch {
	case s.n == 0:
		layout, bufs = constantPage(in, rep, def)
	case s.rowBytes() >= narrowBytes && s.bits%8 == 0,
		s.kind == sinkVariable && s.maxLen >= narrowBytes:
		layout, bufs = l.fullZip(in, rep, def, plan)
	default:
		layout, bufs, err = l.miniBlock(in, rep, def, plan)
		if errors.Is(err, errChunkTooLarge) && s.kind != sinkBool && s.bits%8 == 0 {
			layout, bufs = l.fullZip(in, rep, def, plan)
			err = nil
		}
	}
	if err != nil {
		return encoding.EncodedPage{}, err
	}
	return encoding.EncodedPage{
		Column:   l.column,
		Length:   l.rows,
		Priority: l.firstRow,
		Encoding: packAny(pageLayoutType, layout),
		Buffers:  bufs,
	}, nil
}

// levels returns the page's layers (from the leaf out) and its
// repetition and definition levels (nil when it needs none).
func (l *leafEncoder) levels() ([]enc21pb.RepDefLayer, []uint16, []uint16) {
	m := len(l.path)
	in := make([]enc21pb.RepDefLayer, m)
	for k, n := range l.path {
		var layer enc21pb.RepDefLayer
		switch {
		case n.kind != nodeList && l.nulls[k]:
			layer = enc21pb.RepDefLayer_REPDEF_NULLABLE_ITEM
		case n.kind != nodeList:
			layer = enc21pb.RepDefLayer_REPDEF_ALL_VALID_ITEM
		case l.nulls[k] && l.empties[k]:
			layer = enc21pb.RepDefLayer_REPDEF_NULL_AND_EMPTY_LIST
		case l.nulls[k]:
			layer = enc21pb.RepDefLayer_REPDEF_NULLABLE_LIST
		case l.empties[k]:
			layer = enc21pb.RepDefLayer_REPDEF_EMPTYABLE_LIST
		default:
			layer = enc21pb.RepDefLayer_REPDEF_ALL_VALID_LIST
		}
		in[m-1-k] = layer
	}
	layers, _ := parseLayers(in)
	plan := newLevelPlan(layers)
	var rep, def []uint16
	if l.lists > 0 {
		rep = l.rep
	}
	if plan.maxDef > 0 {
		def = make([]uint16, len(l.event))
		for i, ev := range l.event {
			if ev == 0 {
				continue
			}
			j := m - 1 - int((ev-1)/2)
			if ev%2 == 1 {
				def[i] = uint16(plan.nullLevel(j))
			} else {
				def[i] = uint16(plan.emptyLevel(j))
			}
		}
	}
	return in, rep, def
}

// constantPage writes a page without values (its rows are null or empty
// lists): the layers, and the levels as raw u16 buffers.
func constantPage(layers []enc21pb.RepDefLayer, rep, def []uint16) (*enc21pb.PageLayout, [][]byte) {
	layout := &enc21pb.PageLayout{Layout: &enc21pb.PageLayout_ConstantLayout{ConstantLayout: &enc21pb.ConstantLayout{Layers: layers}}}
	return layout, [][]byte{u16Bytes(rep), u16Bytes(def)}
}

func u16Bytes(v []uint16) []byte {
	out := make([]byte, 2*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint16(out[2*i:], x)
	}
	return out
}

func flat(bits int) *enc21pb.CompressiveEncoding {
	return &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Flat{Flat: &enc21pb.Flat{BitsPerValue: uint64(bits)}}}
}

// valueEncoding returns the encoding of the sink's values, uncompressed.
func (s *valueSink) valueEncoding() *enc21pb.CompressiveEncoding {
	switch s.kind {
	case sinkVariable:
		return &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Variable{Variable: &enc21pb.Variable{Offsets: flat(8 * s.width)}}}
	case sinkVector:
		return &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_FixedSizeList{FixedSizeList: &enc21pb.FixedSizeList{
			ItemsPerValue: uint64(s.dim), HasValidity: s.itemNulls > 0, Values: flat(s.bits)}}}
	}
	return flat(s.bits)
}

// valueBytes returns the bytes values [v, v+n) take.
func (s *valueSink) span(v, n int) int {
	switch s.kind {
	case sinkVariable:
		return int(s.offsets[v+n]-s.offsets[v]) + s.width*(n+2)
	case sinkBool:
		return (n + 7) / 8
	case sinkVector:
		b := (n*s.dim*s.bits + 7) / 8
		if s.itemNulls > 0 {
			b += (n*s.dim + 7) / 8
		}
		return b
	}
	return n * s.bits / 8
}

// chunkBuffers returns the value buffers of a chunk holding values
// [v, v+n).
func (s *valueSink) chunkBuffers(v, n int) [][]byte {
	switch s.kind {
	case sinkBool:
		return [][]byte{appendBits(nil, 0, s.bitmap, v, n)}
	case sinkVariable:
		head := s.width * (n + 1)
		out := make([]byte, 0, head+int(s.offsets[v+n]-s.offsets[v]))
		for i := 0; i <= n; i++ {
			o := uint64(head) + uint64(s.offsets[v+i]-s.offsets[v])
			if s.width == 4 {
				out = binary.LittleEndian.AppendUint32(out, uint32(o))
			} else {
				out = binary.LittleEndian.AppendUint64(out, o)
			}
		}
		out = append(out, s.data[s.offsets[v]:s.offsets[v+n]]...)
		// Lance wants the buffer a whole number of offsets long.
		for len(out)%s.width != 0 {
			out = append(out, 0)
		}
		return [][]byte{out}
	case sinkVector:
		var items []byte
		if s.bits == 1 {
			items = appendBits(nil, 0, s.data, v*s.dim, n*s.dim)
		} else {
			rb := s.dim * s.bits / 8
			items = s.data[v*rb : (v+n)*rb]
		}
		if s.itemNulls > 0 {
			return [][]byte{appendBits(nil, 0, s.bitmap, v*s.dim, n*s.dim), items}
		}
		return [][]byte{items}
	}
	w := s.bits / 8
	return [][]byte{s.data[v*w : (v+n)*w]}
}

// chunkSize returns how many of the remaining values (from v) the next
// chunk takes: all of them when they fit (the last chunk), else the most
// a power of two allows within chunkTarget bytes (at least 2, and 8 for
// booleans, whose chunks must be whole bytes).
func (s *valueSink) chunkSize(v int) int {
	rest := s.n - v
	if rest <= chunkValues && s.span(v, rest) <= chunkTarget {
		return rest
	}
	least := 2
	if s.kind == sinkBool || (s.kind == sinkVector && s.bits == 1) {
		least = 8
	}
	n := least
	for n*2 <= min(chunkValues, rest) && s.span(v, n*2) <= chunkTarget {
		n *= 2
	}
	return min(n, rest)
}

// miniBlock writes a mini-block page. It returns errChunkTooLarge when a
// chunk cannot fit its limits (a row with thousands of empty lists).
func (l *leafEncoder) miniBlock(layers []enc21pb.RepDefLayer, rep, def []uint16, plan *levelPlan) (*enc21pb.PageLayout, [][]byte, error) {
	s := &l.vals
	large := l.enc.large
	sizeWidth := 2
	if large {
		sizeWidth = 4
	}
	var meta, chunks, repIndex []byte
	// For the repetition index: each chunk's rows that end in it and the
	// levels after its last row start, fixed up when the next chunk
	// starts a row.
	var index [][2]uint64
	pos := 0
	for v := 0; v < s.n; {
		n := s.chunkSize(v)
		for {
			last := v+n == s.n
			end := len(l.event)
			if !last {
				end = nextPositions(def, plan, pos, n)
			}
			chunk, err := s.chunk(rep, def, pos, end, v, n, sizeWidth)
			if err == nil {
				word := uint64(len(chunk)/8-1) << 4
				if !last {
					word |= uint64(bits.Len(uint(n)) - 1)
				}
				if large {
					meta = binary.LittleEndian.AppendUint32(meta, uint32(word))
				} else {
					meta = binary.LittleEndian.AppendUint16(meta, uint16(word))
				}
				chunks = append(chunks, chunk...)
				if rep != nil {
					index = appendRepIndex(index, rep[pos:end], uint16(plan.maxRep), last)
				}
				pos, v = end, v+n
				break
			}
			// Too large: a smaller power of two (no longer the last chunk).
			smaller := 1 << (bits.Len(uint(n)) - 1)
			if smaller == n {
				smaller /= 2
			}
			least := 2
			if s.kind == sinkBool || (s.kind == sinkVector && s.bits == 1) {
				least = 8
			}
			if smaller < least {
				return nil, nil, err
			}
			n = smaller
		}
	}
	ml := &enc21pb.MiniBlockLayout{
		ValueCompression: s.valueEncoding(),
		Layers:           layers,
		NumBuffers:       uint64(len(s.chunkBuffers(0, 0))),
		NumItems:         uint64(s.n),
		HasLargeChunk:    large,
	}
	bufs := [][]byte{meta, chunks}
	if rep != nil {
		ml.RepCompression = flat(16)
		ml.RepetitionIndexDepth = 1
		for _, e := range index {
			repIndex = binary.LittleEndian.AppendUint64(repIndex, e[0])
			repIndex = binary.LittleEndian.AppendUint64(repIndex, e[1])
		}
		bufs = append(bufs, repIndex)
	}
	if def != nil {
		ml.DefCompression = flat(16)
	}
	return &enc21pb.PageLayout{Layout: &enc21pb.PageLayout_MiniBlockLayout{MiniBlockLayout: ml}}, bufs, nil
}
