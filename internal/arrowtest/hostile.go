package arrowtest

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	flatbuffers "github.com/google/flatbuffers/go"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// HostileSchema is the schema of the valid templates HostileBodies corrupts:
// a table created from it accepts the templates as inserts.
var HostileSchema = Schema("id", arrow.PrimitiveTypes.Int64, "name", arrow.BinaryTypes.String)

// HostileRows are the rows of the valid templates.
const HostileRows = `[{"id":1,"name":"ann"},{"id":2,"name":null},{"id":3,"name":"cat"}]`

// HostileBody is a crafted Arrow IPC request body a server must refuse.
type HostileBody struct {
	Name string
	Body []byte
}

// Stream writes batches of schema as an IPC stream, with writer options
// such as ipc.WithZstd().
func Stream(t testing.TB, schema *arrow.Schema, batches []arrow.RecordBatch, opts ...ipc.Option) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, append([]ipc.Option{ipc.WithSchema(schema)}, opts...)...)
	for _, b := range batches {
		if err := w.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// HostileTemplates returns valid streams of HostileSchema and HostileRows:
// uncompressed, LZ4_FRAME and ZSTD.
func HostileTemplates(t testing.TB) map[string][]byte {
	t.Helper()
	rec := Record(t, HostileSchema, HostileRows)
	return map[string][]byte{
		"plain": Stream(t, HostileSchema, []arrow.RecordBatch{rec}),
		"lz4":   Stream(t, HostileSchema, []arrow.RecordBatch{rec}, ipc.WithLZ4()),
		"zstd":  Stream(t, HostileSchema, []arrow.RecordBatch{rec}, ipc.WithZstd()),
	}
}

// HostileBodies returns one body of every crafted class: declared sizes
// far beyond the bytes sent or any sane limit (metadata, message bodies,
// compressed buffers, row and value counts, field and metadata counts),
// decompression bombs (true and lying), a schema whose fields share
// subtrees so that it expands exponentially, nesting beyond any use,
// corrupt offsets and invalid UTF-8 that still decode.
func HostileBodies(t testing.TB) []HostileBody {
	t.Helper()
	tpl := HostileTemplates(t)
	var out []HostileBody
	add := func(name string, body []byte) { out = append(out, HostileBody{name, body}) }

	// The audit's 72-byte body: a continuation marker, then a metadata
	// length of almost 2 GiB, then 64 zero bytes.
	add("metadata_length_2GiB_72_bytes", append([]byte{0xff, 0xff, 0xff, 0xff, 0xf0, 0xff, 0xff, 0x7f}, make([]byte, 64)...))
	add("metadata_length_1GiB_then_schema", func() []byte {
		b := clone(tpl["plain"])
		binary.LittleEndian.PutUint32(b[4:], 1<<30)
		return b
	}())
	add("legacy_length_2GiB", append([]byte{0xf0, 0xff, 0xff, 0x7f}, make([]byte, 64)...))

	for _, v := range []struct {
		name string
		val  int64
	}{{"1TiB", 1 << 40}, {"negative", -8}, {"8GiB", 8 << 30}} {
		b := clone(tpl["plain"])
		batch := messages(t, b)[1]
		putInt64(batch.meta, batch.messageSlot(t, 3), v.val)
		add("body_length_"+v.name, b)
	}

	for _, codec := range []string{"lz4", "zstd"} {
		b := clone(tpl[codec])
		batch := messages(t, b)[1]
		off, n := batch.buffer(t, 1) // the id column's values
		if n < 8 {
			t.Fatalf("%s template: buffer 1 holds %d bytes", codec, n)
		}
		putInt64(batch.body, off, 64<<30)
		add(codec+"_buffer_declares_64GiB", b)
	}

	corrupt := func(name string, tplName string, edit func(m message)) {
		b := clone(tpl[tplName])
		edit(messages(t, b)[1])
		add(name, b)
	}
	corrupt("node_length_1TiB", "plain", func(m message) { m.setNode(t, 0, 1<<40, 0) })
	corrupt("node_length_negative", "plain", func(m message) { m.setNode(t, 1, -5, 0) })
	corrupt("null_count_above_length", "plain", func(m message) { m.setNode(t, 1, 3, 1<<40) })
	corrupt("rows_and_nodes_1TiB", "plain", func(m message) {
		putInt64(m.meta, m.batchSlot(t, 0), 1<<40)
		m.setNode(t, 0, 1<<40, 0)
		m.setNode(t, 1, 1<<40, 0)
	})
	corrupt("rows_and_nodes_1TiB_zstd", "zstd", func(m message) {
		putInt64(m.meta, m.batchSlot(t, 0), 1<<40)
		m.setNode(t, 0, 1<<40, 0)
		m.setNode(t, 1, 1<<40, 0)
	})
	corrupt("buffer_length_1TiB", "plain", func(m message) { m.setBuffer(t, 1, 0, 1<<40) })
	corrupt("buffer_offset_1TiB", "plain", func(m message) { m.setBuffer(t, 3, 1<<40, 16) })
	corrupt("buffer_negative", "plain", func(m message) { m.setBuffer(t, 4, -16, 8) })
	corrupt("string_offsets_past_data", "plain", func(m message) {
		off, _ := m.buffer(t, 3)
		binary.LittleEndian.PutUint32(m.body[off+12:], 1<<30)
	})
	corrupt("string_offsets_decreasing", "plain", func(m message) {
		off, _ := m.buffer(t, 3)
		binary.LittleEndian.PutUint32(m.body[off+4:], 5)
		binary.LittleEndian.PutUint32(m.body[off+8:], 1)
	})
	corrupt("string_not_utf8", "plain", func(m message) {
		off, _ := m.buffer(t, 4)
		copy(m.body[off:], []byte{0xff, 0xfe, 0xc0})
	})
	corrupt("lz4_buffer_shorter_than_prefix", "lz4", func(m message) {
		off, _ := m.buffer(t, 1)
		m.setBuffer(t, 1, int64(off), 3)
	})
	corrupt("zstd_codec_unknown", "zstd", func(m message) { m.meta[m.compressionCodec(t)] = 9 })

	add("schema_fields_count_2G", func() []byte {
		b := clone(tpl["plain"])
		s := messages(t, b)[0]
		binary.LittleEndian.PutUint32(s.meta[s.schemaFieldsVector(t):], math.MaxInt32)
		return b
	}())
	add("schema_shared_subtrees_2pow40_fields", frame(dagSchema(40), nil))
	add("schema_nested_10000_deep", frame(deepSchema(10000), nil))

	// Decompression bombs: bodies of a few hundred KB whose buffers decode
	// to gigabytes.
	add("zstd_bomb_1GiB_128M_rows", bomb(t, tpl["zstd"], 128<<20, 0, zstdZeros(t, 1<<30), zstdZeros(t, 0)))
	add("zstd_bomb_1.6GiB_8M_rows", bomb(t, tpl["zstd"], 8<<20, 1600<<20, zstdZeros(t, 8*(8<<20)), zstdZeros(t, 1600<<20)))
	add("zstd_lying_24B_is_64MiB", func() []byte {
		b := clone(tpl["zstd"])
		return replaceBuffer(t, b, 1, withPrefix(24, zstdZeros(t, 64<<20)))
	}())
	add("lz4_lying_24B_is_1MiB", func() []byte {
		b := clone(tpl["lz4"])
		return replaceBuffer(t, b, 1, withPrefix(24, lz4Zeros(t, 1<<20)))
	}())
	add("zstd_window_512MiB_lying", func() []byte {
		b := clone(tpl["zstd"])
		// A frame whose header asks for a 512 MiB window, then one raw
		// block of 32 bytes where the buffer declares 24.
		f := []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 19 << 3, 0x01, 0x01, 0x00} // block header: 32<<3 | last
		f = append(f, make([]byte, 32)...)
		return replaceBuffer(t, b, 1, withPrefix(24, f))
	}())
	return out
}

// Flip returns a copy of body with 1 to 4 random bytes replaced.
func Flip(body []byte, rng *rand.Rand) []byte {
	b := clone(body)
	for range 1 + rng.IntN(4) {
		b[rng.IntN(len(b))] = byte(rng.IntN(256))
	}
	return b
}

// DictionaryStream returns a valid stream whose column "d" is
// dictionary-encoded strings, and the byte offset of its first index.
func DictionaryStream(t testing.TB) ([]byte, int) {
	t.Helper()
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}
	schema := Schema("d", dt)
	col := Column(t, dt, `["x","y","x"]`)
	b := Stream(t, schema, []arrow.RecordBatch{array.NewRecordBatch(schema, []arrow.Array{col}, 3)})
	ms := messages(t, b)
	batch := ms[len(ms)-1]
	off, _ := batch.buffer(t, 1)
	return b, batch.bodyStart + off
}

func clone(b []byte) []byte { return append([]byte(nil), b...) }

func putInt64(b []byte, at int, v int64) { binary.LittleEndian.PutUint64(b[at:], uint64(v)) }

// message is one IPC message inside a stream; meta and body alias the
// stream's bytes.
type message struct {
	meta, body []byte
	bodyStart  int
	end        int
}

// messages splits an IPC stream (with continuation markers) into messages.
func messages(t testing.TB, stream []byte) []message {
	t.Helper()
	var out []message
	for p := 0; p+8 <= len(stream); {
		n := int(binary.LittleEndian.Uint32(stream[p+4:]))
		if n == 0 {
			break
		}
		meta := stream[p+8 : p+8+n]
		tab := root(meta)
		bodyLen := 0
		if o := tab.Offset(10); o != 0 {
			bodyLen = int(tab.GetInt64(tab.Pos + flatbuffers.UOffsetT(o)))
		}
		start := p + 8 + n
		out = append(out, message{meta: meta, body: stream[start : start+bodyLen], bodyStart: start, end: start + bodyLen})
		p = start + bodyLen
	}
	if len(out) < 1 {
		t.Fatal("no IPC messages in the template")
	}
	return out
}

func root(meta []byte) flatbuffers.Table {
	return flatbuffers.Table{Bytes: meta, Pos: flatbuffers.GetUOffsetT(meta)}
}

// slotPos returns the byte position of a table's field, failing the test
// when the field is absent.
func slotPos(t testing.TB, tab flatbuffers.Table, slot int) int {
	t.Helper()
	o := tab.Offset(flatbuffers.VOffsetT(4 + 2*slot))
	if o == 0 {
		t.Fatalf("flatbuffer field %d is absent", slot)
	}
	return int(tab.Pos) + int(o)
}

func (m message) messageSlot(t testing.TB, slot int) int { return slotPos(t, root(m.meta), slot) }

// header returns the message's header table (Schema, RecordBatch, …).
func (m message) header(t testing.TB) flatbuffers.Table {
	tab := root(m.meta)
	p := flatbuffers.UOffsetT(slotPos(t, tab, 2))
	return flatbuffers.Table{Bytes: m.meta, Pos: tab.Indirect(p)}
}

func (m message) batchSlot(t testing.TB, slot int) int { return slotPos(t, m.header(t), slot) }

// vector returns the position of the first element of a vector field.
func vector(t testing.TB, tab flatbuffers.Table, slot int) int {
	p := flatbuffers.UOffsetT(slotPos(t, tab, slot))
	return int(tab.Vector(p - tab.Pos))
}

func (m message) setNode(t testing.TB, i int, length, nulls int64) {
	at := vector(t, m.header(t), 1) + 16*i
	putInt64(m.meta, at, length)
	putInt64(m.meta, at+8, nulls)
}

func (m message) buffer(t testing.TB, i int) (offset, length int) {
	at := vector(t, m.header(t), 2) + 16*i
	return int(binary.LittleEndian.Uint64(m.meta[at:])), int(binary.LittleEndian.Uint64(m.meta[at+8:]))
}

func (m message) setBuffer(t testing.TB, i int, offset, length int64) {
	at := vector(t, m.header(t), 2) + 16*i
	putInt64(m.meta, at, offset)
	putInt64(m.meta, at+8, length)
}

// compressionCodec returns the position of the BodyCompression codec byte.
func (m message) compressionCodec(t testing.TB) int {
	h := m.header(t)
	p := flatbuffers.UOffsetT(slotPos(t, h, 3))
	c := flatbuffers.Table{Bytes: m.meta, Pos: h.Indirect(p)}
	return slotPos(t, c, 0)
}

// schemaFieldsVector returns the position of the schema's fields vector
// length.
func (m message) schemaFieldsVector(t testing.TB) int { return vector(t, m.header(t), 1) - 4 }

// frame wraps flatbuffer metadata and a body into a stream with an
// end-of-stream marker.
func frame(meta, body []byte) []byte {
	for len(meta)%8 != 0 {
		meta = append(meta, 0)
	}
	out := binary.LittleEndian.AppendUint32([]byte{0xff, 0xff, 0xff, 0xff}, uint32(len(meta)))
	out = append(append(out, meta...), body...)
	return append(out, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0)
}

// schemaMessage builds Message{version V5, header Schema{fields: [top]}}
// around a field built by field.
func schemaMessage(field func(b *flatbuffers.Builder) flatbuffers.UOffsetT) []byte {
	b := flatbuffers.NewBuilder(1024)
	top := field(b)
	b.StartVector(4, 1, 4)
	b.PrependUOffsetT(top)
	fields := b.EndVector(1)
	b.StartObject(4) // Schema
	b.PrependUOffsetTSlot(1, fields, 0)
	schema := b.EndObject()
	b.StartObject(5)            // Message
	b.PrependInt16Slot(0, 4, 0) // MetadataVersion V5
	b.PrependByteSlot(1, 1, 0)  // header type Schema
	b.PrependUOffsetTSlot(2, schema, 0)
	b.PrependInt64Slot(3, 0, 0)
	b.Finish(b.EndObject())
	return b.FinishedBytes()
}

// fieldTable builds a Field of type typeID (an empty type table) with the
// given children.
func fieldTable(b *flatbuffers.Builder, typeID byte, children []flatbuffers.UOffsetT) flatbuffers.UOffsetT {
	name := b.CreateString("f")
	b.StartObject(0)
	typ := b.EndObject()
	var kids flatbuffers.UOffsetT
	if children != nil {
		b.StartVector(4, len(children), 4)
		for i := len(children) - 1; i >= 0; i-- {
			b.PrependUOffsetT(children[i])
		}
		kids = b.EndVector(len(children))
	}
	b.StartObject(7)
	b.PrependUOffsetTSlot(0, name, 0)
	b.PrependBoolSlot(1, true, false)
	b.PrependByteSlot(2, typeID, 0)
	b.PrependUOffsetTSlot(3, typ, 0)
	if children != nil {
		b.PrependUOffsetTSlot(5, kids, 0)
	}
	return b.EndObject()
}

const (
	fbTypeNull   = 1
	fbTypeStruct = 13
)

// dagSchema is a struct nested depth times whose two children are the same
// table: 2^depth fields to anyone who walks it as a tree.
func dagSchema(depth int) []byte {
	return schemaMessage(func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		f := fieldTable(b, fbTypeNull, nil)
		for range depth {
			f = fieldTable(b, fbTypeStruct, []flatbuffers.UOffsetT{f, f})
		}
		return f
	})
}

// deepSchema is a struct nested depth times.
func deepSchema(depth int) []byte {
	return schemaMessage(func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		f := fieldTable(b, fbTypeNull, nil)
		for range depth {
			f = fieldTable(b, fbTypeStruct, []flatbuffers.UOffsetT{f})
		}
		return f
	})
}

// withPrefix prepends the 8-byte uncompressed length of a compressed
// buffer.
func withPrefix(declared int64, compressed []byte) []byte {
	return append(binary.LittleEndian.AppendUint64(nil, uint64(declared)), compressed...)
}

// zstdZeros returns ZSTD frames that decode to n zero bytes: one frame of
// 1 MiB repeated, then one for the rest.
func zstdZeros(t testing.TB, n int64) []byte {
	t.Helper()
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedBestCompression))
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	const chunk = 1 << 20
	var out []byte
	if n >= chunk {
		f := enc.EncodeAll(make([]byte, chunk), nil)
		for range n / chunk {
			out = append(out, f...)
		}
	}
	return enc.EncodeAll(make([]byte, n%chunk), out)
}

// lz4Zeros returns an LZ4 frame that decodes to n zero bytes.
func lz4Zeros(t testing.TB, n int) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := lz4.NewWriter(&buf)
	if _, err := w.Write(make([]byte, n)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// replaceBuffer returns stream (a schema, one batch, end of stream) with
// the batch's buffer i replaced by data, the other buffers moved after it.
func replaceBuffer(t testing.TB, stream []byte, i int, data []byte) []byte {
	t.Helper()
	batch := messages(t, stream)[1]
	count := int(binary.LittleEndian.Uint32(batch.meta[vector(t, batch.header(t), 2)-4:]))
	bufs := make([][]byte, count)
	for j := range bufs {
		off, l := batch.buffer(t, j)
		bufs[j] = batch.body[off : off+l]
	}
	bufs[i] = data
	return rebuild(t, stream, bufs)
}

// bomb returns the ZSTD template (id int64, name utf8) rewritten to rows
// rows whose ids are ZSTD zeros and whose names are all empty but the last,
// which holds nameBytes zero bytes.
func bomb(t testing.TB, tpl []byte, rows int64, nameBytes int64, ids, names []byte) []byte {
	t.Helper()
	b := clone(tpl)
	batch := messages(t, b)[1]
	putInt64(batch.meta, batch.batchSlot(t, 0), rows)
	batch.setNode(t, 0, rows, 0)
	batch.setNode(t, 1, rows, 0)
	offsets := make([]byte, 4*(rows+1))
	binary.LittleEndian.PutUint32(offsets[len(offsets)-4:], uint32(nameBytes))
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	bufs := [][]byte{
		nil,
		withPrefix(8*rows, ids),
		nil,
		withPrefix(int64(len(offsets)), enc.EncodeAll(offsets, nil)),
		withPrefix(nameBytes, names),
	}
	return rebuild(t, b, bufs)
}

// rebuild lays bufs out as the body of stream's batch (8-byte aligned),
// rewriting its buffer entries and body length.
func rebuild(t testing.TB, stream []byte, bufs [][]byte) []byte {
	t.Helper()
	ms := messages(t, stream)
	batch := ms[1]
	var body []byte
	for j, d := range bufs {
		batch.setBuffer(t, j, int64(len(body)), int64(len(d)))
		body = append(body, d...)
		for len(body)%8 != 0 {
			body = append(body, 0)
		}
	}
	putInt64(batch.meta, batch.messageSlot(t, 3), int64(len(body)))
	out := clone(stream[:batch.bodyStart])
	out = append(out, body...)
	return append(out, stream[batch.end:]...)
}

// VectorBomb returns an LZ4_FRAME stream of schema {v:
// fixed_size_list<float32>[dim]} (ZeroVectors' schema) holding batches
// batches of rows zero vectors each: the audit's in-limit bomb is one batch
// of 9M rows of dimension 29, a 4.1 MB body that decodes to 1.04 GB. It is
// built without holding the decoded bytes.
func VectorBomb(t testing.TB, rows, dim, batches int) []byte {
	t.Helper()
	tpl := Stream(t, ZeroVectors(1, dim).Schema(), []arrow.RecordBatch{ZeroVectors(1, dim)}, ipc.WithLZ4())
	batch := messages(t, tpl)[1]
	putInt64(batch.meta, batch.batchSlot(t, 0), int64(rows))
	batch.setNode(t, 0, int64(rows), 0)
	batch.setNode(t, 1, int64(rows*dim), 0)
	values := int64(4 * rows * dim)
	b := rebuild(t, tpl, [][]byte{nil, nil, withPrefix(values, lz4ZerosStreamed(t, values))})
	ms := messages(t, b)
	one := b[ms[1].bodyStart-len(ms[1].meta)-8 : ms[1].end]
	out := clone(b[:ms[1].bodyStart-len(ms[1].meta)-8])
	for range batches {
		out = append(out, one...)
	}
	return append(out, b[ms[1].end:]...)
}

// lz4ZerosStreamed returns an LZ4 frame (as arrow-go writes them: 64 KiB
// blocks, no checksum) that decodes to n zero bytes, compressing a
// mebibyte at a time.
func lz4ZerosStreamed(t testing.TB, n int64) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := lz4.NewWriter(&buf)
	if err := w.Apply(lz4.ChecksumOption(false), lz4.BlockSizeOption(lz4.Block64Kb)); err != nil {
		t.Fatal(err)
	}
	zeros := make([]byte, 1<<20)
	for left := n; left > 0; left -= int64(len(zeros)) {
		if _, err := w.Write(zeros[:min(left, int64(len(zeros)))]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
