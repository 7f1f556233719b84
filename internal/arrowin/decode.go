// Package arrowin decodes Arrow IPC streams that arrive from outside
// (request bodies) without trusting them.
//
// arrow-go's IPC reader believes the sizes a stream declares: it allocates
// a message's metadata, its body and every decompressed buffer at the size
// written in the stream before reading a byte of it, and it walks the
// metadata's flatbuffer without bounds checks. A few bytes can then make
// it allocate terabytes, which ends the process. Decode stands between the
// stream and arrow-go: it reads each message itself, checks its metadata
// (framing, flatbuffer structure, the schema's size, the batch's nodes and
// buffers against the columns and against the body actually received, the
// declared decompressed sizes against the limits), decompresses buffers
// itself into memory it has sized and counted, and only then hands
// arrow-go a message it can decode without surprises. The decoded batches
// are checked again (see validate.go) before Decode returns them.
package arrowin

import (
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Limits bound what one stream may cost.
type Limits struct {
	// MaxBodyBytes is the most bytes read from the stream.
	MaxBodyBytes int64
	// MaxDecodedBytes is the most bytes of decoded buffers kept in memory,
	// counted after decompression. It also bounds the number of values
	// (each nested value counts).
	MaxDecodedBytes int64
	// MaxRows is the most rows over all record batches.
	MaxRows int64
}

// Decode reads an Arrow IPC stream: a schema, dictionaries, record batches,
// optionally compressed with LZ4_FRAME or ZSTD. A stream with a schema and
// no batches is valid. Returns an *Error when the stream is empty,
// malformed, inconsistent, or beyond the limits; nothing it allocates
// before refusing is larger than what the stream actually sent.
func Decode(r io.Reader, lim Limits) (*arrow.Schema, []arrow.RecordBatch, error) {
	decoded := &budget{left: lim.MaxDecodedBytes, what: "the body decodes to more than %d bytes, the limit for a request"}
	src := &source{
		r:       r,
		raw:     &budget{left: lim.MaxBodyBytes, what: "the body is larger than %d bytes, the limit for a request body"},
		decoded: decoded,
		rows:    &budget{left: lim.MaxRows, what: "the body holds more than %d rows, the limit for a request"},
		values:  &budget{left: lim.MaxDecodedBytes, what: "the body holds more than %d values, the limit for a request"},
	}
	for _, b := range []*budget{src.raw, decoded, src.rows, src.values} {
		b.limit = b.left
	}
	rd, err := ipc.NewReaderFromMessageReader(src, ipc.WithAllocator(&allocator{mem: memory.NewGoAllocator(), b: decoded}))
	if err != nil {
		return nil, nil, refusal(err)
	}
	defer rd.Release()
	schema := rd.Schema()
	v := newValidator()
	var batches []arrow.RecordBatch
	release := func() {
		for _, b := range batches {
			b.Release()
		}
	}
	for rd.Next() {
		rec := rd.RecordBatch()
		if err := v.record(rec); err != nil {
			release()
			return nil, nil, err
		}
		rec.Retain()
		batches = append(batches, rec)
	}
	if err := rd.Err(); err != nil {
		release()
		return nil, nil, refusal(err)
	}
	return schema, batches, nil
}

// refusal turns an error from arrow-go's reader into an *Error: ours when
// it wraps one, else a description of what arrow-go found wrong.
func refusal(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return invalid("the body is not a valid Arrow IPC stream: %v", err)
}

// budget is one limit and what is left of it.
type budget struct {
	left, limit int64
	what        string // the refusal, with %d for the limit
}

// take counts n against the budget. Returns an *Error when it does not fit.
func (b *budget) take(n int64) error {
	if n > b.left {
		return invalid(b.what, b.limit)
	}
	b.left -= n
	return nil
}

// allocator is the memory arrow-go allocates from while decoding (it does
// so only for dictionary deltas once Decode hands it uncompressed
// messages): it counts against the decoded-bytes budget and panics, which
// arrow-go's reader recovers into an error, when the budget is spent.
type allocator struct {
	mem memory.Allocator
	b   *budget
}

func (a *allocator) Allocate(n int) []byte {
	if err := a.b.take(int64(n)); err != nil {
		panic(err)
	}
	return a.mem.Allocate(n)
}

func (a *allocator) Reallocate(n int, old []byte) []byte {
	if err := a.b.take(int64(n - len(old))); err != nil {
		panic(err)
	}
	return a.mem.Reallocate(n, old)
}

func (a *allocator) Free(b []byte) {
	a.b.left += int64(len(b))
	a.mem.Free(b)
}

// source is the ipc.MessageReader arrow-go reads from: each message it
// returns has passed the checks in this package.
type source struct {
	r                          io.Reader
	raw, decoded, rows, values *budget

	schema *arrow.Schema
	dicts  map[int64]arrow.DataType // dictionary id → value type
	msg    *ipc.Message
	lz4    *lz4Reader
}

func (s *source) Retain() {}

func (s *source) Release() {
	if s.msg != nil {
		s.msg.Release()
		s.msg = nil
	}
}

// Message reads, checks and returns the next message; io.EOF at the end of
// the stream.
func (s *source) Message() (*ipc.Message, error) {
	s.Release()
	meta, err := s.metadata()
	if err != nil {
		return nil, err
	}
	m, err := parseMessage(meta)
	if err != nil {
		return nil, err
	}
	if m.kind == headerSchema {
		return s.schemaMessage(meta, m)
	}
	if s.schema == nil {
		return nil, invalid("the stream does not start with a schema")
	}
	valueType := arrow.DataType(nil)
	if m.kind == headerDictionary {
		if valueType = s.dicts[m.dictID]; valueType == nil {
			return nil, invalid("a dictionary batch has id %d, which no field uses", m.dictID)
		}
	} else if err := s.rows.take(m.batch.length); err != nil {
		return nil, err
	}
	l := newLayout(meta, m.batch, s.values)
	if valueType != nil {
		err = l.column(valueType, "dictionary", 0)
	} else {
		err = l.columns(s.schema)
	}
	if err != nil {
		return nil, err
	}
	body, err := s.body(meta, m, l.used)
	if err != nil {
		return nil, err
	}
	s.msg = ipc.NewMessage(memory.NewBufferBytes(meta), memory.NewBufferBytes(body))
	return s.msg, nil
}

// metadata reads the next message's framing and metadata; io.EOF at an
// end-of-stream marker or at the end of the body.
func (s *source) metadata() ([]byte, error) {
	var word [4]byte
	n, err := io.ReadFull(s.r, word[:])
	switch {
	case n == 0 && errors.Is(err, io.EOF) && s.schema == nil:
		return nil, invalid("the body is empty; send an Arrow IPC stream (a schema, then record batches)")
	case n == 0 && errors.Is(err, io.EOF):
		return nil, io.EOF
	case err != nil:
		return nil, readError(err)
	}
	size := int64(int32(le32(word[:])))
	if le32(word[:]) == 0xFFFFFFFF { // continuation marker, then the length
		if _, err := io.ReadFull(s.r, word[:]); err != nil {
			return nil, readError(err)
		}
		size = int64(int32(le32(word[:])))
	}
	switch {
	case size == 0:
		return nil, io.EOF
	case size < 8 || size > maxMetadataBytes:
		return nil, invalid("a message declares %d bytes of metadata (at most %d)", size, maxMetadataBytes)
	}
	if err := s.takeRaw(size + 8); err != nil {
		return nil, err
	}
	return readFull(s.r, size)
}

// takeRaw counts n bytes a message declares against the body-bytes budget.
// When they do not fit, it tells a body larger than the limit (an Error
// with TooLarge) from one that declares more than it holds (bad input): it
// reads on, keeping nothing, until the stream goes past the limit or ends.
// A failed read is returned as such (it may be the HTTP layer's own limit).
func (s *source) takeRaw(n int64) error {
	err := s.raw.take(n)
	if err == nil {
		return nil
	}
	read, copyErr := io.CopyN(io.Discard, s.r, s.raw.left+1)
	switch {
	case read > s.raw.left:
		e := invalid("the body is larger than %d bytes, the limit for a request body", s.raw.limit)
		e.TooLarge = true
		return e
	case copyErr != nil && !errors.Is(copyErr, io.EOF):
		return readError(copyErr)
	}
	return invalid("a message declares %d bytes, more than the body holds", n)
}

// body reads a message's body and returns the body arrow-go will decode.
func (s *source) body(meta []byte, m *message, used []bool) ([]byte, error) {
	b := m.batch
	if err := s.takeRaw(m.bodyLength); err != nil {
		return nil, err
	}
	if b.codec == codecNone {
		if err := s.decoded.take(m.bodyLength); err != nil {
			return nil, err
		}
	}
	for i := range b.nBuffers {
		off, n := b.buffer(meta, i)
		if off < 0 || n < 0 || off > m.bodyLength-n {
			return nil, invalid("buffer %d (%d bytes at %d) lies outside its message body of %d bytes", i, n, off, m.bodyLength)
		}
	}
	body, err := readFull(s.r, m.bodyLength)
	if err != nil || b.codec == codecNone {
		return body, err
	}
	if s.lz4 == nil {
		s.lz4 = newLZ4Reader()
	}
	out, err := inflate(meta, b, used, body, s.decoded, s.lz4)
	if err != nil {
		return nil, err
	}
	if m.bodyLengthAt != 0 {
		putLE64(meta[m.bodyLengthAt:], int64(len(out)))
	}
	return out, nil
}

// schemaMessage returns the stream's schema message after learning the
// schema from it.
func (s *source) schemaMessage(meta []byte, m *message) (*ipc.Message, error) {
	if s.schema != nil {
		return nil, invalid("the stream has a second schema")
	}
	if m.bodyLength != 0 {
		return nil, invalid("the schema message declares a body of %d bytes", m.bodyLength)
	}
	s.msg = ipc.NewMessage(memory.NewBufferBytes(meta), memory.NewBufferBytes(nil))
	rd, err := ipc.NewReaderFromMessageReader(&single{msg: s.msg})
	if err != nil {
		return nil, refusal(err)
	}
	s.schema = rd.Schema()
	rd.Release()
	s.dicts = map[int64]arrow.DataType{}
	for id, path := range m.dicts {
		dt, err := dictionaryAt(s.schema, path)
		if err != nil {
			return nil, err
		}
		s.dicts[id] = dt
	}
	return s.msg, nil
}

// dictionaryAt returns the value type of the dictionary-encoded field at
// path in schema.
func dictionaryAt(schema *arrow.Schema, path []int) (arrow.DataType, error) {
	if path[0] >= schema.NumFields() {
		return nil, corrupt("a dictionary refers to a missing field")
	}
	dt := schema.Field(path[0]).Type
	for _, i := range path[1:] {
		nt, ok := storage(dt).(arrow.NestedType)
		if !ok || i >= len(nt.Fields()) {
			return nil, corrupt("a dictionary refers to a missing field")
		}
		dt = nt.Fields()[i].Type
	}
	if ext, ok := dt.(arrow.ExtensionType); ok {
		dt = ext.StorageType()
	}
	d, ok := dt.(*arrow.DictionaryType)
	if !ok {
		return nil, corrupt("a dictionary id belongs to a field that is not dictionary-encoded")
	}
	return d.ValueType, nil
}

// storage returns the type whose children a field's children are: a
// dictionary's values, an extension's storage.
func storage(dt arrow.DataType) arrow.DataType {
	switch t := dt.(type) {
	case *arrow.DictionaryType:
		return storage(t.ValueType)
	case arrow.ExtensionType:
		return storage(t.StorageType())
	}
	return dt
}

// single is a message reader of one message, to learn a schema.
type single struct{ msg *ipc.Message }

func (s *single) Message() (*ipc.Message, error) {
	if s.msg == nil {
		return nil, io.EOF
	}
	m := s.msg
	s.msg = nil
	return m, nil
}
func (*single) Retain()  {}
func (*single) Release() {}

// readFull reads n bytes, growing its buffer as the bytes arrive, so a
// declared size the stream does not back costs at most twice the bytes
// actually sent.
func readFull(r io.Reader, n int64) ([]byte, error) {
	buf := make([]byte, 0, min(n, 64<<10))
	for int64(len(buf)) < n {
		if len(buf) == cap(buf) {
			buf = append(make([]byte, 0, min(n, 2*int64(cap(buf)))), buf...)
		}
		m, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+m]
		if err != nil && int64(len(buf)) < n {
			if errors.Is(err, io.EOF) {
				return nil, invalid("the body ends %d bytes into a part that declares %d", len(buf), n)
			}
			return nil, readError(err)
		}
	}
	return buf, nil
}

// readError is the error of a failed read of the body.
func readError(err error) *Error {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return invalid("the body ends in the middle of a message")
	}
	return &Error{msg: fmt.Sprintf("reading the body: %v", err), cause: err}
}
