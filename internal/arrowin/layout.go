package arrowin

import (
	"github.com/apache/arrow-go/v18/arrow"
)

// layout walks the columns of one batch together with its FieldNodes and
// Buffers, taking them in the order arrow-go's loader does, so that every
// node and buffer slot the loader will read is known to exist, and the
// buffers it will read are marked used. A node's length and null count
// are checked for sign and order; whether the buffers are long enough for
// them is checked after decoding (see validate.go).
type layout struct {
	meta     []byte
	b        batch
	node     int
	buf      int
	variadic int
	used     []bool
	values   *budget // every node's length counts as that many values
}

func newLayout(meta []byte, b batch, values *budget) *layout {
	return &layout{meta: meta, b: b, used: make([]bool, b.nBuffers), values: values}
}

// columns walks the top-level columns of a record batch, each of which must
// have the batch's length.
func (l *layout) columns(schema *arrow.Schema) error {
	for _, f := range schema.Fields() {
		first := l.node
		if err := l.column(f.Type, f.Name, 0); err != nil {
			return err
		}
		if n, _ := l.b.node(l.meta, first); n != l.b.length {
			return invalid("column %q has %d rows in a batch of %d", f.Name, n, l.b.length)
		}
	}
	return nil
}

// column walks one array of type dt (named name in errors) at nesting
// depth.
func (l *layout) column(dt arrow.DataType, name string, depth int) error {
	if depth > maxDepth {
		return invalid("column %q nests deeper than %d levels", name, maxDepth)
	}
	switch t := dt.(type) {
	case arrow.ExtensionType:
		return l.column(t.StorageType(), name, depth)
	case *arrow.NullType:
		_, _, err := l.nextNode(name)
		return err
	case *arrow.DictionaryType:
		return l.fixed(name)
	case *arrow.BinaryType, *arrow.StringType, *arrow.LargeBinaryType, *arrow.LargeStringType:
		return l.withBuffers(name, 2)
	case *arrow.BinaryViewType, *arrow.StringViewType:
		return l.view(name)
	case *arrow.ListType:
		return l.nested(name, depth, 1, t.ElemField())
	case *arrow.LargeListType:
		return l.nested(name, depth, 1, t.ElemField())
	case *arrow.MapType:
		return l.nested(name, depth, 1, t.ElemField())
	case *arrow.FixedSizeListType:
		if t.Len() < 0 {
			return invalid("column %q is a fixed-size list of %d items", name, t.Len())
		}
		return l.nested(name, depth, 0, t.ElemField())
	case *arrow.StructType:
		return l.nested(name, depth, 0, t.Fields()...)
	case *arrow.FixedSizeBinaryType:
		if t.ByteWidth < 0 {
			return invalid("column %q is a fixed-size binary of %d bytes", name, t.ByteWidth)
		}
		return l.fixed(name)
	case arrow.FixedWidthDataType:
		return l.fixed(name)
	}
	return unsupported("column %q has type %s, which lancens cannot store", name, dt)
}

// nextNode takes the next FieldNode.
func (l *layout) nextNode(name string) (length, nulls int64, err error) {
	if l.node >= l.b.nNodes {
		return 0, 0, invalid("a batch has fewer field nodes than its columns need (column %q)", name)
	}
	length, nulls = l.b.node(l.meta, l.node)
	l.node++
	if length < 0 || nulls < 0 || nulls > length {
		return 0, 0, invalid("column %q declares %d values of which %d are null", name, length, nulls)
	}
	return length, nulls, l.values.take(length)
}

// nextBuffer takes the next Buffer slot; the loader reads it when used.
func (l *layout) nextBuffer(name string, used bool) error {
	if l.buf >= l.b.nBuffers {
		return invalid("a batch has fewer buffers than its columns need (column %q)", name)
	}
	l.used[l.buf] = used
	l.buf++
	return nil
}

// withBuffers takes a node, its validity buffer (read when some values are
// null) and n more buffers.
func (l *layout) withBuffers(name string, n int) error {
	_, nulls, err := l.nextNode(name)
	if err != nil {
		return err
	}
	if err := l.nextBuffer(name, nulls > 0); err != nil {
		return err
	}
	for range n {
		if err := l.nextBuffer(name, true); err != nil {
			return err
		}
	}
	return nil
}

// fixed takes a fixed-width column: validity, then values (not read when
// the column is empty).
func (l *layout) fixed(name string) error {
	length, nulls, err := l.nextNode(name)
	if err != nil {
		return err
	}
	if err := l.nextBuffer(name, nulls > 0); err != nil {
		return err
	}
	return l.nextBuffer(name, length > 0)
}

// view takes a string or binary view column: validity, views, then as many
// data buffers as the batch's next variadic count says.
func (l *layout) view(name string) error {
	if l.variadic >= l.b.nVariadic {
		return invalid("a batch has fewer variadic buffer counts than its view columns need (column %q)", name)
	}
	n := l.b.variadicCount(l.meta, l.variadic)
	l.variadic++
	if n < 0 || n > int64(l.b.nBuffers) {
		return invalid("column %q declares %d data buffers", name, n)
	}
	return l.withBuffers(name, 1+int(n))
}

// nested takes a list-like or struct column with extra buffers after its
// validity (offsets for lists and maps), then its children.
func (l *layout) nested(name string, depth, extra int, children ...arrow.Field) error {
	if err := l.withBuffers(name, extra); err != nil {
		return err
	}
	for _, c := range children {
		if err := l.column(c.Type, name+"."+c.Name, depth+1); err != nil {
			return err
		}
	}
	return nil
}
