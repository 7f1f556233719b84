package v20

import (
	"bytes"
	"encoding/binary"
	"io"
	"strconv"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"

	"github.com/lancens/lancens/lance/file/internal/encoding"
)

// compressor compresses the bytes of binary pages, as Lance's 2.0 writer
// does when a field's metadata asks ("lance-encoding:compression" = zstd
// or lz4, with an optional "lance-encoding:compression-level").
type compressor struct {
	scheme string
	zstd   *zstd.Encoder
}

// newCompressor returns the compressor a field's metadata asks for, or
// nil for none. Like Lance, it ignores schemes it does not apply (FSST,
// which this writer does not write, and unknown names): the values are
// then written plain, which every reader reads.
func newCompressor(md map[string]string) (*compressor, error) {
	scheme := md["lance-encoding:compression"]
	switch scheme {
	case "lz4":
		return &compressor{scheme: scheme}, nil
	case "zstd":
		level := zstd.SpeedDefault
		if l, err := strconv.Atoi(md["lance-encoding:compression-level"]); err == nil {
			level = zstd.EncoderLevelFromZstd(l)
		}
		enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(level), zstd.WithEncoderConcurrency(1))
		if err != nil {
			return nil, err
		}
		return &compressor{scheme: scheme, zstd: enc}, nil
	}
	return nil, nil
}

// compress returns data framed as decompress reads it: zstd after a u64
// content size, lz4 as one block after a u32 content size.
func (c *compressor) compress(data []byte) []byte {
	if c.scheme == "zstd" {
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

// literalBlock appends to dst an lz4 block that holds data as literals.
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

// zstdMagic starts a zstd frame (RFC 8878, 3.1.1).
const zstdMagic = 0xFD2FB528

// decompress returns the content of a buffer compressed with scheme
// ("zstd" or "lz4", as Flat.compression names them), charging its size to
// budget first. Lance frames zstd data either as a bare zstd stream or as
// a u64 little-endian content size followed by the stream; lz4 data is a
// u32 little-endian content size followed by one lz4 block. It returns an
// error wrapping ErrCorrupt for data that does not decompress to its
// declared size, ErrBudget when the content is bigger than the budget, or
// ErrUnsupported for another scheme.
func decompress(scheme string, data []byte, budget *encoding.Budget) ([]byte, error) {
	switch scheme {
	case "zstd":
		if len(data) == 0 {
			return nil, nil
		}
		if isBareZstd(data) {
			return zstdStream(data, budget)
		}
		if len(data) < 8 {
			return nil, encoding.Corruptf("a zstd buffer of %d bytes is too short for its size prefix", len(data))
		}
		size := binary.LittleEndian.Uint64(data)
		if err := budget.Take(size); err != nil {
			return nil, err
		}
		out, err := zstdStream(data[8:], encoding.NewBudget(size))
		if err != nil {
			return nil, err
		}
		if uint64(len(out)) != size {
			return nil, encoding.Corruptf("a zstd buffer holds %d bytes, not the %d its prefix says", len(out), size)
		}
		return out, nil
	case "lz4":
		if len(data) < 4 {
			return nil, encoding.Corruptf("an lz4 buffer of %d bytes is too short for its size prefix", len(data))
		}
		size := uint64(binary.LittleEndian.Uint32(data))
		if err := budget.Take(size); err != nil {
			return nil, err
		}
		out := make([]byte, size)
		n, err := lz4.UncompressBlock(data[4:], out)
		if err != nil || uint64(n) != size {
			return nil, encoding.Corruptf("an lz4 buffer does not decompress to its %d bytes (%d, %v)", size, n, err)
		}
		return out, nil
	case "", "none":
		return data, nil
	}
	return nil, encoding.Unsupportedf("the compression scheme %q", scheme)
}

// isBareZstd reports whether data starts like a zstd frame rather than
// with a size prefix: the magic, then a frame header descriptor whose
// bit 4 is clear (the test Lance applies).
func isBareZstd(data []byte) bool {
	if len(data) < 8 {
		return true
	}
	return binary.LittleEndian.Uint32(data) == zstdMagic && data[4]&0x10 == 0
}

// zstdStream decodes a zstd stream, refusing to produce more than budget
// allows.
func zstdStream(data []byte, budget *encoding.Budget) ([]byte, error) {
	dec, err := zstd.NewReader(bytes.NewReader(data), zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(16<<20))
	if err != nil {
		return nil, encoding.Corruptf("zstd: %v", err)
	}
	defer dec.Close()
	var out bytes.Buffer
	chunk := make([]byte, 64<<10)
	for {
		n, err := dec.Read(chunk)
		if n > 0 {
			if berr := budget.Take(uint64(n)); berr != nil {
				return nil, berr
			}
			out.Write(chunk[:n])
		}
		if err == io.EOF {
			return out.Bytes(), nil
		}
		if err != nil {
			return nil, encoding.Corruptf("zstd: %v", err)
		}
	}
}
