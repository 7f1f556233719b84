package vecindex

import (
	"encoding/binary"
	"hash/crc32"
	"math"
	"math/bits"
)

// The serialised form: magic, version, the parameters, the dimension and
// row count, the partition offsets, ids and centroids, the kind's row data
// (vectors, or quantizer, codes and biases, then graphs), the deletion
// bitmap, and a CRC-32C of everything before it. Integers are little-endian.
const (
	magic         = "LNVI"
	formatVersion = 1
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// MarshalBinary returns the serialised index, which Load reads back. It
// never fails.
func (ix *Index) MarshalBinary() ([]byte, error) {
	p := ix.params
	e := &encoder{b: make([]byte, 0, ix.sizeHint())}
	e.raw([]byte(magic))
	e.u32(formatVersion)
	e.u8(byte(p.Kind))
	e.u8(byte(p.Metric))
	for _, v := range []int{p.NumPartitions, p.TargetPartitionSize, p.NumSubVectors, p.NumBits,
		p.SampleRate, p.MaxIterations, p.M, p.EfConstruction} {
		e.int(v)
	}
	e.u64(uint64(p.Seed))
	e.int(ix.dim)
	e.int(len(ix.ids))
	for _, o := range ix.offsets {
		e.int(o)
	}
	e.i64s(ix.ids)
	if p.Metric == Hamming {
		e.raw(ix.bcentroids)
		e.raw(ix.bvecs)
	} else {
		e.f32s(ix.centroids)
	}
	switch {
	case ix.vecs != nil:
		e.f32s(ix.vecs)
		e.f32s(ix.norms)
	case ix.pq != nil:
		e.f32s(ix.pq.codebook)
	case ix.sq != nil:
		e.f32s(ix.sq.lo)
		e.f32s(ix.sq.step)
	}
	e.raw(ix.codes)
	e.f32s(ix.bias)
	if ix.codeLen > 0 {
		e.int(len(ix.anchors) / max(ix.dim, 1))
		e.f32s(ix.anchors)
		e.raw(ix.anchorOf)
	}
	for _, g := range ix.graphs {
		e.int(len(g.levels))
		for _, lv := range g.levels {
			e.int(len(lv.offsets) - 1)
			e.int(len(lv.links))
			e.i32s(lv.offsets)
			e.i32s(lv.links)
		}
	}
	words := make([]uint64, (len(ix.ids)+63)/64)
	if d := ix.deleted.Load(); d != nil {
		copy(words, d.bits)
	}
	for _, w := range words {
		e.u64(w)
	}
	e.u32(crc32.Checksum(e.b, crcTable))
	return e.b, nil
}

// sizeHint estimates the serialised size.
func (ix *Index) sizeHint() int {
	n := 256 + 8*len(ix.offsets) + 8*len(ix.ids) + 4*len(ix.centroids) + len(ix.bcentroids) + len(ix.bvecs) +
		4*len(ix.vecs) + 4*len(ix.norms) + len(ix.codes) + 4*len(ix.bias) + len(ix.ids)/8 +
		4*len(ix.anchors) + len(ix.anchorOf)
	for _, g := range ix.graphs {
		for _, lv := range g.levels {
			n += 16 + 4*len(lv.offsets) + 4*len(lv.links)
		}
	}
	return n
}

// Load reads an index written by MarshalBinary. It returns an error, never
// panicking, for data that is truncated, corrupt or of another format.
func Load(data []byte) (*Index, error) {
	if len(data) < len(magic)+8 || string(data[:len(magic)]) != magic {
		return nil, errCorruptf("not a vecindex index")
	}
	body := data[:len(data)-4]
	if crc32.Checksum(body, crcTable) != binary.LittleEndian.Uint32(data[len(data)-4:]) {
		return nil, errCorruptf("checksum mismatch")
	}
	d := &decoder{b: body[len(magic):]}
	if v := d.u32(); v != formatVersion {
		return nil, errCorruptf("unsupported format version %d", v)
	}
	ix := &Index{}
	ix.read(d)
	if d.err == nil && len(d.b) != 0 {
		d.fail("%d trailing bytes", len(d.b))
	}
	if d.err != nil {
		return nil, d.err
	}
	return ix, nil
}

func errCorruptf(format string, args ...any) error {
	d := &decoder{}
	d.fail(format, args...)
	return d.err
}

// read decodes and validates everything after the version into ix,
// recording any error in d.
func (ix *Index) read(d *decoder) {
	var p Params
	p.Kind, p.Metric = Kind(d.u8()), Metric(d.u8())
	for _, v := range []*int{&p.NumPartitions, &p.TargetPartitionSize, &p.NumSubVectors, &p.NumBits,
		&p.SampleRate, &p.MaxIterations, &p.M, &p.EfConstruction} {
		*v = d.int("parameter", math.MaxInt32)
	}
	p.Seed = int64(d.u64())
	ix.dim = d.int("dimension", math.MaxInt32)
	n := d.int("row count", math.MaxInt)
	if d.err != nil {
		return
	}
	if n == 0 || ix.dim == 0 {
		d.fail("empty index")
		return
	}
	if rp, err := p.resolve(n, ix.dim); err != nil || rp != p {
		d.fail("invalid parameters")
		return
	}
	ix.params = p
	ix.readLayout(d, n)
	if d.err != nil {
		return
	}
	ix.readRows(d, n)
	if d.err == nil && p.Kind.usesHNSW() {
		ix.readGraphs(d)
	}
	if d.err == nil {
		ix.readDeletions(d, n)
	}
}

// readLayout decodes the partition offsets, ids and centroids.
func (ix *Index) readLayout(d *decoder, n int) {
	parts, dim := ix.params.NumPartitions, ix.dim
	if d.length(parts+1, 1, 8); d.err != nil {
		return
	}
	ix.offsets = make([]int, parts+1)
	for i := range ix.offsets {
		ix.offsets[i] = d.int("offset", n)
		if i > 0 && ix.offsets[i] < ix.offsets[i-1] {
			d.fail("partition offsets decrease")
		}
		if i > 0 {
			ix.maxPart = max(ix.maxPart, ix.offsets[i]-ix.offsets[i-1])
		}
	}
	if ix.offsets[0] != 0 || ix.offsets[parts] != n {
		d.fail("partition offsets do not cover the rows")
	}
	ix.ids = d.i64s(n)
	if ix.params.Metric == Hamming {
		ix.bcentroids = d.bytes(d.length(parts, dim, 1))
		ix.bvecs = d.bytes(d.length(n, dim, 1))
	} else {
		ix.centroids = d.f32s(d.length(parts, dim, 4))
	}
}

// readRows decodes the kind's per-row data and quantizer.
func (ix *Index) readRows(d *decoder, n int) {
	p, dim := ix.params, ix.dim
	switch {
	case p.Metric == Hamming:
	case p.Kind == IVFFlat:
		ix.vecs = d.f32s(d.length(n, dim, 4))
		if p.Metric == Cosine {
			ix.norms = d.f32s(n)
		}
	case p.Kind.usesPQ():
		ix.pq = &productQuantizer{m: p.NumSubVectors, bits: p.NumBits, subDim: dim / p.NumSubVectors}
		ix.pq.codebook = d.f32s(d.length(p.NumSubVectors<<p.NumBits, ix.pq.subDim, 4))
		ix.codeLen = ix.pq.codeLen()
	default:
		ix.sq = &scalarQuantizer{lo: d.f32s(dim), step: d.f32s(dim)}
		ix.codeLen = dim
	}
	if ix.codeLen > 0 {
		ix.codes = d.bytes(d.length(n, ix.codeLen, 1))
		if p.Metric != Dot {
			ix.bias = d.f32s(n)
		}
		if na := d.int("anchors", maxAnchors); na > 0 {
			ix.anchors = d.f32s(d.length(na, dim, 4))
			ix.anchorOf = d.bytes(n)
			for _, a := range ix.anchorOf {
				if int(a) >= na {
					d.fail("anchor %d out of range", a)
					break
				}
			}
		}
	}
}

// readGraphs decodes and validates one HNSW graph per partition.
func (ix *Index) readGraphs(d *decoder) {
	ix.graphs = make([]graph, len(ix.offsets)-1)
	for p := range ix.graphs {
		size := ix.offsets[p+1] - ix.offsets[p]
		nl := d.int("graph levels", maxLevel+1)
		if d.err == nil && (size == 0) != (nl == 0) {
			d.fail("partition %d has %d rows and %d graph levels", p, size, nl)
		}
		if d.err != nil {
			return
		}
		g := &ix.graphs[p]
		g.levels = make([]graphLevel, nl)
		prev := size
		for l := range g.levels {
			count := d.int("graph nodes", prev)
			nlinks := d.int("graph links", math.MaxInt32)
			if d.err == nil && (count == 0 || (l == 0 && count != size)) {
				d.fail("partition %d graph level %d has %d nodes", p, l, count)
			}
			lv := &g.levels[l]
			lv.offsets = d.i32s(count + 1)
			lv.links = d.i32s(nlinks)
			if d.err != nil {
				return
			}
			if !lv.valid() {
				d.fail("partition %d graph level %d is malformed", p, l)
				return
			}
			prev = count
		}
	}
}

// valid reports whether lv's offsets run from 0 to len(links) without
// decreasing and every link names a node of the level.
func (lv *graphLevel) valid() bool {
	count := len(lv.offsets) - 1
	if lv.offsets[0] != 0 || int(lv.offsets[count]) != len(lv.links) {
		return false
	}
	for i := range count {
		if lv.offsets[i+1] < lv.offsets[i] {
			return false
		}
	}
	for _, x := range lv.links {
		if x < 0 || int(x) >= count {
			return false
		}
	}
	return true
}

// readDeletions decodes the deletion bitmap of n rows.
func (ix *Index) readDeletions(d *decoder, n int) {
	words := d.length((n+63)/64, 1, 8)
	if d.err != nil {
		return
	}
	del := &deletions{bits: make([]uint64, words)}
	for i := range del.bits {
		del.bits[i] = d.u64()
		del.count += bits.OnesCount64(del.bits[i])
	}
	if r := n % 64; r != 0 && del.bits[words-1]>>r != 0 {
		d.fail("deletion bitmap marks rows past the end")
	}
	if del.count > 0 {
		ix.deleted.Store(del)
	}
}
