// Package arrowin decodes Arrow IPC streams that arrive from outside
// (request bodies) without trusting them.
//
// arrow-go's IPC reader believes the sizes a stream declares: it allocates
// a message's metadata, its body and every decompressed buffer at the size
// written in the stream before reading a byte of it, and it walks the
// metadata's flatbuffer without bounds checks. A few bytes can then make
// it allocate terabytes, which ends the process. A Reader stands between
// the stream and arrow-go: it reads each message itself, checks its
// metadata (framing, flatbuffer structure, the schema's size, the batch's
// nodes and buffers against the columns and against the body actually
// received, the declared decompressed sizes against the limits),
// decompresses buffers itself into memory it has sized and counted, and
// only then hands arrow-go a message it can decode without surprises. The
// decoded batches are checked again (see validate.go) before Next returns
// them.
//
// Streaming. NewReader reads the schema message and nothing more, so a
// caller can refuse a body of the wrong schema before decoding a batch;
// Next then decodes one record batch at a time, so a body's batches never
// need to be in memory together. What one stream may cost in all is
// bounded by Limits; what the streams decoded at the same time hold
// together is bounded by a shared Budget. Before reading a message, the
// Reader reserves its metadata (unless small) and its body as sent, sizes
// its framing and metadata declare; before decompressing, its buffers'
// decompressed sizes, which their prefixes declare. It returns the bytes
// as they stop being held: the raw ones once the batch is decoded, the
// decoded ones when the batch is released (its last Release),
// dictionaries' when the Reader closes. A compression bomb therefore
// costs what it declares only if the budget has room for it, and never
// more than it declares.
package arrowin

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Limits bound what one stream may cost.
type Limits struct {
	// MaxBodyBytes is the most bytes read from the stream.
	MaxBodyBytes int64
	// MaxDecodedBytes is the most bytes the stream's buffers decode to in
	// all, counted after decompression. It also bounds the number of values
	// (each nested value counts).
	MaxDecodedBytes int64
	// MaxRows is the most rows over all record batches.
	MaxRows int64
	// Budget, when set, is the memory this stream shares with the others
	// decoded at the same time (see the package doc).
	Budget Budget
}

// Budget is memory shared by the streams decoded at the same time.
type Budget interface {
	// Reserve takes n bytes, or returns why it cannot; the stream then
	// fails with that error, unchanged.
	Reserve(n int64) error
	// Return gives back n bytes Reserve took.
	Return(n int64)
}

// Reader decodes an Arrow IPC stream: a schema, dictionaries, record
// batches, optionally compressed with LZ4_FRAME or ZSTD. A stream with a
// schema and no batches is valid.
type Reader struct {
	src *source
	rd  *ipc.Reader
	v   *validator
}

// NewReader reads the stream's schema message, and nothing past it.
// Returns an *Error when the stream is empty, malformed or beyond the
// limits (the Budget's error, unchanged, when it has no room for the
// schema); nothing it allocates before refusing is larger than what the
// stream actually sent. Close the Reader when done with it.
func NewReader(r io.Reader, lim Limits) (*Reader, error) {
	decoded := &budget{left: lim.MaxDecodedBytes, what: "the body decodes to more than %d bytes, the limit for a request"}
	src := &source{
		r:       r,
		raw:     &budget{left: lim.MaxBodyBytes, what: "the body is larger than %d bytes, the limit for a request body"},
		decoded: decoded,
		rows:    &budget{left: lim.MaxRows, what: "the body holds more than %d rows, the limit for a request"},
		values:  &budget{left: lim.MaxDecodedBytes, what: "the body holds more than %d values, the limit for a request"},
		shared:  &reservations{budget: lim.Budget},
	}
	for _, b := range []*budget{src.raw, decoded, src.rows, src.values} {
		b.limit = b.left
	}
	rd, err := ipc.NewReaderFromMessageReader(src, ipc.WithAllocator(&allocator{mem: memory.NewGoAllocator(), b: decoded, src: src}))
	if err != nil {
		src.shared.close()
		return nil, src.refusal(err)
	}
	// The schema message is read and parsed; its bytes are garbage now.
	src.shared.give(src.transient)
	src.transient = 0
	return &Reader{src: src, rd: rd, v: newValidator()}, nil
}

// Schema returns the stream's schema.
func (r *Reader) Schema() *arrow.Schema { return r.rd.Schema() }

// Next decodes and returns the next record batch, which the caller owns
// and must release; io.EOF after the last. Returns an *Error when the
// stream is malformed, inconsistent or beyond the limits, and the Budget's
// error, unchanged, when the budget has no room for the next message; the
// stream is over after any error.
func (r *Reader) Next() (arrow.RecordBatch, error) {
	if !r.rd.Next() {
		if err := r.rd.Err(); err != nil {
			return nil, r.src.refusal(err)
		}
		return nil, io.EOF
	}
	rec := r.rd.RecordBatch()
	if err := r.v.record(rec); err != nil {
		return nil, err
	}
	rec.Retain()
	s := r.src
	s.shared.give(s.transient)
	kept := s.batchKept
	s.transient, s.batchKept = 0, 0
	if s.shared.budget == nil {
		return rec, nil
	}
	return &heldBatch{RecordBatch: rec, refs: 1, release: func() { s.shared.give(kept) }}, nil
}

// Close releases the reader and returns to the Budget every byte the
// stream still holds, those of batches not yet released included (their
// release then returns nothing).
func (r *Reader) Close() {
	r.rd.Release()
	r.src.shared.close()
}

// refusal turns an error from arrow-go's reader into the error the stream
// fails with: the Budget's when it had no room, ours when it wraps one,
// else a description of what arrow-go found wrong.
func (s *source) refusal(err error) error {
	if s.spent != nil {
		return s.spent
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return invalid("the body is not a valid Arrow IPC stream: %v", err)
}

// freeMetadataBytes is the most metadata a message may have without
// reserving it from the Budget: a stream holds one message's metadata at a
// time, so what goes unreserved is bounded by the streams being read, and
// a schema (a few hundred bytes, usually) can be read while the Budget is
// taken by others.
const freeMetadataBytes = 64 << 10

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

// reservations is what one stream holds of a shared Budget (none when
// budget is nil). Bytes given back after close are not returned again:
// close returned them.
type reservations struct {
	budget Budget
	mu     sync.Mutex
	held   int64
	closed bool
}

// take reserves n bytes of the budget. Returns the Budget's error.
func (r *reservations) take(n int64) error {
	if r.budget == nil || n <= 0 {
		return nil
	}
	if err := r.budget.Reserve(n); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		r.budget.Return(n)
		return nil
	}
	r.held += n
	return nil
}

// give returns n of the bytes held.
func (r *reservations) give(n int64) {
	if r.budget == nil || n <= 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	n = min(n, r.held)
	r.held -= n
	r.budget.Return(n)
}

// close returns every byte held.
func (r *reservations) close() {
	if r.budget == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.closed {
		r.closed = true
		r.budget.Return(r.held)
		r.held = 0
	}
}

// heldBatch is a batch whose decoded bytes are reserved from the Budget
// until its last reference is released.
type heldBatch struct {
	arrow.RecordBatch
	refs    int64
	release func()
}

func (b *heldBatch) Retain() { atomic.AddInt64(&b.refs, 1) }

func (b *heldBatch) Release() {
	if atomic.AddInt64(&b.refs, -1) == 0 {
		b.RecordBatch.Release()
		b.release()
	}
}

// allocator is the memory arrow-go allocates from while decoding (it does
// so only for dictionary deltas once the Reader hands it uncompressed
// messages): it counts against the decoded-bytes limit and the shared
// Budget (held until the Reader closes), and panics, which arrow-go's
// reader recovers into an error, when either is spent.
type allocator struct {
	mem memory.Allocator
	b   *budget
	src *source
}

func (a *allocator) take(n int64) {
	if err := a.b.take(n); err != nil {
		panic(err)
	}
	if err := a.src.shared.take(n); err != nil {
		a.src.spent = err
		panic(err)
	}
}

func (a *allocator) Allocate(n int) []byte {
	a.take(int64(n))
	return a.mem.Allocate(n)
}

func (a *allocator) Reallocate(n int, old []byte) []byte {
	a.take(int64(n - len(old)))
	return a.mem.Reallocate(n, old)
}

func (a *allocator) Free(b []byte) {
	a.b.left += int64(len(b))
	a.src.shared.give(int64(len(b)))
	a.mem.Free(b)
}

// source is the ipc.MessageReader arrow-go reads from: each message it
// returns has passed the checks in this package.
type source struct {
	r                          io.Reader
	raw, decoded, rows, values *budget

	// shared is what the stream holds of the Budget: transient is the part
	// read since the last batch that is garbage once the batch is decoded
	// (metadata, compressed bodies), batchKept the last batch's decoded
	// buffers; dictionaries keep theirs until the Reader closes. spent is
	// the Budget's error, once it had no room.
	shared               *reservations
	transient, batchKept int64
	spent                error

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
	if size > freeMetadataBytes {
		if err := s.reserve(size); err != nil {
			return nil, err
		}
		s.transient += size
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

// body reads a message's body and returns the body arrow-go will decode,
// reserving its bytes (and those of its decompressed buffers) from the
// shared Budget first.
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
	if err := s.reserve(m.bodyLength); err != nil {
		return nil, err
	}
	body, err := readFull(s.r, m.bodyLength)
	if err != nil {
		return nil, err
	}
	if b.codec == codecNone {
		s.keep(m, m.bodyLength)
		return body, nil
	}
	s.transient += m.bodyLength
	if s.lz4 == nil {
		s.lz4 = newLZ4Reader()
	}
	out, err := inflate(meta, b, used, body, s.decoded, s.lz4, func(n int64) error {
		if err := s.reserve(n); err != nil {
			return err
		}
		s.keep(m, n)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if m.bodyLengthAt != 0 {
		putLE64(meta[m.bodyLengthAt:], int64(len(out)))
	}
	return out, nil
}

// reserve takes n bytes of the shared Budget, which the stream holds until
// it gives them back (see source.shared). Returns the Budget's error.
func (s *source) reserve(n int64) error {
	if err := s.shared.take(n); err != nil {
		s.spent = err
		return err
	}
	return nil
}

// keep notes that n reserved bytes are the decoded buffers of message m:
// a batch's stay reserved until the batch is released, a dictionary's
// until the Reader closes.
func (s *source) keep(m *message, n int64) {
	if m.kind != headerDictionary {
		s.batchKept += n
	}
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
		return nil, s.refusal(err)
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
