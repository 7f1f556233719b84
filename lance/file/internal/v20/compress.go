package v20

import (
	"bytes"
	"encoding/binary"
	"io"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"

	"github.com/lancens/lancens/lance/file/internal/encoding"
)

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
	dec, err := zstd.NewReader(bytes.NewReader(data), zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(64<<20))
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
