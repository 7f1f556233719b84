package file

import (
	"github.com/lancens/lancens/lance/file/internal/encoding"
	"github.com/lancens/lancens/lance/file/internal/v20"
	"github.com/lancens/lancens/lance/file/internal/v21"
)

// decoderFor returns the decoder of files of version v, or nil when there
// is none. Format 2.0 is decoded by internal/v20; 2.1 and 2.2 (mini-block,
// full-zip and constant layouts) by internal/v21.
func decoderFor(v Version) encoding.Decoder {
	switch v {
	case V2_0:
		return v20.Decoder{}
	case V2_1, V2_2:
		return v21.Decoder{}
	}
	return nil
}
