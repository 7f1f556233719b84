package enc21

import (
	"encoding/binary"
	"fmt"

	"github.com/lancens/lancens/lance/internal/pb/enc21pb"
)

// A mini-block page cuts its values into chunks of a few KiB, each decoded
// as a whole. Its buffers are: 0, one metadata word per chunk (u16, or u32
// when has_large_chunk is set), whose low 4 bits are log2 of the chunk's
// value count (the last chunk holds the rest) and whose other bits are the
// chunk's size in 8-byte words, less one; 1, the chunks one after the
// other; then the dictionary, if the values are indices into one; then
// the repetition index, if there are lists (used for random access only).
//
// A chunk is: a u16 count of its levels, a u16 size of its repetition
// levels and one of its definition levels (each only when the page has
// that kind), a size for each value buffer (u16, or u32 with large
// chunks), padding to 8 bytes, then the repetition levels, the definition
// levels and each value buffer, each padded to 8 bytes.

// miniChunk locates one chunk in the chunk buffer.
type miniChunk struct {
	start, size int
	values      int
}

// parseChunkMeta reads the metadata buffer: one word per chunk.
func parseChunkMeta(meta []byte, large bool, items uint64, dataLen int) ([]miniChunk, error) {
	word := 2
	if large {
		word = 4
	}
	if len(meta)%word != 0 {
		return nil, corrupt("chunk metadata of %d bytes", len(meta))
	}
	n := len(meta) / word
	chunks := make([]miniChunk, n)
	off := 0
	var counted uint64
	for i := range chunks {
		w := readUint(meta, i*word, word)
		size := int((w>>4)+1) * 8
		if off+size > dataLen {
			return nil, corrupt("chunk %d ends at %d, past the %d bytes of chunks", i, off+size, dataLen)
		}
		var values uint64
		if i < n-1 {
			values = 1 << (w & 0xf)
		} else {
			if counted > items {
				return nil, corrupt("chunks hold more than the page's %d items", items)
			}
			values = items - counted
		}
		counted += values
		if counted > items {
			return nil, corrupt("chunks hold more than the page's %d items", items)
		}
		chunks[i] = miniChunk{start: off, size: size, values: int(values)}
		off += size
	}
	if n == 0 && items > 0 {
		return nil, corrupt("page of %d items has no chunks", items)
	}
	return chunks, nil
}

// miniPage holds what decoding the chunks of a page needs.
type miniPage struct {
	layout *enc21pb.MiniBlockLayout
	values *miniDecoder
	rep    blockDecoder
	def    blockDecoder
}

func decodeMiniBlock(l *enc21pb.MiniBlockLayout, buffers [][]byte, bud *budget) (*Page, error) {
	layers, err := parseLayers(l.GetLayers())
	if err != nil {
		return nil, err
	}
	if err := bud.items(l.GetNumItems(), "the page's items"); err != nil {
		return nil, err
	}
	mp := &miniPage{layout: l}
	if mp.values, err = newMiniDecoder(l.GetValueCompression()); err != nil {
		return nil, err
	}
	if uint64(mp.values.buffers) != l.GetNumBuffers() {
		return nil, corrupt("mini-block values take %d buffers, the layout says %d", mp.values.buffers, l.GetNumBuffers())
	}
	if e := l.GetRepCompression(); e != nil {
		if mp.rep, err = newBlockDecoder(e); err != nil {
			return nil, err
		}
	}
	if e := l.GetDefCompression(); e != nil {
		if mp.def, err = newBlockDecoder(e); err != nil {
			return nil, err
		}
	}
	want := 2
	if l.GetDictionary() != nil {
		want++
	}
	if l.GetRepetitionIndexDepth() > 0 {
		want++
	}
	if len(buffers) != want {
		return nil, corrupt("mini-block page has %d buffers, its layout needs %d", len(buffers), want)
	}
	chunks, err := parseChunkMeta(buffers[0], l.GetHasLargeChunk(), l.GetNumItems(), len(buffers[1]))
	if err != nil {
		return nil, err
	}
	p := &Page{plan: newLevelPlan(layers)}
	var vals blockAppender
	vals.bud = bud
	for i, c := range chunks {
		if err := mp.chunk(p, &vals, buffers[1][c.start:c.start+c.size], c.values, bud); err != nil {
			return nil, fmt.Errorf("chunk %d: %w", i, err)
		}
	}
	p.vals = vals.block()
	if l.GetDictionary() != nil {
		n := l.GetNumDictionaryItems()
		if err := bud.items(n, "the dictionary"); err != nil {
			return nil, err
		}
		dec, err := newBlockDecoder(l.GetDictionary())
		if err != nil {
			return nil, err
		}
		if p.dict, err = dec(buffers[2], int(n), bud); err != nil {
			return nil, err
		}
		if p.dict.null || p.dict.fsl != nil {
			return nil, unsupported("dictionaries of nulls or of fixed-size lists")
		}
	}
	return p, nil
}

// chunk decodes one chunk, appending its levels to p and values to vals.
func (mp *miniPage) chunk(p *Page, vals *blockAppender, buf []byte, n int, bud *budget) error {
	l := mp.layout
	sizeWidth := 2
	if l.GetHasLargeChunk() {
		sizeWidth = 4
	}
	off := 0
	read := func(width int) (int, error) {
		if off+width > len(buf) {
			return 0, corrupt("chunk header past the chunk")
		}
		v := int(readUint(buf, off, width))
		off += width
		return v, nil
	}
	numLevels, err := read(2)
	if err != nil {
		return err
	}
	repSize, defSize := -1, -1
	if mp.rep != nil {
		if repSize, err = read(2); err != nil {
			return err
		}
	}
	if mp.def != nil {
		if defSize, err = read(2); err != nil {
			return err
		}
	}
	sizes := make([]int, mp.values.buffers)
	for i := range sizes {
		if sizes[i], err = read(sizeWidth); err != nil {
			return err
		}
	}
	off = pad8(off)
	take := func(size int) ([]byte, error) {
		if size < 0 || off+size > len(buf) {
			return nil, corrupt("chunk buffer of %d bytes past the chunk", size)
		}
		b := buf[off : off+size]
		off = pad8(off + size)
		return b, nil
	}
	if mp.rep != nil {
		b, err := take(repSize)
		if err != nil {
			return err
		}
		lv, err := levels(mp.rep, b, numLevels, bud)
		if err != nil {
			return err
		}
		p.rep = append(p.rep, lv...)
	}
	if mp.def != nil {
		b, err := take(defSize)
		if err != nil {
			return err
		}
		lv, err := levels(mp.def, b, numLevels, bud)
		if err != nil {
			return err
		}
		p.def = append(p.def, lv...)
	}
	bufs := make([][]byte, len(sizes))
	for i, s := range sizes {
		if bufs[i], err = take(s); err != nil {
			return err
		}
	}
	b, err := mp.values.decode(bufs, n, bud)
	if err != nil {
		return err
	}
	if b.n != n {
		return corrupt("chunk decodes to %d values, not %d", b.n, n)
	}
	return vals.append(b)
}

// levels decodes a buffer of n repetition or definition levels.
func levels(dec blockDecoder, buf []byte, n int, bud *budget) ([]uint16, error) {
	if err := bud.take(2*uint64(n), "levels"); err != nil {
		return nil, err
	}
	b, err := dec(buf, n, bud)
	if err != nil {
		return nil, err
	}
	if b.n != n || b.variable() || b.fsl != nil {
		return nil, corrupt("levels are not %d fixed-width values", n)
	}
	out := make([]uint16, n)
	switch {
	case b.null:
	case b.scalar:
		if len(b.data) != 2 {
			return nil, corrupt("constant levels of %d bytes", len(b.data))
		}
		v := binary.LittleEndian.Uint16(b.data)
		for i := range out {
			out[i] = v
		}
	case b.bits == 16:
		for i := range out {
			out[i] = binary.LittleEndian.Uint16(b.data[2*i:])
		}
	default:
		return nil, corrupt("levels of %d bits", b.bits)
	}
	return out, nil
}
