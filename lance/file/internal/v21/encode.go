package v21

import (
	"fmt"
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/lancens/lancens/lance/file/internal/encoding"
	"github.com/lancens/lancens/lance/internal/pb/enc20pb"
	"github.com/lancens/lancens/lance/schema"
)

// Encoder encodes rows into format 2.1 or 2.2 pages, in the simplest
// layouts Lance reads, without compression: a column per leaf; values
// under 256 bytes in mini-block pages of flat or variable-width values
// (and vectors with their items' validity); larger values in full-zip
// pages; pages whose rows hold no value (null or empty lists) as constant
// pages of raw levels. Structs and lists are carried by each leaf's
// repetition and definition levels, whose layers say only what the page's
// rows hold (a layer without nulls takes no definition level). A column's
// page is cut, at a row boundary, once its buffered values reach the page
// size, so memory stays near a page per column.
type Encoder struct {
	large     bool // 2.2: mini-block chunks use the u32 grammar
	pageBytes uint64
	fields    [][]*leafEncoder // per top-level field, its leaves
	leaves    []*leafEncoder
	fieldIDs  []int32
}

var _ encoding.Encoder = (*Encoder)(nil)

// NewEncoder returns an encoder of the rows of s (whose fields carry their
// ids) into format 2.1 pages, or 2.2 pages when v22 is set, of about
// pageBytes. It returns an error wrapping ErrUnsupported for a type this
// package cannot write (maps, dictionaries, empty structs, packed
// structs, fixed-size lists of anything but fixed-width values).
func NewEncoder(s *schema.Schema, pageBytes uint64, v22 bool) (*Encoder, error) {
	e := &Encoder{large: v22, pageBytes: max(pageBytes, 1)}
	for _, f := range s.Fields {
		dt, err := f.ArrowType()
		if err != nil {
			return nil, err
		}
		var leaves []*leafEncoder
		if err := e.addLeaves(f, dt, nil, &leaves); err != nil {
			return nil, err
		}
		e.fields = append(e.fields, leaves)
	}
	return e, nil
}

// pathNode is one field on the way from a top-level field to a leaf.
type pathNode struct {
	kind  nodeKind
	child int // a struct's field leading to the leaf
}

type nodeKind uint8

const (
	nodeStruct nodeKind = iota
	nodeList
	nodeLeaf
)

func (e *Encoder) addLeaves(f *schema.Field, dt arrow.DataType, path []pathNode, out *[]*leafEncoder) error {
	if len(path) >= schema.MaxDepth {
		return encoding.Unsupportedf("fields nest more than %d deep", schema.MaxDepth)
	}
	if ext, ok := dt.(arrow.ExtensionType); ok {
		dt = ext.StorageType()
	}
	switch t := dt.(type) {
	case *arrow.StructType:
		if packed(f) {
			return encoding.Unsupportedf("writing packed structs (field %s)", f.Name)
		}
		if len(f.Children) == 0 {
			return encoding.Unsupportedf("writing structs without fields (field %s)", f.Name)
		}
		for i, c := range f.Children {
			p := append(append([]pathNode(nil), path...), pathNode{kind: nodeStruct, child: i})
			if err := e.addLeaves(c, t.Field(i).Type, p, out); err != nil {
				return err
			}
		}
		return nil
	case *arrow.ListType, *arrow.LargeListType:
		p := append(append([]pathNode(nil), path...), pathNode{kind: nodeList})
		return e.addLeaves(f.Children[0], t.(arrow.ListLikeType).Elem(), p, out)
	}
	sink, err := newValueSink(dt)
	if err != nil {
		return fmt.Errorf("field %s: %w", f.Name, err)
	}
	l := &leafEncoder{
		enc:    e,
		column: len(e.leaves),
		path:   append(append([]pathNode(nil), path...), pathNode{kind: nodeLeaf}),
		vals:   sink,
	}
	for _, n := range l.path {
		if n.kind == nodeList {
			l.lists++
		}
	}
	l.reset(0)
	e.leaves = append(e.leaves, l)
	e.fieldIDs = append(e.fieldIDs, f.ID)
	*out = append(*out, l)
	return nil
}

// NumColumns returns the number of columns of the file.
func (e *Encoder) NumColumns() int { return len(e.leaves) }

// FieldIDs returns the id of the field of each column, in column order.
func (e *Encoder) FieldIDs() []int32 { return e.fieldIDs }

// Append encodes a batch (one array per top-level field, in the schema's
// order) whose first row is the file's row row, and returns the pages it
// filled.
func (e *Encoder) Append(cols []arrow.Array, row uint64) ([]encoding.EncodedPage, error) {
	if len(cols) != len(e.fields) {
		return nil, fmt.Errorf("%d columns for %d fields", len(cols), len(e.fields))
	}
	var out []encoding.EncodedPage
	for i, leaves := range e.fields {
		for _, l := range leaves {
			if err := l.append(cols[i], row, &out); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// Finish returns the last page of every column.
func (e *Encoder) Finish() ([]encoding.EncodedPage, error) {
	var out []encoding.EncodedPage
	for _, l := range e.leaves {
		if err := l.flush(&out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ColumnEncoding returns the encoding Lance gives every 2.1 column: plain
// values (the 2.0 message), as a serialized Any.
func (*Encoder) ColumnEncoding(int) []byte {
	return packAny("/lance.encodings.ColumnEncoding", &enc20pb.ColumnEncoding{ColumnEncoding: &enc20pb.ColumnEncoding_Values{Values: &emptypb.Empty{}}})
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

// leafEncoder buffers one leaf column's page: a repetition level and a
// definition event per position, and the values of the visible items.
type leafEncoder struct {
	enc    *Encoder
	column int
	path   []pathNode // from the top-level field to the leaf
	lists  int
	vals   valueSink

	firstRow uint64
	rows     uint64
	rep      []uint16
	// event is, per position, 0 for a valid item, 1+2k for a null at node
	// k of the path, 2+2k for an empty list at node k.
	event []uint16
	// nulls[k] and empties[k] say whether node k had a null or an empty
	// list in this page: they decide the page's layers.
	nulls, empties []bool
}

func (l *leafEncoder) reset(firstRow uint64) {
	l.firstRow, l.rows = firstRow, 0
	l.rep, l.event = l.rep[:0], l.event[:0]
	l.nulls, l.empties = make([]bool, len(l.path)), make([]bool, len(l.path))
	l.vals.reset()
}

// storage returns the storage array of an extension array, or arr.
func storage(arr arrow.Array) arrow.Array {
	if ext, ok := arr.(array.ExtensionArray); ok {
		return ext.Storage()
	}
	return arr
}

// append shreds a batch of the leaf's top-level field.
func (l *leafEncoder) append(col arrow.Array, row uint64, out *[]encoding.EncodedPage) error {
	// The array of each node of the path, for this batch.
	arrs := make([]arrow.Array, len(l.path))
	arrs[0] = storage(col)
	for k := 1; k < len(l.path); k++ {
		switch p := l.path[k-1]; p.kind {
		case nodeStruct:
			st, ok := arrs[k-1].(*array.Struct)
			if !ok {
				return encoding.Unsupportedf("a %s where a struct was expected", arrs[k-1].DataType())
			}
			arrs[k] = storage(st.Field(p.child))
		case nodeList:
			ll, ok := arrs[k-1].(array.ListLike)
			if !ok {
				return encoding.Unsupportedf("a %s where a list was expected", arrs[k-1].DataType())
			}
			arrs[k] = storage(ll.ListValues())
		}
	}
	if err := l.vals.check(arrs[len(arrs)-1]); err != nil {
		return err
	}
	if l.rows == 0 {
		l.firstRow = row
	}
	top := uint16(l.lists)
	for i := 0; i < col.Len(); i++ {
		l.walk(arrs, 0, i, top)
		l.rows++
		if l.vals.size() >= l.enc.pageBytes {
			if err := l.flush(out); err != nil {
				return err
			}
			l.reset(row + uint64(i) + 1)
		}
	}
	return nil
}

// walk shreds element idx of node k's array; rep is the repetition level
// of its first position.
func (l *leafEncoder) walk(arrs []arrow.Array, k, idx int, rep uint16) {
	a := arrs[k]
	switch l.path[k].kind {
	case nodeStruct:
		if a.IsNull(idx) {
			l.emit(rep, 1+2*uint16(k), k)
			if l.listsBelow(k) == 0 {
				// The leaf still has a slot: structs share indices. The
				// fields below keep their own nulls in the layers (as
				// Lance does), so that they read back null too.
				for j := k + 1; j < len(arrs); j++ {
					if arrs[j].IsNull(idx) {
						l.nulls[j] = true
					}
				}
				l.vals.add(arrs[len(arrs)-1], idx)
			}
			return
		}
		l.walk(arrs, k+1, idx, rep)
	case nodeList:
		if a.IsNull(idx) {
			l.emit(rep, 1+2*uint16(k), k)
			return
		}
		start, end := a.(array.ListLike).ValueOffsets(idx)
		if start == end {
			l.emit(rep, 2+2*uint16(k), k)
			return
		}
		// A new element of this list continues at its own level: the
		// number of lists inside it.
		inner := uint16(l.listsBelow(k))
		for j := start; j < end; j++ {
			r := inner
			if j == start {
				r = rep
			}
			l.walk(arrs, k+1, int(j), r)
		}
	case nodeLeaf:
		if a.IsNull(idx) {
			l.emit(rep, 1+2*uint16(k), k)
		} else {
			l.emit(rep, 0, k)
		}
		l.vals.add(a, idx)
	}
}

// listsBelow counts the lists of the path strictly below node k.
func (l *leafEncoder) listsBelow(k int) int {
	n := 0
	for _, p := range l.path[k+1:] {
		if p.kind == nodeList {
			n++
		}
	}
	return n
}

func (l *leafEncoder) emit(rep, event uint16, k int) {
	if l.lists > 0 {
		l.rep = append(l.rep, rep)
	}
	l.event = append(l.event, event)
	if event != 0 {
		if event%2 == 1 {
			l.nulls[k] = true
		} else {
			l.empties[k] = true
		}
	}
}

// flush returns the buffered rows as a page, if there are any.
func (l *leafEncoder) flush(out *[]encoding.EncodedPage) error {
	if l.rows == 0 {
		return nil
	}
	p, err := l.page()
	if err != nil {
		return err
	}
	*out = append(*out, p)
	return nil
}

// bitsFor returns the bits needed to store values up to v.
func bitsFor(v int) uint32 { return uint32(bits.Len(uint(v))) }
