package v21

import (
	"github.com/lancens/lancens/lance/file/internal/compression"
	"github.com/lancens/lancens/lance/internal/pb/enc21pb"
)

// decompressBuffer undoes general compression of one buffer (LZ4 or
// zstd, as package compression reads them), charging the decompressed
// size to bud before allocating it. It returns an error wrapping
// ErrCorrupt for a buffer that does not decompress to its declared size,
// ErrBudget past the budget, and ErrUnsupported for another scheme.
func decompressBuffer(scheme enc21pb.CompressionScheme, src []byte, bud budget) ([]byte, error) {
	var s compression.Scheme
	switch scheme {
	case enc21pb.CompressionScheme_COMPRESSION_ALGORITHM_LZ4:
		s = compression.LZ4
	case enc21pb.CompressionScheme_COMPRESSION_ALGORITHM_ZSTD:
		s = compression.Zstd
	default:
		return nil, unsupported("general compression scheme %v", scheme)
	}
	return compression.Decompress(s, src, bud.b)
}
