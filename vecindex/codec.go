package vecindex

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// encoder appends little-endian values to a buffer.
type encoder struct{ b []byte }

func (e *encoder) u8(v byte)    { e.b = append(e.b, v) }
func (e *encoder) u32(v uint32) { e.b = binary.LittleEndian.AppendUint32(e.b, v) }
func (e *encoder) u64(v uint64) { e.b = binary.LittleEndian.AppendUint64(e.b, v) }
func (e *encoder) int(v int)    { e.u64(uint64(v)) }
func (e *encoder) raw(v []byte) { e.b = append(e.b, v...) }
func (e *encoder) i64s(v []int64) {
	for _, x := range v {
		e.u64(uint64(x))
	}
}

func (e *encoder) f32s(v []float32) {
	for _, x := range v {
		e.u32(math.Float32bits(x))
	}
}

func (e *encoder) i32s(v []int32) {
	for _, x := range v {
		e.u32(uint32(x))
	}
}

// errCorrupt is wrapped by every Load error about the data itself.
var errCorrupt = errors.New("vecindex: corrupt index data")

// decoder reads little-endian values, recording the first error; reads
// after an error return zero values.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s", errCorrupt, fmt.Sprintf(format, args...))
	}
}

// take returns the next n bytes, or nil after recording an error when fewer
// remain.
func (d *decoder) take(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || n > len(d.b) {
		d.fail("truncated")
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) u8() byte {
	if v := d.take(1); v != nil {
		return v[0]
	}
	return 0
}

func (d *decoder) u32() uint32 {
	if v := d.take(4); v != nil {
		return binary.LittleEndian.Uint32(v)
	}
	return 0
}

func (d *decoder) u64() uint64 {
	if v := d.take(8); v != nil {
		return binary.LittleEndian.Uint64(v)
	}
	return 0
}

// int reads a non-negative int no larger than limit.
func (d *decoder) int(what string, limit int) int {
	v := d.u64()
	if v > uint64(limit) {
		d.fail("%s %d out of range", what, v)
		return 0
	}
	return int(v)
}

// length returns a×b when that many elements of size bytes can still be
// read, else records an error and returns 0.
func (d *decoder) length(a, b, size int) int {
	if d.err != nil {
		return 0
	}
	if a < 0 || b < 0 || (b != 0 && a > len(d.b)/size/b) {
		d.fail("truncated")
		return 0
	}
	return a * b
}

func (d *decoder) bytes(n int) []byte {
	return append([]byte(nil), d.take(n)...)
}

func (d *decoder) f32s(n int) []float32 {
	raw := d.take(d.length(n, 1, 4) * 4)
	if d.err != nil {
		return nil
	}
	out := make([]float32, n)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return out
}

func (d *decoder) i64s(n int) []int64 {
	raw := d.take(d.length(n, 1, 8) * 8)
	if d.err != nil {
		return nil
	}
	out := make([]int64, n)
	for i := range out {
		out[i] = int64(binary.LittleEndian.Uint64(raw[8*i:]))
	}
	return out
}

func (d *decoder) i32s(n int) []int32 {
	raw := d.take(d.length(n, 1, 4) * 4)
	if d.err != nil {
		return nil
	}
	out := make([]int32, n)
	for i := range out {
		out[i] = int32(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return out
}
