package engine

import (
	"encoding/binary"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// take returns the rows of arr at positions idx, in that order (a position
// may repeat): how a query gathers the rows its filter kept from a cached
// column, and how writes pick the rows they rewrite. Types with a fixed
// layout are copied buffer to buffer; others fall back to concatenating
// one-row slices.
func take(mem memory.Allocator, arr arrow.Array, idx []int) arrow.Array {
	return fromData(takeData(mem, arr, idx))
}

// fromData returns the array of d, handing it the caller's reference.
func fromData(d arrow.ArrayData) arrow.Array {
	defer d.Release()
	return array.MakeFromData(d)
}

func takeData(mem memory.Allocator, arr arrow.Array, idx []int) arrow.ArrayData {
	n := len(idx)
	dt := arr.DataType()
	validity, nulls := takeValidity(mem, arr, idx)
	switch a := arr.(type) {
	case *array.Null:
		return array.NewNull(n).Data()
	case *array.Boolean:
		out := memory.NewResizableBuffer(mem)
		out.Resize(int(bitutil.BytesForBits(int64(n))))
		bits := out.Bytes()
		clear(bits)
		for j, i := range idx {
			if a.Value(i) {
				bitutil.SetBit(bits, j)
			}
		}
		return ownedData(dt, n, []*memory.Buffer{validity, out}, nil, nulls, 0)
	case *array.String:
		return takeBinary32(mem, dt, a.ValueOffsets(), a.ValueBytes(), idx, validity, nulls)
	case *array.Binary:
		return takeBinary32(mem, dt, a.ValueOffsets(), a.ValueBytes(), idx, validity, nulls)
	case *array.LargeString:
		return takeBinary64(mem, dt, a.ValueOffsets(), a.ValueBytes(), idx, validity, nulls)
	case *array.LargeBinary:
		return takeBinary64(mem, dt, a.ValueOffsets(), a.ValueBytes(), idx, validity, nulls)
	case *array.FixedSizeList:
		size := int(dt.(*arrow.FixedSizeListType).Len())
		child := make([]int, 0, n*size)
		for _, i := range idx {
			start, _ := a.ValueOffsets(i)
			for k := range size {
				child = append(child, int(start)+k)
			}
		}
		values := takeData(mem, a.ListValues(), child)
		return ownedData(dt, n, []*memory.Buffer{validity}, []arrow.ArrayData{values}, nulls, 0)
	case *array.List:
		return takeList(mem, dt, a, a.ListValues(), idx, validity, nulls, false)
	case *array.LargeList:
		return takeList(mem, dt, a, a.ListValues(), idx, validity, nulls, true)
	case *array.Struct:
		children := make([]arrow.ArrayData, a.NumField())
		for j := range children {
			children[j] = takeData(mem, a.Field(j), idx)
		}
		return ownedData(dt, n, []*memory.Buffer{validity}, children, nulls, 0)
	case *array.Dictionary:
		if validity != nil {
			validity.Release() // the indices carry the nulls
		}
		indices := takeData(mem, a.Indices(), idx)
		defer indices.Release()
		d := array.NewData(dt, n, indices.Buffers(), nil, nulls, 0)
		d.SetDictionary(a.Dictionary().Data())
		return d
	}
	if fw, ok := dt.(arrow.FixedWidthDataType); ok && fw.BitWidth()%8 == 0 && len(arr.Data().Buffers()) == 2 {
		width := fw.BitWidth() / 8
		src := arr.Data().Buffers()[1].Bytes()[arr.Data().Offset()*width:]
		out := memory.NewResizableBuffer(mem)
		out.Resize(n * width)
		dst := out.Bytes()
		for j, i := range idx {
			copy(dst[j*width:(j+1)*width], src[i*width:(i+1)*width])
		}
		return ownedData(dt, n, []*memory.Buffer{validity, out}, nil, nulls, 0)
	}
	if validity != nil {
		validity.Release()
	}
	return concatRows(mem, arr, idx)
}

// concatRows gathers rows by concatenating one-row slices: the fallback
// for types take has no layout for.
func concatRows(mem memory.Allocator, arr arrow.Array, idx []int) arrow.ArrayData {
	if len(idx) == 0 {
		empty := array.MakeArrayOfNull(mem, arr.DataType(), 0)
		defer empty.Release()
		d := empty.Data()
		d.Retain()
		return d
	}
	parts := make([]arrow.Array, len(idx))
	for j, i := range idx {
		parts[j] = array.NewSlice(arr, int64(i), int64(i)+1)
	}
	out, err := array.Concatenate(parts, mem)
	for _, p := range parts {
		p.Release()
	}
	if err != nil {
		panic(err) // slices of one array always concatenate
	}
	d := out.Data()
	d.Retain()
	out.Release()
	return d
}

// takeValidity returns the validity bitmap of the rows at idx, nil when
// none of them is null, and the number of nulls.
func takeValidity(mem memory.Allocator, arr arrow.Array, idx []int) (*memory.Buffer, int) {
	if arr.NullN() == 0 || arr.DataType().ID() == arrow.NULL {
		return nil, 0
	}
	out := memory.NewResizableBuffer(mem)
	out.Resize(int(bitutil.BytesForBits(int64(len(idx)))))
	bits := out.Bytes()
	clear(bits)
	nulls := 0
	for j, i := range idx {
		if arr.IsValid(i) {
			bitutil.SetBit(bits, j)
		} else {
			nulls++
		}
	}
	if nulls == 0 {
		out.Release()
		return nil, 0
	}
	return out, nulls
}

// takeBinary32 gathers values of 32-bit offsets (relative to the array's
// own slice) whose bytes data starts at offsets[0].
func takeBinary32(mem memory.Allocator, dt arrow.DataType, offsets []int32, data []byte, idx []int, validity *memory.Buffer, nulls int) arrow.ArrayData {
	base := offsets[0]
	size := 0
	for _, i := range idx {
		size += int(offsets[i+1] - offsets[i])
	}
	offs := memory.NewResizableBuffer(mem)
	offs.Resize(4 * (len(idx) + 1))
	vals := memory.NewResizableBuffer(mem)
	vals.Resize(size)
	ob, vb := offs.Bytes(), vals.Bytes()
	pos := 0
	binary.LittleEndian.PutUint32(ob, 0)
	for j, i := range idx {
		pos += copy(vb[pos:], data[offsets[i]-base:offsets[i+1]-base])
		binary.LittleEndian.PutUint32(ob[4*(j+1):], uint32(pos))
	}
	return ownedData(dt, len(idx), []*memory.Buffer{validity, offs, vals}, nil, nulls, 0)
}

// takeBinary64 is takeBinary32 for 64-bit offsets.
func takeBinary64(mem memory.Allocator, dt arrow.DataType, offsets []int64, data []byte, idx []int, validity *memory.Buffer, nulls int) arrow.ArrayData {
	base := offsets[0]
	size := 0
	for _, i := range idx {
		size += int(offsets[i+1] - offsets[i])
	}
	offs := memory.NewResizableBuffer(mem)
	offs.Resize(8 * (len(idx) + 1))
	vals := memory.NewResizableBuffer(mem)
	vals.Resize(size)
	ob, vb := offs.Bytes(), vals.Bytes()
	pos := 0
	binary.LittleEndian.PutUint64(ob, 0)
	for j, i := range idx {
		pos += copy(vb[pos:], data[offsets[i]-base:offsets[i+1]-base])
		binary.LittleEndian.PutUint64(ob[8*(j+1):], uint64(pos))
	}
	return ownedData(dt, len(idx), []*memory.Buffer{validity, offs, vals}, nil, nulls, 0)
}

// listOffsets is what take needs of a list array.
type listOffsets interface {
	ValueOffsets(i int) (start, end int64)
}

func takeList(mem memory.Allocator, dt arrow.DataType, a listOffsets, values arrow.Array, idx []int, validity *memory.Buffer, nulls int, large bool) arrow.ArrayData {
	width := 4
	if large {
		width = 8
	}
	offs := memory.NewResizableBuffer(mem)
	offs.Resize(width * (len(idx) + 1))
	ob := offs.Bytes()
	var child []int
	for j, i := range idx {
		start, end := a.ValueOffsets(i)
		for k := start; k < end; k++ {
			child = append(child, int(k))
		}
		if large {
			binary.LittleEndian.PutUint64(ob[8*(j+1):], uint64(len(child)))
		} else {
			binary.LittleEndian.PutUint32(ob[4*(j+1):], uint32(len(child)))
		}
	}
	clear(ob[:width])
	vals := takeData(mem, values, child)
	return ownedData(dt, len(idx), []*memory.Buffer{validity, offs}, []arrow.ArrayData{vals}, nulls, 0)
}

// ownedData is array.NewData for buffers and children the caller made and
// hands over: the data takes its own references, and the caller's go.
func ownedData(dt arrow.DataType, n int, bufs []*memory.Buffer, children []arrow.ArrayData, nulls, offset int) arrow.ArrayData {
	d := array.NewData(dt, n, bufs, children, nulls, offset)
	for _, b := range bufs {
		if b != nil {
			b.Release()
		}
	}
	for _, c := range children {
		c.Release()
	}
	return d
}
