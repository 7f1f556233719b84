package v21

import (
	"context"
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/lancens/lancens/lance/file/internal/encoding"
	"github.com/lancens/lancens/lance/internal/pb/enc21pb"
)

// A mini-block page cuts its values into chunks of a few KiB, each decoded
// as a whole. Its buffers are: 0, one metadata word per chunk (u16, or u32
// when has_large_chunk is set), whose low 4 bits are log2 of the chunk's
// value count (the last chunk holds the rest) and whose other bits are the
// chunk's size in 8-byte words, less one; 1, the chunks one after the
// other; then the dictionary, if the values are indices into one; then,
// when the page has lists, the repetition index: per chunk, the number of
// rows that end in it and the number of items after its last row start
// when that row goes on in the next chunk (u64 each).
//
// A chunk is: a u16 count of its levels, a u16 size of its repetition
// levels and one of its definition levels (each only when the page has
// that kind), a size for each value buffer (u16, or u32 with large
// chunks), padding to 8 bytes, then the repetition levels, the definition
// levels and each value buffer, each padded to 8 bytes.
//
// A read fetches the metadata, the dictionary and the repetition index,
// then only the chunks that hold the rows it wants.

// miniLayout is a parsed mini-block layout.
type miniLayout struct {
	l      *enc21pb.MiniBlockLayout
	plan   *levelPlan
	values *miniDecoder
	rep    blockDecoder
	def    blockDecoder
	dict   blockDecoder
	// buffers is the number of page buffers the layout needs.
	buffers int
}

func newMiniLayout(l *enc21pb.MiniBlockLayout) (*miniLayout, error) {
	layers, err := parseLayers(l.GetLayers())
	if err != nil {
		return nil, err
	}
	m := &miniLayout{l: l, plan: newLevelPlan(layers), buffers: 2}
	if m.values, err = newMiniDecoder(l.GetValueCompression()); err != nil {
		return nil, err
	}
	if uint64(m.values.buffers) != l.GetNumBuffers() {
		return nil, corrupt("mini-block values take %d buffers, the layout says %d", m.values.buffers, l.GetNumBuffers())
	}
	if e := l.GetRepCompression(); e != nil {
		if m.rep, err = newBlockDecoder(e); err != nil {
			return nil, err
		}
	}
	if e := l.GetDefCompression(); e != nil {
		if m.def, err = newBlockDecoder(e); err != nil {
			return nil, err
		}
	}
	if (m.rep != nil) != (m.plan.maxRep > 0) {
		return nil, corrupt("mini-block repetition levels disagree with the layers")
	}
	if e := l.GetDictionary(); e != nil {
		if m.dict, err = newBlockDecoder(e); err != nil {
			return nil, err
		}
		m.buffers++
	}
	if l.GetRepetitionIndexDepth() > 0 {
		if m.rep == nil {
			return nil, corrupt("a repetition index without repetition levels")
		}
		m.buffers++
	}
	if err := (budget{}).items(l.GetNumItems(), "the page's items"); err != nil {
		return nil, err
	}
	return m, nil
}

// miniChunk locates one chunk in the chunk buffer and says which values,
// and (with lists) which rows, it holds.
type miniChunk struct {
	start, size int
	firstValue  int
	values      int
	// firstRow is the first row that starts in the chunk and rows the
	// number that do; preamble is set when the chunk begins with the rest
	// of a row started before it, trailer when its last row goes on after
	// it. Without lists, rows are values.
	firstRow, rows    int
	preamble, trailer bool
}

// parseChunkMeta reads the metadata buffer: one word per chunk.
func parseChunkMeta(meta []byte, large bool, items uint64, dataLen uint64) ([]miniChunk, error) {
	word := 2
	if large {
		word = 4
	}
	if len(meta)%word != 0 {
		return nil, corrupt("chunk metadata of %d bytes", len(meta))
	}
	n := len(meta) / word
	if n == 0 && items > 0 {
		return nil, corrupt("page of %d items has no chunks", items)
	}
	chunks := make([]miniChunk, n)
	var off, counted uint64
	for i := range chunks {
		w := readUint(meta, i*word, word)
		size := ((w >> 4) + 1) * 8
		if off+size > dataLen {
			return nil, corrupt("chunk %d ends at %d, past the %d bytes of chunks", i, off+size, dataLen)
		}
		var values uint64
		if i < n-1 {
			values = 1 << (w & 0xf)
		} else if counted <= items {
			values = items - counted
		}
		if counted+values > items {
			return nil, corrupt("chunks hold more than the page's %d items", items)
		}
		chunks[i] = miniChunk{start: int(off), size: int(size), firstValue: int(counted), values: int(values),
			firstRow: int(counted), rows: int(values)}
		counted += values
		off += size
	}
	return chunks, nil
}

// applyRepIndex sets each chunk's rows from the repetition index (depth+1
// u64 values per chunk, the first two being the rows that end in the
// chunk and the items after its last row start, when that row goes on).
func applyRepIndex(chunks []miniChunk, index []byte, depth int, rows uint64) error {
	stride := 8 * (depth + 1)
	if len(index) != stride*len(chunks) {
		return corrupt("repetition index of %d bytes for %d chunks", len(index), len(chunks))
	}
	var first uint64
	preamble := false
	for i := range chunks {
		ends := binary.LittleEndian.Uint64(index[i*stride:])
		partial := binary.LittleEndian.Uint64(index[i*stride+8:])
		trailer := partial > 0
		starts := ends
		if trailer {
			starts++
		}
		if preamble {
			if starts == 0 {
				return corrupt("repetition index: chunk %d starts fewer than no rows", i)
			}
			starts--
		}
		if starts > rows || first+starts > rows {
			return corrupt("repetition index holds more than the page's %d rows", rows)
		}
		c := &chunks[i]
		c.firstRow, c.rows, c.preamble, c.trailer = int(first), int(starts), preamble, trailer
		first += starts
		preamble = trailer
	}
	if first != rows || preamble {
		return corrupt("repetition index holds %d rows, the page %d", first, rows)
	}
	return nil
}

// chunkRun is a run of consecutive chunks to decode and the rows of the
// page it yields.
type chunkRun struct {
	first, last      int // chunks
	firstRow, endRow int
}

// plan returns the runs of chunks that hold the rows of local (sorted,
// disjoint), merging runs that share or touch chunks.
func planChunks(chunks []miniChunk, local []span) ([]chunkRun, error) {
	var runs []chunkRun
	for _, r := range local {
		// The chunk where row r.start starts.
		c0 := sort.Search(len(chunks), func(i int) bool { return chunks[i].firstRow+chunks[i].rows > int(r.start) })
		if c0 == len(chunks) {
			return nil, corrupt("row %d is past the page's chunks", r.start)
		}
		// The chunk where row r.end-1 starts, and those it goes on into.
		c1 := sort.Search(len(chunks), func(i int) bool { return chunks[i].firstRow+chunks[i].rows > int(r.end-1) })
		if c1 == len(chunks) {
			return nil, corrupt("row %d is past the page's chunks", r.end-1)
		}
		if chunks[c1].trailer && int(r.end) == chunks[c1].firstRow+chunks[c1].rows {
			for c1+1 < len(chunks) {
				c1++
				if chunks[c1].rows > 0 {
					break
				}
			}
		}
		run := chunkRun{first: c0, last: c1, firstRow: int(r.start), endRow: int(r.end)}
		if n := len(runs); n > 0 && runs[n-1].last >= run.first-1 {
			runs[n-1].last = max(runs[n-1].last, run.last)
			runs[n-1].endRow = run.endRow
			continue
		}
		runs = append(runs, run)
	}
	// A run decodes from the first row that starts in its first chunk.
	for i := range runs {
		runs[i].firstRow = chunks[runs[i].first].firstRow
	}
	return runs, nil
}

// read decodes the runs of chunks of page pg that hold the rows of local.
func (m *miniLayout) read(ctx context.Context, f encoding.File, pg *encoding.Page, local []span, bud budget) ([]*Page, error) {
	l := m.l
	if len(pg.Buffers) != m.buffers {
		return nil, corrupt("mini-block page has %d buffers, its layout needs %d", len(pg.Buffers), m.buffers)
	}
	want := []encoding.Range{pg.Buffers[0]}
	if m.dict != nil {
		want = append(want, pg.Buffers[2])
	}
	if l.GetRepetitionIndexDepth() > 0 {
		want = append(want, pg.Buffers[len(pg.Buffers)-1])
	}
	got, err := f.ReadRanges(ctx, want)
	if err != nil {
		return nil, err
	}
	chunks, err := parseChunkMeta(got[0], l.GetHasLargeChunk(), l.GetNumItems(), pg.Buffers[1].Length)
	if err != nil {
		return nil, err
	}
	var dict *block
	if m.dict != nil {
		n := l.GetNumDictionaryItems()
		if err := bud.items(n, "the dictionary"); err != nil {
			return nil, err
		}
		if dict, err = m.dict(got[1], int(n), bud); err != nil {
			return nil, fmt.Errorf("dictionary: %w", err)
		}
		if dict.null || dict.fsl != nil || dict.n != int(n) {
			return nil, unsupported("dictionaries of nulls or of fixed-size lists")
		}
	}
	var runs []chunkRun
	switch {
	case m.rep == nil:
		if l.GetNumItems() != pg.Length {
			return nil, corrupt("mini-block page of %d rows holds %d items", pg.Length, l.GetNumItems())
		}
		runs, err = planChunks(chunks, local)
	case l.GetRepetitionIndexDepth() > 0:
		if err = applyRepIndex(chunks, got[len(got)-1], int(l.GetRepetitionIndexDepth()), pg.Length); err == nil {
			runs, err = planChunks(chunks, local)
		}
	case len(chunks) == 0:
		if pg.Length != 0 {
			err = corrupt("mini-block page of %d rows has no chunks", pg.Length)
		}
	default:
		// Lists without an index: decode the whole page.
		runs = []chunkRun{{first: 0, last: len(chunks) - 1, firstRow: 0, endRow: int(pg.Length)}}
	}
	if err != nil {
		return nil, err
	}
	ranges := make([]encoding.Range, len(runs))
	for i, r := range runs {
		start, end := chunks[r.first].start, chunks[r.last].start+chunks[r.last].size
		ranges[i] = encoding.Range{Offset: pg.Buffers[1].Offset + uint64(start), Length: uint64(end - start)}
	}
	data, err := f.ReadRanges(ctx, ranges)
	if err != nil {
		return nil, err
	}
	pages := make([]*Page, len(runs))
	for i, r := range runs {
		if pages[i], err = m.decodeRun(data[i], chunks, r, dict, bud); err != nil {
			return nil, err
		}
	}
	return pages, nil
}

// decodeRun decodes the chunks of one run, whose bytes are buf.
func (m *miniLayout) decodeRun(buf []byte, chunks []miniChunk, r chunkRun, dict *block, bud budget) (*Page, error) {
	p := &Page{plan: m.plan, dict: dict, firstRow: r.firstRow, rows: r.endRow - r.firstRow}
	vals := blockAppender{bud: bud, single: r.first == r.last}
	for _, c := range chunks[r.first : r.last+1] {
		vals.values += c.values
		vals.bytes += c.size
	}
	base := chunks[r.first].start
	for i := r.first; i <= r.last; i++ {
		c := chunks[i]
		if err := m.chunk(p, &vals, buf[c.start-base:c.start-base+c.size], c.values, bud); err != nil {
			return nil, fmt.Errorf("chunk %d: %w", i, err)
		}
	}
	p.vals = vals.block()
	if chunks[r.first].preamble {
		if err := p.trimPreamble(); err != nil {
			return nil, err
		}
	}
	if err := p.index(bud); err != nil {
		return nil, err
	}
	return p, nil
}

// trimPreamble drops the positions before the first row start: the end
// of a row that began in an earlier chunk.
func (p *Page) trimPreamble() error {
	n := 0
	for n < len(p.rep) && int(p.rep[n]) != p.plan.maxRep {
		n++
	}
	if n == len(p.rep) {
		return corrupt("a chunk run starts no row")
	}
	visible := n
	if p.def != nil {
		visible = 0
		for _, d := range p.def[:n] {
			if int(d) <= p.plan.maxVisibleDef {
				visible++
			}
		}
		p.def = p.def[n:]
	}
	p.rep = p.rep[n:]
	p.skipped = visible
	return nil
}

// chunk decodes one chunk, appending its levels to p and values to vals.
func (m *miniLayout) chunk(p *Page, vals *blockAppender, buf []byte, n int, bud budget) error {
	sizeWidth := 2
	if m.l.GetHasLargeChunk() {
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
	repSize, defSize := 0, 0
	if m.rep != nil {
		if repSize, err = read(2); err != nil {
			return err
		}
	}
	if m.def != nil {
		if defSize, err = read(2); err != nil {
			return err
		}
	}
	sizes := make([]int, m.values.buffers)
	for i := range sizes {
		if sizes[i], err = read(sizeWidth); err != nil {
			return err
		}
	}
	off = pad8(off)
	take := func(size int) ([]byte, error) {
		if off+size > len(buf) {
			return nil, corrupt("chunk buffer of %d bytes past the chunk", size)
		}
		b := buf[off : off+size]
		off = pad8(off + size)
		return b, nil
	}
	if m.rep != nil {
		b, err := take(repSize)
		if err != nil {
			return err
		}
		lv, err := levels(m.rep, b, numLevels, bud)
		if err != nil {
			return err
		}
		p.rep = append(p.rep, lv...)
	}
	if m.def != nil {
		b, err := take(defSize)
		if err != nil {
			return err
		}
		lv, err := levels(m.def, b, numLevels, bud)
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
	b, err := m.values.decode(bufs, n, bud)
	if err != nil {
		return err
	}
	if b.n != n {
		return corrupt("chunk decodes to %d values, not %d", b.n, n)
	}
	return vals.append(b)
}

// levels decodes a buffer of n repetition or definition levels.
func levels(dec blockDecoder, buf []byte, n int, bud budget) ([]uint16, error) {
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
