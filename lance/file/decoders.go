package file

import (
	"github.com/lancens/lancens/lance/file/internal/encoding"
	"github.com/lancens/lancens/lance/file/internal/v20"
)

// decoderFor returns the decoder of files of version v, or nil when there
// is none yet. Format 2.0 is decoded by internal/v20; the decoders of 2.1
// and 2.2 (mini-block and full-zip layouts) plug in here.
func decoderFor(v Version) encoding.Decoder {
	switch v {
	case V2_0:
		return v20.Decoder{}
	}
	return nil
}
