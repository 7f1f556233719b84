package v21

import (
	"bytes"
	"encoding/binary"
	"io"
	"slices"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"

	"github.com/lancens/lancens/lance/internal/pb/enc21pb"
)

// zstdMagic starts every zstd frame.
var zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

// decompressBuffer undoes general compression of one buffer. Lance frames
// both schemes itself: LZ4 as a u32 little-endian decompressed length and
// one LZ4 block; zstd as a u64 little-endian decompressed length and a
// zstd stream (a stream without the length, from older writers, is also
// read). The declared length is charged to bud before anything is
// allocated; a stream that decodes to another length is corrupt.
func decompressBuffer(scheme enc21pb.CompressionScheme, src []byte, bud budget) ([]byte, error) {
	switch scheme {
	case enc21pb.CompressionScheme_COMPRESSION_ALGORITHM_LZ4:
		if len(src) < 4 {
			return nil, corrupt("LZ4 buffer of %d bytes has no length", len(src))
		}
		n := uint64(binary.LittleEndian.Uint32(src))
		if err := bud.take(n, "an LZ4 buffer"); err != nil {
			return nil, err
		}
		out := make([]byte, n)
		got, err := lz4.UncompressBlock(src[4:], out)
		if err != nil || uint64(got) != n {
			return nil, corrupt("LZ4 buffer does not decode to its declared %d bytes", n)
		}
		return out, nil
	case enc21pb.CompressionScheme_COMPRESSION_ALGORITHM_ZSTD:
		if len(src) == 0 {
			return nil, nil
		}
		var n uint64
		if len(src) >= 8 && !bytes.HasPrefix(src, zstdMagic) {
			n, src = binary.LittleEndian.Uint64(src), src[8:]
		} else {
			// A stream without Lance's length (older writers): its
			// frame header may say; otherwise it is read in steps, each
			// charged before it is read.
			var h zstd.Header
			if err := h.Decode(src); err != nil {
				return nil, corrupt("zstd buffer: %v", err)
			}
			if !h.HasFCS {
				return zstdStream(src, bud)
			}
			n = h.FrameContentSize
		}
		if err := bud.take(n, "a zstd buffer"); err != nil {
			return nil, err
		}
		out, err := zstdDec.DecodeAll(src, make([]byte, 0, n))
		if err != nil || uint64(len(out)) != n {
			return nil, corrupt("zstd buffer does not decode to its declared %d bytes", n)
		}
		return out, nil
	default:
		return nil, unsupported("general compression scheme %v", scheme)
	}
}

// maxZstdWindow bounds the history a zstd frame may ask the decoder to
// keep (the window of the highest compression levels, 64 MiB).
const maxZstdWindow = 1 << 26

// zstdStream decodes a zstd stream of unknown length, charging every
// step of output to bud before reading it.
func zstdStream(src []byte, bud budget) ([]byte, error) {
	d, err := zstd.NewReader(bytes.NewReader(src), zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true), zstd.WithDecoderMaxWindow(maxZstdWindow))
	if err != nil {
		return nil, corrupt("zstd buffer: %v", err)
	}
	defer d.Close()
	var out []byte
	const step = 64 << 10
	for {
		if err := bud.take(step, "a zstd buffer"); err != nil {
			return nil, err
		}
		out = slices.Grow(out, step)
		n, err := io.ReadFull(d, out[len(out):len(out)+step])
		out = out[:len(out)+n]
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return out, nil
		}
		if err != nil {
			return nil, corrupt("zstd buffer: %v", err)
		}
	}
}

// zstdDec decodes zstd streams into at most the capacity of the slice it
// is given: a stream cannot allocate more than the budget granted it. Its
// DecodeAll is safe for concurrent use.
var zstdDec = func() *zstd.Decoder {
	d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecodeAllCapLimit(true), zstd.WithDecoderMaxWindow(maxZstdWindow))
	if err != nil {
		panic(err) // only invalid options fail, and these are constant
	}
	return d
}()
