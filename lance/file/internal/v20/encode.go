package v20

import (
	"encoding/binary"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/lancens/lancens/lance/file/internal/encoding"
	"github.com/lancens/lancens/lance/internal/pb/enc20pb"
	"github.com/lancens/lancens/lance/schema"
)

// The type URLs Lance gives the encodings it packs in Any messages.
const (
	arrayEncodingURL  = "/lance.encodings.ArrayEncoding"
	columnEncodingURL = "/lance.encodings.ColumnEncoding"
)

// Encoder encodes the rows of a schema into format 2.0 pages, the way
// Lance's 2.0 writer lays them out: a column per field in pre-order, a
// struct's column holding one empty page with its row count, a list's
// column holding offsets, and the values of each leaf column as nullable
// flat values, fixed-size lists of them, or binary offsets and bytes. A
// column's page is cut once its values reach the page size, so memory
// stays bounded by about a page per column.
type Encoder struct {
	fields    []fieldEncoder
	columns   int
	pageBytes uint64
	fieldIDs  []int32
}

// fieldEncoder takes the values of one field (and its descendants).
type fieldEncoder interface {
	// check returns an error wrapping ErrUnsupported when arr holds what
	// the encoding cannot store; Append checks every column before it
	// encodes any, so a refused batch leaves nothing behind.
	check(arr arrow.Array) error
	// append adds arr's values; row is the top-level row of arr's first.
	append(arr arrow.Array, row uint64, out *[]encoding.EncodedPage) error
	// finish returns the pages still buffered.
	finish(out *[]encoding.EncodedPage) error
}

// NewEncoder returns an encoder of the rows of s (whose fields carry their
// ids) into pages of about pageBytes. It returns an error wrapping
// ErrUnsupported for a type format 2.0 cannot hold or this package cannot
// write.
func NewEncoder(s *schema.Schema, pageBytes uint64) (*Encoder, error) {
	e := &Encoder{pageBytes: pageBytes}
	for _, f := range s.Fields {
		dt, err := f.ArrowType()
		if err != nil {
			return nil, err
		}
		fe, err := e.newField(f, dt)
		if err != nil {
			return nil, err
		}
		e.fields = append(e.fields, fe)
	}
	return e, nil
}

// NumColumns returns the number of columns of the file.
func (e *Encoder) NumColumns() int { return e.columns }

// FieldIDs returns the id of the field of each column, in column order.
func (e *Encoder) FieldIDs() []int32 { return e.fieldIDs }

func (e *Encoder) nextColumn(f *schema.Field) int {
	e.columns++
	e.fieldIDs = append(e.fieldIDs, f.ID)
	return e.columns - 1
}

func (e *Encoder) newField(f *schema.Field, dt arrow.DataType) (fieldEncoder, error) {
	switch t := dt.(type) {
	case *arrow.StructType:
		if packed(f) {
			v, err := newPacked(t, f.Name)
			if err != nil {
				return nil, err
			}
			return &leafEncoder{column: e.nextColumn(f), values: v, pageBytes: e.pageBytes}, nil
		}
		se := &structEncoder{column: e.nextColumn(f), name: f.Name}
		for i, c := range f.Children {
			ce, err := e.newField(c, t.Field(i).Type)
			if err != nil {
				return nil, err
			}
			se.children = append(se.children, ce)
		}
		return se, nil
	case *arrow.ListType, *arrow.LargeListType:
		le := &listEncoder{column: e.nextColumn(f), pageBytes: e.pageBytes}
		child, err := e.newField(f.Children[0], t.(arrow.ListLikeType).Elem())
		if err != nil {
			return nil, err
		}
		le.child = child
		return le, nil
	}
	v, err := newValues(dt, f.Metadata)
	if err != nil {
		return nil, fmt.Errorf("field %s: %w", f.Name, err)
	}
	return &leafEncoder{column: e.nextColumn(f), values: v, pageBytes: e.pageBytes}, nil
}

// Append encodes a batch (one array per top-level field, in the schema's
// order) whose first row is the file's row, and returns the pages it
// filled.
func (e *Encoder) Append(cols []arrow.Array, row uint64) ([]encoding.EncodedPage, error) {
	for i, fe := range e.fields {
		if err := fe.check(cols[i]); err != nil {
			return nil, err
		}
	}
	var out []encoding.EncodedPage
	for i, fe := range e.fields {
		if err := fe.append(cols[i], row, &out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Finish returns the last pages of every column.
func (e *Encoder) Finish() ([]encoding.EncodedPage, error) {
	var out []encoding.EncodedPage
	for _, fe := range e.fields {
		if err := fe.finish(&out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

var _ encoding.Encoder = (*Encoder)(nil)

// ColumnEncoding returns the encoding every 2.0 column Lance writes has:
// plain values, as a serialized Any.
func (*Encoder) ColumnEncoding(int) []byte {
	return packAny(columnEncodingURL, &enc20pb.ColumnEncoding{ColumnEncoding: &enc20pb.ColumnEncoding_Values{Values: &emptypb.Empty{}}})
}

func packAny(url string, m proto.Message) []byte {
	value, err := proto.Marshal(m)
	if err != nil {
		panic(err) // a message built here always marshals
	}
	b, err := proto.Marshal(&anypb.Any{TypeUrl: url, Value: value})
	if err != nil {
		panic(err)
	}
	return b
}

// structEncoder writes a struct's column: one empty page holding the
// number of values, written last.
type structEncoder struct {
	column   int
	name     string
	children []fieldEncoder
	rows     uint64
}

// storage returns the storage array of an extension array, or arr.
func storage(arr arrow.Array) arrow.Array {
	if ext, ok := arr.(array.ExtensionArray); ok {
		return ext.Storage()
	}
	return arr
}

func (s *structEncoder) check(arr arrow.Array) error {
	st := storage(arr).(*array.Struct)
	for i, c := range s.children {
		if err := c.check(st.Field(i)); err != nil {
			return err
		}
	}
	return nil
}

func (s *structEncoder) append(arr arrow.Array, row uint64, out *[]encoding.EncodedPage) error {
	arr = storage(arr)
	st := arr.(*array.Struct)
	if st.NullN() > 0 {
		return encoding.Unsupportedf("struct field %s holds %d nulls, and format 2.0 has no struct validity", s.name, st.NullN())
	}
	for i, c := range s.children {
		// Field(i) is already cut to the struct's rows.
		if err := c.append(st.Field(i), row, out); err != nil {
			return err
		}
	}
	s.rows += uint64(arr.Len())
	return nil
}

func (s *structEncoder) finish(out *[]encoding.EncodedPage) error {
	*out = append(*out, encoding.EncodedPage{
		Column:   s.column,
		Length:   s.rows,
		Encoding: packAny(arrayEncodingURL, &enc20pb.ArrayEncoding{ArrayEncoding: &enc20pb.ArrayEncoding_Struct{Struct: &enc20pb.SimpleStruct{}}}),
	})
	for _, c := range s.children {
		if err := c.finish(out); err != nil {
			return err
		}
	}
	return nil
}

// listEncoder writes a list's column of offsets: per list, the end of its
// items counted from the page's first item, plus null_offset_adjustment
// (one more than the page's items) when null.
type listEncoder struct {
	column    int
	child     fieldEncoder
	pageBytes uint64
	ends      []uint64 // per list, its end; high bit set when null
	items     uint64   // items in the page so far
	first     uint64   // the top-level row of the page's first list
}

const nullFlag = 1 << 63

func (l *listEncoder) check(arr arrow.Array) error {
	return l.child.check(storage(arr).(array.ListLike).ListValues())
}

func (l *listEncoder) append(arr arrow.Array, row uint64, out *[]encoding.EncodedPage) error {
	arr = storage(arr)
	ll := arr.(array.ListLike)
	if len(l.ends) == 0 {
		l.first = row
	}
	for i := 0; i < arr.Len(); i++ {
		start, end := ll.ValueOffsets(i)
		if arr.IsValid(i) {
			l.items += uint64(end - start)
			l.ends = append(l.ends, l.items)
		} else {
			l.ends = append(l.ends, l.items|nullFlag)
		}
	}
	if arr.Len() > 0 {
		start, _ := ll.ValueOffsets(0)
		_, end := ll.ValueOffsets(arr.Len() - 1)
		// Null lists may still own items in Arrow: keep only the items of
		// valid lists, so offsets and items agree.
		if err := l.appendItems(ll, arr, start, end, row, out); err != nil {
			return err
		}
	}
	if uint64(len(l.ends))*8 >= l.pageBytes {
		l.flush(out)
	}
	return nil
}

// appendItems passes the items of the valid lists of arr to the child.
func (l *listEncoder) appendItems(ll array.ListLike, arr arrow.Array, start, end int64, row uint64, out *[]encoding.EncodedPage) error {
	values := ll.ListValues()
	if arr.NullN() == 0 {
		child := array.NewSlice(values, start, end)
		defer child.Release()
		return l.child.append(child, row, out)
	}
	for i := 0; i < arr.Len(); {
		if !arr.IsValid(i) {
			i++
			continue
		}
		j := i
		for j < arr.Len() && arr.IsValid(j) {
			j++
		}
		s, _ := ll.ValueOffsets(i)
		_, e := ll.ValueOffsets(j - 1)
		if e > s {
			child := array.NewSlice(values, s, e)
			err := l.child.append(child, row, out)
			child.Release()
			if err != nil {
				return err
			}
		}
		i = j
	}
	return nil
}

func (l *listEncoder) flush(out *[]encoding.EncodedPage) {
	if len(l.ends) == 0 {
		return
	}
	adj := l.items + 1
	buf := make([]byte, 8*len(l.ends))
	for i, e := range l.ends {
		if e&nullFlag != 0 {
			e = e&^nullFlag + adj
		}
		binary.LittleEndian.PutUint64(buf[8*i:], e)
	}
	enc := &enc20pb.ArrayEncoding{ArrayEncoding: &enc20pb.ArrayEncoding_List{List: &enc20pb.List{
		Offsets:              noNulls(flat(64, 0)),
		NullOffsetAdjustment: adj,
		NumItems:             l.items,
	}}}
	*out = append(*out, encoding.EncodedPage{
		Column:   l.column,
		Length:   uint64(len(l.ends)),
		Priority: l.first,
		Encoding: packAny(arrayEncodingURL, enc),
		Buffers:  [][]byte{buf},
	})
	l.ends, l.items = l.ends[:0], 0
}

func (l *listEncoder) finish(out *[]encoding.EncodedPage) error {
	l.flush(out)
	return l.child.finish(out)
}

// leafEncoder writes the pages of a column of values.
type leafEncoder struct {
	column    int
	values    values
	pageBytes uint64
	first     uint64 // the top-level row of the page's first value
	pages     int    // pages written so far
}

func (l *leafEncoder) check(arr arrow.Array) error {
	if c, ok := l.values.(interface{ check(arrow.Array) error }); ok {
		return c.check(storage(arr))
	}
	return nil
}

func (l *leafEncoder) append(arr arrow.Array, row uint64, out *[]encoding.EncodedPage) error {
	arr = storage(arr)
	// Cut arr where the page fills, so pages stay near pageBytes even when
	// batches are large. A page that has no room for the next value is
	// written first: going over would copy the whole page to grow it.
	for off := 0; off < arr.Len(); {
		if l.values.len() == 0 {
			l.first = row + uint64(off)
		}
		rest := array.NewSlice(arr, int64(off), int64(arr.Len()))
		n := min(l.values.fit(rest, l.pageBytes-min(l.values.bytes(), l.pageBytes)), rest.Len())
		if n == 0 && l.values.len() > 0 {
			rest.Release()
			l.flush(out)
			continue
		}
		n = max(n, 1) // a value bigger than a page gets a page of its own
		part := array.NewSlice(rest, 0, int64(n))
		l.values.append(part)
		part.Release()
		rest.Release()
		off += n
		if l.values.bytes() >= l.pageBytes {
			l.flush(out)
		}
	}
	return nil
}

func (l *leafEncoder) flush(out *[]encoding.EncodedPage) {
	n := l.values.len()
	if n == 0 && l.pages > 0 {
		return
	}
	l.pages++
	var bufs [][]byte
	enc := l.values.encode(&bufs)
	*out = append(*out, encoding.EncodedPage{
		Column:   l.column,
		Length:   uint64(n),
		Priority: l.first,
		Encoding: packAny(arrayEncodingURL, enc),
		Buffers:  bufs,
	})
	l.values.reset()
}

// finish writes the last page; a column that got no values at all (the
// items of lists that are all empty) gets one empty page, as Lance writes.
func (l *leafEncoder) finish(out *[]encoding.EncodedPage) error {
	l.flush(out)
	return nil
}

func flat(bits uint64, buffer uint32) *enc20pb.ArrayEncoding {
	return &enc20pb.ArrayEncoding{ArrayEncoding: &enc20pb.ArrayEncoding_Flat{Flat: &enc20pb.Flat{
		BitsPerValue: bits,
		Buffer:       &enc20pb.Buffer{BufferIndex: buffer},
	}}}
}

func noNulls(values *enc20pb.ArrayEncoding) *enc20pb.ArrayEncoding {
	return &enc20pb.ArrayEncoding{ArrayEncoding: &enc20pb.ArrayEncoding_Nullable{Nullable: &enc20pb.Nullable{
		Nullability: &enc20pb.Nullable_NoNulls{NoNulls: &enc20pb.Nullable_NoNull{Values: values}},
	}}}
}
