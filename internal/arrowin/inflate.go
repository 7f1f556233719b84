package arrowin

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"sync"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

func le32(b []byte) uint32      { return binary.LittleEndian.Uint32(b) }
func le64(b []byte) int64       { return int64(binary.LittleEndian.Uint64(b)) }
func putLE64(b []byte, v int64) { binary.LittleEndian.PutUint64(b, uint64(v)) }
func padded(n int64) int64      { return (n + 7) &^ 7 }

// inflate returns the body of a compressed batch rewritten so that arrow-go
// decompresses nothing: every buffer the loader reads (used) is stored
// uncompressed behind the length prefix -1, which the IPC format defines
// as "not compressed", and the batch's buffer entries in meta are
// rewritten to match; buffers it does not read become empty.
//
// The sizes the compressed buffers declare are counted against decoded
// before anything is allocated, and each buffer must decompress to exactly
// its declared size. Memory grows with the bytes actually produced, never
// ahead of them by more than a factor of two, so a buffer that declares
// gigabytes and holds a few bytes costs a few bytes; and decompression
// stops at the declared size, so a true bomb costs no more than it
// declares. Before any is allocated, reserve is called with the total
// declared (its error ends the decoding). Returns an *Error when a buffer
// is malformed, lies about its size, or the sizes exceed the budget.
func inflate(meta []byte, b batch, used []bool, body []byte, decoded *budget, lz *lz4Reader, reserve func(int64) error) ([]byte, error) {
	sizes := make([]int, b.nBuffers)
	total := 0
	for i := range b.nBuffers {
		off, n := b.buffer(meta, i)
		if !used[i] || n == 0 {
			continue
		}
		if n < 8 {
			return nil, invalid("compressed buffer %d is %d bytes, shorter than its length prefix", i, n)
		}
		declared := le64(body[off:])
		switch {
		case declared == -1:
			declared = n - 8
		case declared < 0:
			return nil, invalid("compressed buffer %d declares %d bytes", i, declared)
		}
		if err := decoded.take(padded(8 + declared)); err != nil {
			return nil, err
		}
		sizes[i] = int(declared)
		total += int(padded(8 + declared))
	}
	if err := reserve(int64(total)); err != nil {
		return nil, err
	}
	out := make([]byte, 0, min(total, 64<<10))
	for i := range b.nBuffers {
		off, n := b.buffer(meta, i)
		if !used[i] || n == 0 {
			b.setBuffer(meta, i, 0, 0)
			continue
		}
		start := len(out)
		out = binary.LittleEndian.AppendUint64(grow(out, 8, total), ^uint64(0))
		src := body[off+8 : off+n]
		var err error
		switch {
		case le64(body[off:]) == -1:
			out = append(grow(out, len(src), total), src...)
		case b.codec == codecZSTD:
			out, err = unzstd(out, src, sizes[i], total)
		default:
			out, err = unlz4(out, src, sizes[i], total, lz)
		}
		if err != nil {
			return nil, invalid("compressed buffer %d does not decompress to the %d bytes it declares: %v", i, sizes[i], err)
		}
		b.setBuffer(meta, i, int64(start), int64(8+sizes[i]))
		out = append(out, make([]byte, int(padded(int64(len(out))))-len(out))...)
	}
	return out, nil
}

// grow returns out with room for n more bytes: its capacity at least
// doubles when it grows, but never passes limit.
func grow(out []byte, n, limit int) []byte {
	if cap(out)-len(out) >= n {
		return out
	}
	return append(make([]byte, 0, min(max(2*cap(out), len(out)+n), limit)), out...)
}

// zstdDecoder decodes whole ZSTD buffers into memory the caller sized: with
// the cap limit on, it does not grow the destination past a block beyond
// its capacity, whatever the frames claim.
var zstdDecoder = sync.OnceValues(func() (*zstd.Decoder, error) {
	return zstd.NewReader(nil, zstd.WithDecodeAllCapLimit(true), zstd.WithDecoderConcurrency(0))
})

// zstdBlockBytes is the most one ZSTD block decodes to (the format's
// Block_Maximum_Size).
const zstdBlockBytes = 128 << 10

var errSizeMismatch = errors.New("the data decompresses to another size")

// unzstd appends to out the size bytes the ZSTD frames in src decode to. It
// first offers the decoder room for a plausible ratio and doubles the room
// each time the output proves larger, up to size.
//
// The decoder says it ran out of room in two ways: ErrDecoderSizeExceeded
// when a frame declares a larger content size, and an error of no
// particular type ("output bigger than max block size") when a frame that
// declares none, as streaming encoders write them (arrow-go's among them),
// reaches the end of the room mid-block. The second looks like any broken
// frame, so a failure counts as running out of room only when the output
// had filled the room to within one block: a broken buffer fails early,
// with little output, and is refused without growing anything.
func unzstd(out, src []byte, size, limit int) ([]byte, error) {
	dec, err := zstdDecoder()
	if err != nil {
		return nil, err
	}
	room := min(size, 256<<10+64*len(src))
	for {
		out = grow(out, room, limit)
		at := len(out)
		got, err := dec.DecodeAll(src, out[at:at:at+room])
		full := errors.Is(err, zstd.ErrDecoderSizeExceeded) || len(got) >= room-zstdBlockBytes
		switch {
		case err != nil && full && room < size:
			room = min(size, 2*room)
			continue
		case err != nil:
			return nil, err
		case len(got) != size || (size > 0 && &got[0] != &out[:at+1][at]):
			return nil, errSizeMismatch
		}
		return out[:at+size], nil
	}
}

type lz4Reader = lz4.Reader

func newLZ4Reader() *lz4Reader { return lz4.NewReader(nil) }

// unlz4 appends to out the size bytes the LZ4 frames in src decode to.
func unlz4(out, src []byte, size, limit int, lz *lz4Reader) ([]byte, error) {
	lz.Reset(bytes.NewReader(src))
	end := len(out) + size
	for len(out) < end {
		out = grow(out, min(end-len(out), 64<<10), limit)
		n, err := lz.Read(out[len(out):min(cap(out), end)])
		out = out[:len(out)+n]
		if err != nil && len(out) < end {
			if errors.Is(err, io.EOF) {
				return nil, errSizeMismatch
			}
			return nil, err
		}
	}
	var more [1]byte
	if n, _ := lz.Read(more[:]); n != 0 {
		return nil, errSizeMismatch
	}
	return out, nil
}
