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
		before := len(s.data)
		if !a.IsNull(idx) {
			switch t := a.(type) {
			case *array.String:
				s.data = append(s.data, t.Value(idx)...)
			case *array.LargeString:
				s.data = append(s.data, t.Value(idx)...)
			case *array.Binary:
				s.data = append(s.data, t.Value(idx)...)
			case *array.LargeBinary:
				s.data = append(s.data, t.Value(idx)...)
			}
		}
		s.offsets = append(s.offsets, int64(len(s.data)))
		s.maxLen = max(s.maxLen, len(s.data)-before)
	case sinkVector:
		if s.data == nil {
			s.data = make([]byte, 0, 1<<20)
		}
		fsl := a.(*array.FixedSizeList)
		items := fsl.ListValues()
		start, _ := fsl.ValueOffsets(idx)
		first := s.n * s.dim
		if s.bits == 1 {
			for j := 0; j < s.dim; j++ {
				s.data = appendBit(s.data, first+j, bitOf(items, int(start)+j))
			}
		} else {
			s.data = append(s.data, rowOf(items, int(start), s.dim, s.bits/8)...)
		}
		// Item validity is kept from the first null item on (earlier
		// items were all valid).
		if items.NullN() > 0 {
			for j := 0; j < s.dim; j++ {
				if items.IsNull(int(start) + j) {
					if s.itemNulls == 0 {
						s.bitmap = appendOnes(nil, 0, first+j)
					}
					s.itemNulls++
					s.bitmap = appendBit(s.bitmap, first+j, false)
				} else if s.itemNulls > 0 {
					s.bitmap = appendBit(s.bitmap, first+j, true)
				}
			}
		} else if s.itemNulls > 0 {
			s.bitmap = appendOnes(s.bitmap, first, s.dim)
		}
	}
	s.n++
}

// rowOf returns the bytes of items [start, start+dim) of a fixed-width
// array, or zeros where the array has no values buffer.
func rowOf(a arrow.Array, start, dim, width int) []byte {
	d := a.Data()
	bufs := d.Buffers()
	off, end := (d.Offset()+start)*width, (d.Offset()+start+dim)*width
	if len(bufs) < 2 || bufs[1] == nil || end > bufs[1].Len() {
		return make([]byte, dim*width)
	}
	return bufs[1].Bytes()[off:end]
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
