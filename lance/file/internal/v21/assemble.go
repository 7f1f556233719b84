package v21

import (
	"encoding/binary"
	"math"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancens/lancens/lance/schema"
)

// assemble builds the array of field f, of type dt, from the columns read
// for its leaves (by field id). Each struct and list takes its structure
// from the first leaf below it; the others must agree on their length. It
// returns an error wrapping ErrCorrupt when the columns' structure
// disagrees with the field or with each other.
func assemble(f *schema.Field, dt arrow.DataType, cols map[int32]*Column, mem memory.Allocator, bud budget) (arrow.Array, error) {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	a := &assembler{mem: mem, cols: cols, bud: bud}
	data, err := a.build(f, dt, 0)
	if err != nil {
		return nil, err
	}
	defer data.Release()
	return array.MakeFromData(data), nil
}

type assembler struct {
	mem  memory.Allocator
	cols map[int32]*Column
	bud  budget
}

// firstLeaf returns the column of the first leaf under f (a packed
// struct is a leaf).
func (a *assembler) firstLeaf(f *schema.Field) (*Column, error) {
	for !f.IsLeaf() && !packed(f) {
		f = f.Children[0]
	}
	c := a.cols[f.ID]
	if c == nil {
		return nil, corrupt("field %s has no column read", f.Name)
	}
	return c, nil
}

// build assembles field f, whose structure is layer k (counted from the
// top-level field) of its leaves' columns.
func (a *assembler) build(f *schema.Field, dt arrow.DataType, k int) (arrow.ArrayData, error) {
	col, err := a.firstLeaf(f)
	if err != nil {
		return nil, err
	}
	if len(col.layers) <= k {
		return nil, corrupt("field %s is nested deeper than its column's %d layers", f.Name, len(col.layers))
	}
	l := &col.layers[k]
	if packed(f) {
		if l.list || k != len(col.layers)-1 {
			return nil, corrupt("packed struct %s is not its column's last layer", f.Name)
		}
		return a.packedStruct(f, dt, col, l)
	}
	switch t := dt.(type) {
	case *arrow.StructType:
		if l.list || !f.IsStruct() || len(f.Children) != t.NumFields() {
			return nil, corrupt("struct field %s does not match its column's layers", f.Name)
		}
		children := make([]arrow.ArrayData, 0, t.NumFields())
		defer func() {
			for _, c := range children {
				c.Release()
			}
		}()
		for i, cf := range f.Children {
			child, err := a.build(cf, t.Field(i).Type, k+1)
			if err != nil {
				return nil, err
			}
			children = append(children, child)
			if child.Len() != l.n {
				return nil, corrupt("struct %s has %d entries, its field %s %d", f.Name, l.n, cf.Name, child.Len())
			}
		}
		return array.NewData(dt, l.n, []*memory.Buffer{a.validity(l)}, children, l.nulls, 0), nil
	case *arrow.ListType, *arrow.LargeListType:
		if !l.list || !f.IsList() || len(f.Children) != 1 {
			return nil, corrupt("list field %s does not match its column's layers", f.Name)
		}
		child, err := a.build(f.Children[0], dt.(arrow.ListLikeType).Elem(), k+1)
		if err != nil {
			return nil, err
		}
		defer child.Release()
		if int64(child.Len()) != l.offsets[l.n] {
			return nil, corrupt("list %s of %d items over %d", f.Name, l.offsets[l.n], child.Len())
		}
		if err := a.bud.take(8*uint64(l.n+1), "list offsets"); err != nil {
			return nil, err
		}
		var offsets []byte
		if _, large := dt.(*arrow.LargeListType); large {
			offsets = int64Bytes(l.offsets)
		} else {
			if l.offsets[l.n] > math.MaxInt32 {
				return nil, corrupt("list %s of %d items needs 64-bit offsets", f.Name, l.offsets[l.n])
			}
			offsets = int32Bytes(l.offsets)
		}
		return array.NewData(dt, l.n, []*memory.Buffer{a.validity(l), memory.NewBufferBytes(offsets)}, []arrow.ArrayData{child}, l.nulls, 0), nil
	}
	if !f.IsLeaf() || l.list || k != len(col.layers)-1 {
		return nil, corrupt("leaf field %s is not its column's last layer", f.Name)
	}
	return a.leaf(dt, col, l)
}

// packedStruct builds a packed struct from its rows: each field's values
// are cut out of every row.
func (a *assembler) packedStruct(f *schema.Field, dt arrow.DataType, c *Column, l *colLayer) (arrow.ArrayData, error) {
	t, ok := dt.(*arrow.StructType)
	if !ok || len(c.parts) == 0 {
		return nil, corrupt("packed struct %s read as %s", f.Name, dt)
	}
	widths := c.parts[0].vals.packed
	if len(widths) != t.NumFields() {
		return nil, corrupt("packed struct %s has %d fields, its pages %d", f.Name, t.NumFields(), len(widths))
	}
	total := 0
	for i, w := range widths {
		if fw, ok := fixedWidth(t.Field(i).Type); !ok || fw != w {
			return nil, corrupt("packed struct %s: field %s is %s, its values %d bits", f.Name, t.Field(i).Name, t.Field(i).Type, w)
		}
		total += w
	}
	for _, p := range c.parts {
		if !p.vals.null && !slices.Equal(p.vals.packed, widths) {
			return nil, corrupt("packed struct %s: pages of different fields", f.Name)
		}
	}
	if err := a.bud.take(2*uint64(l.n)*uint64(total)/8, "packed struct"); err != nil {
		return nil, err
	}
	rows, err := gatherFixed(c.parts, total, l.n)
	if err != nil {
		return nil, err
	}
	children := make([]arrow.ArrayData, len(widths))
	off := 0
	for i, w := range widths {
		bw := w / 8
		data := make([]byte, l.n*bw)
		for r := 0; r < l.n; r++ {
			copy(data[r*bw:], rows[r*total/8+off:r*total/8+off+bw])
		}
		off += bw
		children[i] = array.NewData(t.Field(i).Type, l.n, []*memory.Buffer{nil, memory.NewBufferBytes(data)}, nil, 0, 0)
		defer children[i].Release()
	}
	return array.NewData(dt, l.n, []*memory.Buffer{a.validity(l)}, children, l.nulls, 0), nil
}

func (a *assembler) validity(l *colLayer) *memory.Buffer {
	if l.nulls == 0 {
		return nil
	}
	return memory.NewBufferBytes(l.validity)
}

// leaf builds the leaf array of a column from its parts.
func (a *assembler) leaf(dt arrow.DataType, c *Column, l *colLayer) (arrow.ArrayData, error) {
	valid := a.validity(l)
	switch t := dt.(type) {
	case *arrow.FixedSizeListType:
		width, _ := fixedWidth(t.Elem())
		dim := int(t.Len())
		if err := a.bud.take(uint64(l.n)*uint64(dim)*uint64(width+1)/8+1, "vectors"); err != nil {
			return nil, err
		}
		items, itemValid, itemNulls, err := gatherFSL(c.parts, dim, width, l.n)
		if err != nil {
			return nil, err
		}
		var iv *memory.Buffer
		if itemNulls > 0 {
			iv = memory.NewBufferBytes(itemValid)
		}
		child := array.NewData(t.Elem(), l.n*dim, []*memory.Buffer{iv, memory.NewBufferBytes(items)}, nil, itemNulls, 0)
		defer child.Release()
		return array.NewData(dt, l.n, []*memory.Buffer{valid}, []arrow.ArrayData{child}, l.nulls, 0), nil
	}
	if width, ok := fixedWidth(dt); ok {
		if err := a.bud.take((uint64(l.n)*uint64(width)+7)/8, "values"); err != nil {
			return nil, err
		}
		data, err := gatherFixed(c.parts, width, l.n)
		if err != nil {
			return nil, err
		}
		return array.NewData(dt, l.n, []*memory.Buffer{valid, memory.NewBufferBytes(data)}, nil, l.nulls, 0), nil
	}
	if isBinary(dt) {
		if err := a.bud.take(16*uint64(l.n+1)+variableBytes(c.parts), "values"); err != nil {
			return nil, err
		}
		offsets, data, err := gatherVariable(c.parts, l.n, variableBytes(c.parts))
		if err != nil {
			return nil, err
		}
		var ob []byte
		switch dt.ID() {
		case arrow.LARGE_STRING, arrow.LARGE_BINARY:
			ob = int64Bytes(offsets)
		default:
			if offsets[len(offsets)-1] > math.MaxInt32 {
				return nil, corrupt("%d bytes of values need 64-bit offsets", offsets[len(offsets)-1])
			}
			ob = int32Bytes(offsets)
		}
		return array.NewData(dt, l.n, []*memory.Buffer{valid, memory.NewBufferBytes(ob), memory.NewBufferBytes(data)}, nil, l.nulls, 0), nil
	}
	return nil, unsupported("leaves of type %s", dt)
}

// fixedWidth returns the width in bits of a fixed-width type's values (1
// for booleans).
func fixedWidth(dt arrow.DataType) (int, bool) {
	switch dt.ID() {
	case arrow.BOOL:
		return 1, true
	case arrow.INT8, arrow.UINT8:
		return 8, true
	case arrow.INT16, arrow.UINT16, arrow.FLOAT16:
		return 16, true
	case arrow.INT32, arrow.UINT32, arrow.FLOAT32, arrow.DATE32, arrow.TIME32:
		return 32, true
	case arrow.INT64, arrow.UINT64, arrow.FLOAT64, arrow.DATE64, arrow.TIME64, arrow.TIMESTAMP, arrow.DURATION:
		return 64, true
	case arrow.DECIMAL128:
		return 128, true
	case arrow.DECIMAL256:
		return 256, true
	case arrow.FIXED_SIZE_BINARY:
		return 8 * dt.(*arrow.FixedSizeBinaryType).ByteWidth, true
	}
	return 0, false
}

func isBinary(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.STRING, arrow.LARGE_STRING, arrow.BINARY, arrow.LARGE_BINARY:
		return true
	}
	return false
}

// gatherFixed concatenates the fixed-width values of parts: n values of
// bits bits.
func gatherFixed(parts []part, bits, n int) ([]byte, error) {
	// One page of plain values: its bytes as they are.
	if len(parts) == 1 && bits%8 == 0 {
		p := parts[0]
		v := p.vals
		if !v.null && !v.scalar && p.dict == nil && !v.variable() && v.fsl == nil && v.bits == bits && p.end-p.start == n {
			return v.data[p.start*bits/8 : p.end*bits/8], nil
		}
	}
	var out []byte
	if bits == 1 {
		out = make([]byte, 0, (n+7)/8)
	} else {
		out = make([]byte, 0, n*bits/8)
	}
	got := 0
	for _, p := range parts {
		cnt := p.end - p.start
		v := p.vals
		switch {
		case v.null:
			if bits == 1 {
				out = appendBits(out, got, make([]byte, (cnt+7)/8), 0, cnt)
			} else {
				out = append(out, make([]byte, cnt*bits/8)...)
			}
		case v.scalar:
			if v.variable() {
				return nil, corrupt("a variable-width constant for fixed-width values")
			}
			if bits == 1 {
				if len(v.data) != 1 {
					return nil, corrupt("boolean constant of %d bytes", len(v.data))
				}
				if v.data[0]&1 != 0 {
					out = appendOnes(out, got, cnt)
				} else {
					out = appendBits(out, got, make([]byte, (cnt+7)/8), 0, cnt)
				}
			} else {
				if v.bits != bits {
					return nil, corrupt("constant of %d bits for %d-bit values", v.bits, bits)
				}
				for i := 0; i < cnt; i++ {
					out = append(out, v.data...)
				}
			}
		case p.dict != nil:
			d := p.dict
			if d.variable() || d.scalar || d.bits != bits || bits == 1 {
				return nil, corrupt("dictionary of %d-bit values for %d-bit values", d.bits, bits)
			}
			w := v.bits / 8
			for i := p.start; i < p.end; i++ {
				idx := int(readUint(v.data, i*w, w))
				out = append(out, d.data[idx*bits/8:(idx+1)*bits/8]...)
			}
		default:
			if v.variable() || v.fsl != nil || v.bits != bits {
				return nil, corrupt("values of %d bits for a %d-bit type", v.bits, bits)
			}
			if bits == 1 {
				out = appendBits(out, got, v.data, p.start, cnt)
			} else {
				out = append(out, v.data[p.start*bits/8:p.end*bits/8]...)
			}
		}
		got += cnt
	}
	if got != n {
		return nil, corrupt("%d values for %d leaf entries", got, n)
	}
	return out, nil
}

// variableBytes returns the bytes of the variable-width values of parts.
func variableBytes(parts []part) uint64 {
	var n uint64
	for _, p := range parts {
		v := p.vals
		switch {
		case v.null:
		case v.scalar:
			n += uint64(p.end-p.start) * uint64(len(v.data))
		case p.dict != nil && p.dict.variable():
			w := v.bits / 8
			for i := p.start; i < p.end; i++ {
				idx := readUint(v.data, i*w, w)
				n += uint64(p.dict.offsets[idx+1] - p.dict.offsets[idx])
			}
		case v.variable():
			n += uint64(v.offsets[p.end] - v.offsets[p.start])
		}
	}
	return n
}

// gatherVariable concatenates the variable-width values of parts.
func gatherVariable(parts []part, n int, size uint64) ([]int64, []byte, error) {
	offsets := make([]int64, 1, n+1)
	data := make([]byte, 0, size)
	for _, p := range parts {
		v := p.vals
		cnt := p.end - p.start
		switch {
		case v.null:
			for i := 0; i < cnt; i++ {
				offsets = append(offsets, int64(len(data)))
			}
		case v.scalar:
			if !v.variable() {
				return nil, nil, corrupt("a fixed-width constant for variable-width values")
			}
			for i := 0; i < cnt; i++ {
				data = append(data, v.data...)
				offsets = append(offsets, int64(len(data)))
			}
		case p.dict != nil:
			d := p.dict
			if !d.variable() {
				return nil, nil, corrupt("dictionary of fixed-width values for variable-width values")
			}
			w := v.bits / 8
			for i := p.start; i < p.end; i++ {
				idx := int(readUint(v.data, i*w, w))
				data = append(data, d.data[d.offsets[idx]:d.offsets[idx+1]]...)
				offsets = append(offsets, int64(len(data)))
			}
		default:
			if !v.variable() {
				return nil, nil, corrupt("fixed-width values for a variable-width type")
			}
			base := int64(len(data)) - v.offsets[p.start]
			data = append(data, v.data[v.offsets[p.start]:v.offsets[p.end]]...)
			for _, o := range v.offsets[p.start+1 : p.end+1] {
				offsets = append(offsets, o+base)
			}
		}
	}
	if len(offsets) != n+1 {
		return nil, nil, corrupt("%d values for %d leaf entries", len(offsets)-1, n)
	}
	return offsets, data, nil
}

// gatherFSL concatenates fixed-size lists of dim items of bits bits: the
// items and, when any is null, their validity.
func gatherFSL(parts []part, dim, bits, n int) (items, validity []byte, nulls int, err error) {
	anyValidity := false
	for _, p := range parts {
		v := p.vals
		if v.null || (len(v.fsl) == 1 && v.fsl[0].validity != nil) {
			anyValidity = true
		}
	}
	// One page of plain vectors: its items as they are.
	if len(parts) == 1 && !anyValidity {
		p := parts[0]
		v := p.vals
		if !v.null && !v.scalar && p.dict == nil && len(v.fsl) == 1 && v.fsl[0].dim == dim && v.bits == bits && bits%8 == 0 && p.end-p.start == n {
			return v.data[p.start*dim*bits/8 : p.end*dim*bits/8], nil, 0, nil
		}
	}
	items = make([]byte, 0, (n*dim*bits+7)/8)
	if anyValidity {
		validity = make([]byte, 0, (n*dim+7)/8)
	}
	got := 0
	for _, p := range parts {
		v := p.vals
		cnt := p.end - p.start
		switch {
		case v.null:
			if bits == 1 {
				items = appendBits(items, got*dim, make([]byte, (cnt*dim+7)/8), 0, cnt*dim)
			} else {
				items = append(items, make([]byte, cnt*dim*bits/8)...)
			}
			validity = appendOnes(validity, got*dim, cnt*dim)
		case v.scalar || p.dict != nil:
			return nil, nil, 0, unsupported("constant or dictionary fixed-size lists")
		default:
			if len(v.fsl) != 1 || v.fsl[0].dim != dim || v.bits != bits {
				return nil, nil, 0, corrupt("values do not hold fixed-size lists of %d %d-bit items", dim, bits)
			}
			if bits == 1 {
				items = appendBits(items, got*dim, v.data, p.start*dim, cnt*dim)
			} else {
				items = append(items, v.data[p.start*dim*bits/8:p.end*dim*bits/8]...)
			}
			if !anyValidity {
				break
			}
			if iv := v.fsl[0].validity; iv != nil {
				validity = appendBits(validity, got*dim, iv, p.start*dim, cnt*dim)
				for i := p.start * dim; i < p.end*dim; i++ {
					if !bitSet(iv, i) {
						nulls++
					}
				}
			} else {
				validity = appendOnes(validity, got*dim, cnt*dim)
			}
		}
		got += cnt
	}
	if got != n {
		return nil, nil, 0, corrupt("%d fixed-size lists for %d leaf entries", got, n)
	}
	return items, validity, nulls, nil
}

func int32Bytes(v []int64) []byte {
	out := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(out[4*i:], uint32(x))
	}
	return out
}

func int64Bytes(v []int64) []byte {
	out := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(out[8*i:], uint64(x))
	}
	return out
}
