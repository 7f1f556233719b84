package arrowin

import (
	"encoding/binary"
	"slices"
)

// Values from Arrow's Message.fbs and Schema.fbs.
const (
	headerSchema     = 1
	headerDictionary = 2
	headerRecord     = 3

	metadataV4 = 3
	metadataV5 = 4

	fbTypeTimestamp = 10
	fbTypeUnion     = 14

	codecNone = -1
	codecLZ4  = 0
	codecZSTD = 1
)

// Limits on metadata. They are far above any real schema and keep what
// arrow-go builds from a schema (one Go value per field, key and value)
// proportional to the metadata's size.
const (
	maxMetadataBytes = 16 << 20
	maxFields        = 100_000 // fields of a schema, nested ones included
	maxDepth         = 64      // nesting of fields, arrow-go's own limit when loading arrays
)

// message is what a Reader learns from one message's metadata.
type message struct {
	kind         int
	bodyLength   int64
	bodyLengthAt int // where bodyLength is stored in the metadata; 0 when absent

	batch  batch // record and dictionary batches
	dictID int64 // dictionary batches

	// dicts maps each dictionary id of a schema to the field it encodes:
	// the index of a top-level field, then of a child at each level.
	dicts map[int64][]int
}

// batch locates the parts of a RecordBatch table inside the metadata.
type batch struct {
	length              int64
	nodes, nNodes       int // FieldNode structs: length, null count
	buffers, nBuffers   int // Buffer structs: offset, length
	variadic, nVariadic int // counts of the variadic buffers of view columns
	codec               int
}

func (b batch) node(meta []byte, i int) (length, nulls int64) {
	at := b.nodes + 16*i
	return int64(binary.LittleEndian.Uint64(meta[at:])), int64(binary.LittleEndian.Uint64(meta[at+8:]))
}

func (b batch) buffer(meta []byte, i int) (offset, length int64) {
	at := b.buffers + 16*i
	return int64(binary.LittleEndian.Uint64(meta[at:])), int64(binary.LittleEndian.Uint64(meta[at+8:]))
}

func (b batch) setBuffer(meta []byte, i int, offset, length int64) {
	at := b.buffers + 16*i
	binary.LittleEndian.PutUint64(meta[at:], uint64(offset))
	binary.LittleEndian.PutUint64(meta[at+8:], uint64(length))
}

func (b batch) variadicCount(meta []byte, i int) int64 {
	return int64(binary.LittleEndian.Uint64(meta[b.variadic+8*i:]))
}

// parseMessage checks the structure of a Message flatbuffer and returns
// what it declares. Returns an *Error for anything malformed, for message
// kinds other than schemas and (dictionary) batches, for metadata versions
// before V4 and for big-endian schemas.
func parseMessage(meta []byte) (*message, error) {
	root, err := rootTable(meta)
	if err != nil {
		return nil, err
	}
	version, err := root.int16Field(0)
	if err != nil {
		return nil, err
	}
	if version != metadataV4 && version != metadataV5 {
		return nil, invalid("Arrow metadata version %d is not read (V4 and V5 are)", int(version)+1)
	}
	kind, err := root.byteField(1)
	if err != nil {
		return nil, err
	}
	m := &message{kind: int(kind)}
	if m.bodyLengthAt, err = root.field(3, 8); err != nil {
		return nil, err
	}
	if m.bodyLength, err = root.int64Field(3); err != nil {
		return nil, err
	}
	if m.bodyLength < 0 {
		return nil, invalid("a message declares a body of %d bytes", m.bodyLength)
	}
	w := &walker{budget: 2*len(meta) + 1024}
	if err := w.table(root); err != nil {
		return nil, err
	}
	if err := w.keyValues(root, 4); err != nil {
		return nil, err
	}
	hdr, ok, err := root.child(2)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, corrupt("a message has no header")
	}
	switch m.kind {
	case headerSchema:
		m.dicts, err = w.schema(hdr)
	case headerRecord:
		m.batch, err = w.batch(hdr)
	case headerDictionary:
		err = w.dictionaryBatch(hdr, m)
	default:
		return nil, invalid("an Arrow IPC stream holds schema, dictionary and record batch messages, not message type %d", m.kind)
	}
	if err != nil {
		return nil, err
	}
	return m, nil
}

// walker visits the metadata's tables, strings and vectors the way arrow-go
// will, charging each to a budget: a flatbuffer may point many times at the
// same table, which would make a small schema expand without bound.
type walker struct {
	budget int
	fields int
}

func (w *walker) charge(n int) error {
	w.budget -= n
	if w.budget < 0 {
		return corrupt("the metadata refers to its own parts over and over")
	}
	return nil
}

func (w *walker) table(t table) error { return w.charge(t.size) }

func (w *walker) str(t table, slot int) error {
	_, n, err := t.vector(slot, 1)
	if err != nil {
		return err
	}
	return w.charge(4 + n)
}

// tables visits the vector of tables in field slot.
func (w *walker) tables(t table, slot int, visit func(i int, c table) error) error {
	start, n, err := t.vector(slot, 4)
	if err != nil {
		return err
	}
	if err := w.charge(4 + 4*n); err != nil {
		return err
	}
	for i := range n {
		c, err := t.element(start, i)
		if err != nil {
			return err
		}
		if err := w.table(c); err != nil {
			return err
		}
		if err := visit(i, c); err != nil {
			return err
		}
	}
	return nil
}

// keyValues visits custom metadata (KeyValue tables of two strings).
func (w *walker) keyValues(t table, slot int) error {
	return w.tables(t, slot, func(_ int, kv table) error {
		if err := w.str(kv, 0); err != nil {
			return err
		}
		return w.str(kv, 1)
	})
}

func (w *walker) scalars(t table, slot, width int) error {
	_, n, err := t.vector(slot, width)
	if err != nil {
		return err
	}
	return w.charge(4 + width*n)
}

func (w *walker) schema(s table) (map[int64][]int, error) {
	if err := w.table(s); err != nil {
		return nil, err
	}
	endianness, err := s.int16Field(0)
	if err != nil {
		return nil, err
	}
	if endianness != 0 {
		return nil, invalid("big-endian Arrow data is not accepted")
	}
	if err := w.keyValues(s, 2); err != nil {
		return nil, err
	}
	if err := w.scalars(s, 3, 8); err != nil { // features
		return nil, err
	}
	dicts := map[int64][]int{}
	err = w.tables(s, 1, func(i int, f table) error { return w.field(f, []int{i}, dicts) })
	return dicts, err
}

// field visits a Field table at path (its index and its ancestors').
func (w *walker) field(f table, path []int, dicts map[int64][]int) error {
	if len(path) > maxDepth {
		return invalid("the schema nests fields deeper than %d levels", maxDepth)
	}
	if w.fields++; w.fields > maxFields {
		return invalid("the schema has more than %d fields", maxFields)
	}
	if err := w.str(f, 0); err != nil {
		return err
	}
	if typ, ok, err := f.child(3); err != nil {
		return err
	} else if ok {
		if err := w.fieldType(f, typ); err != nil {
			return err
		}
	}
	if enc, ok, err := f.child(4); err != nil {
		return err
	} else if ok {
		if err := w.dictionaryEncoding(enc, path, dicts); err != nil {
			return err
		}
	}
	if err := w.keyValues(f, 6); err != nil {
		return err
	}
	return w.tables(f, 5, func(i int, c table) error { return w.field(c, append(path, i), dicts) })
}

// fieldType visits the type table of a field, whose union tag is field
// slot 2 of f.
func (w *walker) fieldType(f, typ table) error {
	if err := w.table(typ); err != nil {
		return err
	}
	tag, err := f.byteField(2)
	if err != nil {
		return err
	}
	switch tag {
	case fbTypeTimestamp:
		return w.str(typ, 1) // time zone
	case fbTypeUnion:
		return w.scalars(typ, 1, 4) // type ids
	}
	return nil
}

func (w *walker) dictionaryEncoding(enc table, path []int, dicts map[int64][]int) error {
	if err := w.table(enc); err != nil {
		return err
	}
	id, err := enc.int64Field(0)
	if err != nil {
		return err
	}
	if _, dup := dicts[id]; dup {
		return invalid("two fields use dictionary id %d", id)
	}
	dicts[id] = slices.Clone(path)
	if idx, ok, err := enc.child(1); err != nil {
		return err
	} else if ok {
		return w.table(idx)
	}
	return nil
}

func (w *walker) batch(b table) (batch, error) {
	var out batch
	if err := w.table(b); err != nil {
		return out, err
	}
	var err error
	if out.length, err = b.int64Field(0); err != nil {
		return out, err
	}
	if out.length < 0 {
		return out, invalid("a record batch declares %d rows", out.length)
	}
	if out.nodes, out.nNodes, err = b.vector(1, 16); err != nil {
		return out, err
	}
	if out.buffers, out.nBuffers, err = b.vector(2, 16); err != nil {
		return out, err
	}
	if out.variadic, out.nVariadic, err = b.vector(4, 8); err != nil {
		return out, err
	}
	out.codec = codecNone
	c, ok, err := b.child(3)
	if err != nil || !ok {
		return out, err
	}
	codec, err := c.byteField(0)
	if err != nil {
		return out, err
	}
	method, err := c.byteField(1)
	if err != nil {
		return out, err
	}
	if (codec != codecLZ4 && codec != codecZSTD) || method != 0 {
		return out, invalid("unknown body compression (codec %d, method %d); LZ4_FRAME and ZSTD buffers are read", codec, method)
	}
	out.codec = int(codec)
	return out, nil
}

func (w *walker) dictionaryBatch(d table, m *message) error {
	if err := w.table(d); err != nil {
		return err
	}
	var err error
	if m.dictID, err = d.int64Field(0); err != nil {
		return err
	}
	data, ok, err := d.child(1)
	if err != nil {
		return err
	}
	if !ok {
		return corrupt("a dictionary batch has no data")
	}
	m.batch, err = w.batch(data)
	return err
}
