// Package compression holds the compression codecs both page decoders
// (internal/v20 for format 2.0, internal/v21 for 2.1 and 2.2) share: the
// general-purpose schemes (LZ4 and zstd, framed as Lance frames them) and
// FSST, the string compression of Lance's default strategy.
//
// Its input is untrusted like the rest of a file: declared sizes are
// charged to the read's encoding.Budget before anything is allocated,
// FSST codes are checked before a value is decoded, and data that does
// not decode to what it declares is an error wrapping
// encoding.ErrCorrupt, never a panic.
package compression

import (
	"bytes"
	"encoding/binary"
	"io"
	"strconv"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"

	"github.com/lancens/lancens/lance/file/internal/encoding"
)

// Scheme is a general-purpose compression scheme.
type Scheme uint8

const (
	// None leaves buffers as they are.
	None Scheme = iota
	// LZ4 is one LZ4 block after a u32 little-endian content size.
	LZ4
	// Zstd is a zstd stream after a u64 little-endian content size (or,
	// from older writers, a bare zstd stream).
	Zstd
)

// String returns the scheme's name in 2.0 page encodings ("lz4",
// "zstd", or "none").
func (s Scheme) String() string {
	switch s {
	case LZ4:
		return "lz4"
	case Zstd:
		return "zstd"
	}
	return "none"
}

// ParseScheme returns the scheme a 2.0 page encoding names: "zstd",
// "lz4", or "" and "none" for None. It returns an error wrapping
// ErrUnsupported for another name.
func ParseScheme(name string) (Scheme, error) {
	switch name {
	case "", "none":
		return None, nil
	case "lz4":
		return LZ4, nil
	case "zstd":
		return Zstd, nil
	}
	return None, encoding.Unsupportedf("the compression scheme %q", name)
}

// zstdMagic starts a zstd frame (RFC 8878, 3.1.1).
const zstdMagic = 0xFD2FB528

// maxZstdWindow bounds the history a zstd frame may ask the decoder to
// keep (the window of the highest compression levels, 64 MiB).
const maxZstdWindow = 1 << 26

// Decompress returns the content of a buffer compressed with s, charging
// its size to bud before allocating it. It returns src itself for None,
// an error wrapping ErrCorrupt for data that does not decompress to its
// declared size, and ErrBudget when the content is bigger than the budget
// left.
func Decompress(s Scheme, src []byte, bud *encoding.Budget) ([]byte, error) {
	switch s {
	case None:
		return src, nil
	case LZ4:
		if len(src) < 4 {
			return nil, encoding.Corruptf("an LZ4 buffer of %d bytes is too short for its size prefix", len(src))
		}
		n := uint64(binary.LittleEndian.Uint32(src))
		if err := bud.Take(n); err != nil {
			return nil, err
		}
		out := make([]byte, n)
		got, err := lz4.UncompressBlock(src[4:], out)
		if err != nil || uint64(got) != n {
			return nil, encoding.Corruptf("an LZ4 buffer does not decompress to its declared %d bytes", n)
		}
		return out, nil
	case Zstd:
		if len(src) == 0 {
			return nil, nil
		}
		if bareZstd(src) {
			return zstdStream(src, bud)
		}
		n := binary.LittleEndian.Uint64(src)
		if err := bud.Take(n); err != nil {
			return nil, err
		}
		// The decoder writes into at most the capacity it is given: a
		// stream cannot allocate more than was charged.
		out, err := zstdDec.DecodeAll(src[8:], make([]byte, 0, n))
		if err != nil || uint64(len(out)) != n {
			return nil, encoding.Corruptf("a zstd buffer does not decompress to its declared %d bytes", n)
		}
		return out, nil
	}
	return nil, encoding.Unsupportedf("compression scheme %d", s)
}

// bareZstd reports whether src is a zstd stream without Lance's size
// prefix, by the test Lance applies: shorter than a prefix, or starting
// with the zstd magic followed by a frame header descriptor whose
// reserved bit (0x10 in Lance's reading) is clear.
func bareZstd(src []byte) bool {
	if len(src) < 8 {
		return true
	}
	return binary.LittleEndian.Uint32(src) == zstdMagic && src[4]&0x10 == 0
}

// zstdStream decodes a zstd stream of unknown length, charging each step
// of output to bud before keeping it.
func zstdStream(src []byte, bud *encoding.Budget) ([]byte, error) {
	d, err := zstd.NewReader(bytes.NewReader(src), zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true), zstd.WithDecoderMaxWindow(maxZstdWindow))
	if err != nil {
		return nil, encoding.Corruptf("zstd: %v", err)
	}
	defer d.Close()
	var out []byte
	step := make([]byte, 64<<10)
	for {
		n, err := io.ReadFull(d, step)
		if n > 0 {
			if berr := bud.Take(uint64(n)); berr != nil {
				return nil, berr
			}
			out = append(out, step[:n]...)
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return out, nil
		}
		if err != nil {
			return nil, encoding.Corruptf("zstd: %v", err)
		}
	}
}

// zstdDec decodes size-prefixed zstd streams into at most the capacity of
// the slice it is given. Its DecodeAll is safe for concurrent use.
var zstdDec = func() *zstd.Decoder {
	d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecodeAllCapLimit(true), zstd.WithDecoderMaxWindow(maxZstdWindow))
	if err != nil {
		panic(err) // only invalid options fail, and these are constant
	}
	return d
}()

// Compressor compresses buffers as Decompress reads them back, for a
// writer whose field metadata asks ("lance-encoding:compression" = zstd
// or lz4, with an optional "lance-encoding:compression-level").
type Compressor struct {
	scheme Scheme
	zstd   *zstd.Encoder
}

// NewCompressor returns the compressor a field's metadata asks for, or
// nil for none. Like Lance, it ignores schemes it does not apply (FSST,
// unknown names): the values are then written plain, which every reader
// reads. It returns an error only when the zstd encoder cannot be made.
func NewCompressor(md map[string]string) (*Compressor, error) {
	switch md["lance-encoding:compression"] {
	case "lz4":
		return &Compressor{scheme: LZ4}, nil
	case "zstd":
		level := zstd.SpeedDefault
		if l, err := strconv.Atoi(md["lance-encoding:compression-level"]); err == nil {
			level = zstd.EncoderLevelFromZstd(l)
		}
		enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(level), zstd.WithEncoderConcurrency(1))
		if err != nil {
			return nil, err
		}
		return &Compressor{scheme: Zstd, zstd: enc}, nil
	}
	return nil, nil
}

// Scheme returns the scheme c compresses with.
func (c *Compressor) Scheme() Scheme { return c.scheme }

// Compress returns data framed as Decompress reads it: zstd after a u64
// content size, LZ4 as one block after a u32 content size.
func (c *Compressor) Compress(data []byte) []byte {
	if c.scheme == Zstd {
		out := binary.LittleEndian.AppendUint64(nil, uint64(len(data)))
		return c.zstd.EncodeAll(data, out)
	}
	out := make([]byte, 4+lz4.CompressBlockBound(len(data)))
	binary.LittleEndian.PutUint32(out, uint32(len(data)))
	n, err := lz4.CompressBlock(data, out[4:], nil)
	if err != nil || n == 0 {
		// Incompressible (or empty): one sequence of literals only.
		return literalBlock(out[:4], data)
	}
	return out[:4+n]
}

// literalBlock appends to dst an LZ4 block that holds data as literals.
func literalBlock(dst, data []byte) []byte {
	n := len(data)
	if n < 15 {
		dst = append(dst, byte(n<<4))
	} else {
		dst = append(dst, 0xf0)
		for n -= 15; n >= 255; n -= 255 {
			dst = append(dst, 255)
		}
		dst = append(dst, byte(n))
	}
	return append(dst, data...)
}
