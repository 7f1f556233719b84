package v21

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lancens/lancens/lance/file/internal/encoding"
)

// valueSink gathers the values of a page's visible items, in order, in
// the form its encodings take.
type valueSink struct {
	kind sinkKind
	dt   arrow.DataType
	// bits is a fixed-width value's width, or a vector item's.
	bits int
	// width is a variable-width value's offset width in bytes (4 or 8).
	width int
	// dim is a vector's number of items.
	dim int

	n    int
	data []byte // fixed-width values, vector items, variable-width bytes
	// bitmap holds booleans, or a vector's item validity (when any item
	// is null: itemNulls).
	bitmap    []byte
	itemNulls int
	offsets   []int64 // variable width: n+1
	maxLen    int     // the largest variable-width value
}

type sinkKind uint8

const (
	sinkFixed sinkKind = iota
	sinkBool
	sinkVariable
	sinkVector
)

func newValueSink(dt arrow.DataType) (valueSink, error) {
	s := valueSink{dt: dt}
	if t, ok := dt.(*arrow.FixedSizeListType); ok {
		w, ok := fixedWidth(t.Elem())
		if !ok {
			return s, encoding.Unsupportedf("writing fixed-size lists of %s", t.Elem())
		}
		s.kind, s.bits, s.dim = sinkVector, w, int(t.Len())
		if s.dim <= 0 {
			return s, encoding.Unsupportedf("writing fixed-size lists of %d items", s.dim)
		}
		return s, nil
	}
	if w, ok := fixedWidth(dt); ok {
		s.kind, s.bits = sinkFixed, w
		if w == 1 {
			s.kind = sinkBool
		}
		return s, nil
	}
	switch dt.ID() {
	case arrow.STRING, arrow.BINARY:
		s.kind, s.width = sinkVariable, 4
	case arrow.LARGE_STRING, arrow.LARGE_BINARY:
		s.kind, s.width = sinkVariable, 8
	default:
		return s, encoding.Unsupportedf("writing fields of type %s", dt)
	}
	return s, nil
}

func (s *valueSink) reset() {
	s.n, s.data, s.bitmap, s.itemNulls, s.maxLen = 0, nil, nil, 0, 0
	s.offsets = nil
	if s.kind == sinkVariable {
		s.offsets = []int64{0}
	}
}

// check refuses an array of another type than the sink's.
func (s *valueSink) check(a arrow.Array) error {
	if !arrow.TypeEqual(a.DataType(), s.dt) {
		return encoding.Unsupportedf("a column of %s where %s was expected", a.DataType(), s.dt)
	}
	return nil
}

// size returns the bytes buffered.
func (s *valueSink) size() uint64 {
	return uint64(len(s.data)+len(s.bitmap)) + 8*uint64(len(s.offsets))
}

// valueBytes returns the bytes of a fixed-width array's value idx, or
// nil when the array has no values buffer (all null).
func valueBytes(a arrow.Array, idx, width int) []byte {
	d := a.Data()
	bufs := d.Buffers()
	if len(bufs) < 2 || bufs[1] == nil {
		return nil
	}
	b := bufs[1].Bytes()
	off := (d.Offset() + idx) * width
	if off+width > len(b) {
		return nil
	}
	return b[off : off+width]
}

// bitOf returns bit idx of a boolean array's values.
func bitOf(a arrow.Array, idx int) bool {
	d := a.Data()
	bufs := d.Buffers()
	if len(bufs) < 2 || bufs[1] == nil {
		return false
	}
	i := d.Offset() + idx
	b := bufs[1].Bytes()
	return i/8 < len(b) && b[i/8]&(1<<(i%8)) != 0
}

func (s *valueSink) add(a arrow.Array, idx int) {
	switch s.kind {
	case sinkFixed:
		w := s.bits / 8
		if v := valueBytes(a, idx, w); v != nil {
			s.data = append(s.data, v...)
		} else {
			s.data = append(s.data, make([]byte, w)...)
		}
	case sinkBool:
		s.bitmap = appendBit(s.bitmap, s.n, bitOf(a, idx))
	case sinkVariable:
		var v []byte
		switch t := a.(type) {
		case *array.String:
			v = []byte(t.Value(idx))
		case *array.LargeString:
			v = []byte(t.Value(idx))
		case *array.Binary:
			v = t.Value(idx)
		case *array.LargeBinary:
			v = t.Value(idx)
		}
		if a.IsNull(idx) {
			v = nil
		}
		s.data = append(s.data, v...)
		s.offsets = append(s.offsets, int64(len(s.data)))
		s.maxLen = max(s.maxLen, len(v))
	case sinkVector:
		fsl := a.(*array.FixedSizeList)
		items := fsl.ListValues()
		start, _ := fsl.ValueOffsets(idx)
		for j := 0; j < s.dim; j++ {
			item := int(start) + j
			k := s.n*s.dim + j
			if s.bits == 1 {
				s.data = appendBit(s.data, k, bitOf(items, item))
			} else if v := valueBytes(items, item, s.bits/8); v != nil {
				s.data = append(s.data, v...)
			} else {
				s.data = append(s.data, make([]byte, s.bits/8)...)
			}
			valid := !items.IsNull(item)
			if !valid {
				s.itemNulls++
			}
			s.bitmap = appendBit(s.bitmap, k, valid)
		}
	}
	s.n++
}

// appendBit sets bit i (the next) of a bitmap of i bits.
func appendBit(b []byte, i int, v bool) []byte {
	if i%8 == 0 {
		b = append(b, 0)
	}
	if v {
		b[i/8] |= 1 << (i % 8)
	}
	return b
}

// rowBytes is the size of one value (a vector's items), 0 for booleans
// and variable-width values.
func (s *valueSink) rowBytes() int {
	switch s.kind {
	case sinkFixed:
		return s.bits / 8
	case sinkVector:
		return s.dim * s.bits / 8
	}
	return 0
}
