package arrowin

import "encoding/binary"

// A flatbuffer is read through offsets stored in the buffer itself. The
// readers below check every offset, length and field width against the
// buffer before using it, so a corrupt or hostile flatbuffer yields an
// error, never an out-of-range read or an allocation sized by a forged
// count. (arrow-go reads Arrow's flatbuffer metadata without such checks.)

// table is one flatbuffer table inside buf.
type table struct {
	buf   []byte
	pos   int // the table's start
	vt    int // its vtable's start
	vtLen int // the vtable's length in bytes
	size  int // the table's inline size in bytes
}

func u16(b []byte, at int) int { return int(binary.LittleEndian.Uint16(b[at:])) }
func u32(b []byte, at int) int { return int(binary.LittleEndian.Uint32(b[at:])) }

// rootTable returns the table the buffer's first word points to.
func rootTable(buf []byte) (table, error) {
	if len(buf) < 4 {
		return table{}, invalid("message metadata of %d bytes is too short", len(buf))
	}
	return tableAt(buf, u32(buf, 0))
}

// tableAt returns the table at pos after checking that it and its vtable
// lie inside buf.
func tableAt(buf []byte, pos int) (table, error) {
	if pos < 0 || pos > len(buf)-4 {
		return table{}, corrupt("a table offset points outside the metadata")
	}
	vt := pos - int(int32(binary.LittleEndian.Uint32(buf[pos:])))
	if vt < 0 || vt > len(buf)-4 {
		return table{}, corrupt("a vtable offset points outside the metadata")
	}
	t := table{buf: buf, pos: pos, vt: vt, vtLen: u16(buf, vt), size: u16(buf, vt+2)}
	if t.vtLen < 4 || t.vtLen%2 != 0 || vt+t.vtLen > len(buf) || t.size < 4 || pos+t.size > len(buf) {
		return table{}, corrupt("a table or vtable overruns the metadata")
	}
	return t, nil
}

// field returns the position in buf of field slot, whose value is width
// bytes, or 0 when the field is absent.
func (t table) field(slot, width int) (int, error) {
	e := 4 + 2*slot
	if e+2 > t.vtLen {
		return 0, nil
	}
	o := u16(t.buf, t.vt+e)
	if o == 0 {
		return 0, nil
	}
	if o+width > t.size {
		return 0, corrupt("a field overruns its table")
	}
	return t.pos + o, nil
}

func (t table) int64Field(slot int) (int64, error) {
	p, err := t.field(slot, 8)
	if p == 0 {
		return 0, err
	}
	return int64(binary.LittleEndian.Uint64(t.buf[p:])), nil
}

func (t table) int16Field(slot int) (int16, error) {
	p, err := t.field(slot, 2)
	if p == 0 {
		return 0, err
	}
	return int16(binary.LittleEndian.Uint16(t.buf[p:])), nil
}

func (t table) byteField(slot int) (byte, error) {
	p, err := t.field(slot, 1)
	if p == 0 {
		return 0, err
	}
	return t.buf[p], nil
}

// ref returns where the offset stored in field slot points, or 0 when the
// field is absent.
func (t table) ref(slot int) (int, error) {
	p, err := t.field(slot, 4)
	if p == 0 || err != nil {
		return 0, err
	}
	target := p + u32(t.buf, p)
	if target > len(t.buf)-4 {
		return 0, corrupt("a field offset points outside the metadata")
	}
	return target, nil
}

// child returns the table field slot refers to; ok is false when absent.
func (t table) child(slot int) (c table, ok bool, err error) {
	target, err := t.ref(slot)
	if target == 0 || err != nil {
		return table{}, false, err
	}
	c, err = tableAt(t.buf, target)
	return c, err == nil, err
}

// vector returns the position of the first element of the vector in field
// slot and its length, after checking that n elements of elem bytes fit in
// the buffer. An absent vector has length 0.
func (t table) vector(slot, elem int) (start, n int, err error) {
	target, err := t.ref(slot)
	if target == 0 || err != nil {
		return 0, 0, err
	}
	start, n = target+4, u32(t.buf, target)
	if n > (len(t.buf)-start)/elem {
		return 0, 0, corrupt("a vector of %d elements overruns the metadata", n)
	}
	return start, n, nil
}

// element returns table i of the vector of tables starting at start.
func (t table) element(start, i int) (table, error) {
	e := start + 4*i
	return tableAt(t.buf, e+u32(t.buf, e))
}
