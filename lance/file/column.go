package file

import (
	"fmt"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/lancens/lancens/lance/file/internal/encoding"
	"github.com/lancens/lancens/lance/internal/pb/filepb"
)

// parseColumn decodes the metadata of column index of a file whose data
// ends at dataEnd, and checks it: every buffer lies inside the file, each
// page has as many buffer sizes as offsets, and the page lengths add up
// without overflowing. It returns an error wrapping ErrCorrupt, or
// ErrUnsupported for an encoding stored out of line (Lance never writes
// one).
func parseColumn(index int, b []byte, dataEnd uint64) (*encoding.Column, error) {
	var m filepb.ColumnMetadata
	if err := proto.Unmarshal(b, &m); err != nil {
		return nil, encoding.Corruptf("column %d: metadata: %v", index, err)
	}
	c := &encoding.Column{Index: index}
	var err error
	if c.EncodingType, c.Encoding, err = parseEncoding(m.GetEncoding()); err != nil {
		return nil, fmt.Errorf("column %d: %w", index, err)
	}
	if c.Buffers, err = bufferRanges(m.GetBufferOffsets(), m.GetBufferSizes(), dataEnd); err != nil {
		return nil, fmt.Errorf("column %d: %w", index, err)
	}
	c.Pages = make([]encoding.Page, len(m.GetPages()))
	var first uint64
	for i, p := range m.GetPages() {
		page := &c.Pages[i]
		page.Length, page.First, page.Priority = p.GetLength(), first, p.GetPriority()
		if first+page.Length < first {
			return nil, encoding.Corruptf("column %d: page lengths overflow", index)
		}
		first += page.Length
		if page.EncodingType, page.Encoding, err = parseEncoding(p.GetEncoding()); err != nil {
			return nil, fmt.Errorf("column %d page %d: %w", index, i, err)
		}
		if page.Buffers, err = bufferRanges(p.GetBufferOffsets(), p.GetBufferSizes(), dataEnd); err != nil {
			return nil, fmt.Errorf("column %d page %d: %w", index, i, err)
		}
	}
	return c, nil
}

// parseEncoding returns the type URL and message of an encoding stored
// inline, or empty strings when there is none.
func parseEncoding(e *filepb.Encoding) (string, []byte, error) {
	switch l := e.GetLocation().(type) {
	case nil, *filepb.Encoding_None:
		return "", nil, nil
	case *filepb.Encoding_Direct:
		var a anypb.Any
		if err := proto.Unmarshal(l.Direct.GetEncoding(), &a); err != nil {
			return "", nil, encoding.Corruptf("encoding: %v", err)
		}
		return a.GetTypeUrl(), a.GetValue(), nil
	case *filepb.Encoding_Indirect:
		return "", nil, encoding.Unsupportedf("an encoding stored out of line")
	}
	return "", nil, encoding.Corruptf("an unknown encoding location")
}

// bufferRanges pairs offsets with sizes and checks that each range lies
// inside [0, dataEnd).
func bufferRanges(offsets, sizes []uint64, dataEnd uint64) ([]encoding.Range, error) {
	if len(offsets) != len(sizes) {
		return nil, encoding.Corruptf("%d buffer offsets but %d sizes", len(offsets), len(sizes))
	}
	out := make([]encoding.Range, len(offsets))
	for i := range offsets {
		r := encoding.Range{Offset: offsets[i], Length: sizes[i]}
		if !within(r, 0, dataEnd) {
			return nil, encoding.Corruptf("buffer %d (%d bytes at %d) lies outside the file's %d bytes of data", i, r.Length, r.Offset, dataEnd)
		}
		out[i] = r
	}
	return out, nil
}
