package v21

import (
	"encoding/binary"

	"github.com/lancens/lancens/lance/internal/pb/enc21pb"
)

// A compressive encoding (enc21pb.CompressiveEncoding) is a tree whose
// leaves are buffers. Lance reads a tree in one of four contexts, each
// with its own rules for which encodings may appear:
//
//   - mini-block: the value buffers of one chunk (at most a few thousand
//     values) turn into a block (miniDecoder);
//   - block: one whole buffer turns into a block: repetition and
//     definition levels, dictionaries (blockDecoder);
//   - fixed per-value: full-zip values of one fixed size (fixedPerValue);
//   - variable per-value: full-zip values with a length each
//     (variablePerValue).
//
// Every decoder checks the buffers it is given against the number of
// values it is asked for before reading them.

// maxBitsPerValue bounds the width of one fixed-width value (a 1,536-d
// float32 vector in full-zip is 49,152 bits; this leaves ample room).
const maxBitsPerValue = 1 << 26

// miniDecoder decodes the value buffers of one mini-block chunk.
type miniDecoder struct {
	buffers int
	decode  func(bufs [][]byte, n int, bud budget) (*block, error)
}

func newMiniDecoder(e *enc21pb.CompressiveEncoding) (*miniDecoder, error) {
	switch c := e.GetCompression().(type) {
	case *enc21pb.CompressiveEncoding_Flat:
		bits, err := flatBits(c.Flat)
		if err != nil {
			return nil, err
		}
		comp := c.Flat.GetData()
		return &miniDecoder{buffers: 1, decode: func(bufs [][]byte, n int, bud budget) (*block, error) {
			buf, err := maybeDecompress(comp, bufs[0], bud)
			if err != nil {
				return nil, err
			}
			return fixedBlock(buf, n, bits)
		}}, nil
	case *enc21pb.CompressiveEncoding_InlineBitpacking:
		t := int(c.InlineBitpacking.GetUncompressedBitsPerValue())
		if t != 8 && t != 16 && t != 32 && t != 64 {
			return nil, corrupt("inline bit-packing of %d-bit values", t)
		}
		comp := c.InlineBitpacking.GetValues()
		return &miniDecoder{buffers: 1, decode: func(bufs [][]byte, n int, bud budget) (*block, error) {
			buf, err := maybeDecompress(comp, bufs[0], bud)
			if err != nil {
				return nil, err
			}
			return unpackInline(buf, n, t, bud)
		}}, nil
	case *enc21pb.CompressiveEncoding_Variable:
		width, err := variableOffsetWidth(c.Variable)
		if err != nil {
			return nil, err
		}
		if c.Variable.GetValues() != nil {
			return nil, unsupported("compressed values of a variable-width mini-block")
		}
		return &miniDecoder{buffers: 1, decode: func(bufs [][]byte, n int, bud budget) (*block, error) {
			return chunkVariable(bufs[0], n, width)
		}}, nil
	case *enc21pb.CompressiveEncoding_Fsst:
		table, err := parseFSSTTable(c.Fsst.GetSymbolTable())
		if err != nil {
			return nil, err
		}
		inner, err := newMiniDecoder(c.Fsst.GetValues())
		if err != nil {
			return nil, err
		}
		return &miniDecoder{buffers: inner.buffers, decode: func(bufs [][]byte, n int, bud budget) (*block, error) {
			b, err := inner.decode(bufs, n, bud)
			if err != nil {
				return nil, err
			}
			if !b.variable() {
				return nil, corrupt("FSST over fixed-width values")
			}
			return table.decode(b, bud)
		}}, nil
	case *enc21pb.CompressiveEncoding_FixedSizeList:
		shape, err := newFSLShape(c.FixedSizeList)
		if err != nil {
			return nil, err
		}
		return &miniDecoder{buffers: shape.validityLayers() + 1, decode: func(bufs [][]byte, n int, bud budget) (*block, error) {
			return shape.chunk(bufs, n)
		}}, nil
	case *enc21pb.CompressiveEncoding_Rle:
		valueBits, err := flatBits(c.Rle.GetValues().GetFlat())
		if err != nil {
			return nil, corrupt("RLE values: %v", err)
		}
		lengthBits, err := flatBits(c.Rle.GetRunLengths().GetFlat())
		if err != nil {
			return nil, corrupt("RLE run lengths: %v", err)
		}
		if err := checkRLEWidths(valueBits, lengthBits); err != nil {
			return nil, err
		}
		return &miniDecoder{buffers: 2, decode: func(bufs [][]byte, n int, bud budget) (*block, error) {
			return expandRuns(bufs[0], bufs[1], n, valueBits, lengthBits, bud)
		}}, nil
	case *enc21pb.CompressiveEncoding_ByteStreamSplit:
		bits, err := flatBits(c.ByteStreamSplit.GetValues().GetFlat())
		if err != nil {
			return nil, corrupt("byte stream split values: %v", err)
		}
		if bits%8 != 0 {
			return nil, corrupt("byte stream split of %d-bit values", bits)
		}
		return &miniDecoder{buffers: 1, decode: func(bufs [][]byte, n int, bud budget) (*block, error) {
			return unsplitStreams(bufs[0], n, bits/8)
		}}, nil
	case *enc21pb.CompressiveEncoding_PackedStruct:
		// Rows of fixed-width fields side by side.
		total := 0
		var widths []int
		for _, b := range c.PackedStruct.GetBitsPerValue() {
			if b == 0 || b%8 != 0 || b > maxBitsPerValue {
				return nil, unsupported("packed struct fields of %d bits", b)
			}
			widths = append(widths, int(b))
			total += int(b)
		}
		bits, err := flatBits(c.PackedStruct.GetValues().GetFlat())
		if err != nil || bits != total || len(widths) == 0 {
			return nil, corrupt("packed struct rows of %d bits for fields of %v", bits, widths)
		}
		return &miniDecoder{buffers: 1, decode: func(bufs [][]byte, n int, bud budget) (*block, error) {
			b, err := fixedBlock(bufs[0], n, total)
			if err != nil {
				return nil, err
			}
			b.packed = widths
			return b, nil
		}}, nil
	case *enc21pb.CompressiveEncoding_General:
		scheme := c.General.GetCompression().GetScheme()
		inner, err := newMiniDecoder(c.General.GetValues())
		if err != nil {
			return nil, err
		}
		return &miniDecoder{buffers: inner.buffers, decode: func(bufs [][]byte, n int, bud budget) (*block, error) {
			first, err := decompressBuffer(scheme, bufs[0], bud)
			if err != nil {
				return nil, err
			}
			rest := append([][]byte{first}, bufs[1:]...)
			return inner.decode(rest, n, bud)
		}}, nil
	case nil:
		return nil, corrupt("mini-block values have no encoding")
	default:
		return nil, unsupported("%T in a mini-block", c)
	}
}

// blockDecoder decodes one whole buffer of n values.
type blockDecoder func(buf []byte, n int, bud budget) (*block, error)

func newBlockDecoder(e *enc21pb.CompressiveEncoding) (blockDecoder, error) {
	switch c := e.GetCompression().(type) {
	case *enc21pb.CompressiveEncoding_Flat:
		bits, err := flatBits(c.Flat)
		if err != nil {
			return nil, err
		}
		comp := c.Flat.GetData()
		return func(buf []byte, n int, bud budget) (*block, error) {
			buf, err := maybeDecompress(comp, buf, bud)
			if err != nil {
				return nil, err
			}
			return fixedBlock(buf, n, bits)
		}, nil
	case *enc21pb.CompressiveEncoding_InlineBitpacking:
		t := int(c.InlineBitpacking.GetUncompressedBitsPerValue())
		if t != 8 && t != 16 && t != 32 && t != 64 {
			return nil, corrupt("inline bit-packing of %d-bit values", t)
		}
		comp := c.InlineBitpacking.GetValues()
		return func(buf []byte, n int, bud budget) (*block, error) {
			buf, err := maybeDecompress(comp, buf, bud)
			if err != nil {
				return nil, err
			}
			return unpackInline(buf, n, t, bud)
		}, nil
	case *enc21pb.CompressiveEncoding_OutOfLineBitpacking:
		t := int(c.OutOfLineBitpacking.GetUncompressedBitsPerValue())
		if t != 8 && t != 16 && t != 32 && t != 64 {
			return nil, corrupt("out-of-line bit-packing of %d-bit values", t)
		}
		f := c.OutOfLineBitpacking.GetValues().GetFlat()
		if f == nil || f.GetBitsPerValue() > uint64(t) || f.GetData() != nil {
			return nil, corrupt("out-of-line bit-packing of %d-bit values to %v", t, f)
		}
		w := int(f.GetBitsPerValue())
		return func(buf []byte, n int, bud budget) (*block, error) {
			return unpackOutOfLine(buf, n, t, w, bud)
		}, nil
	case *enc21pb.CompressiveEncoding_Variable:
		if _, err := variableOffsetWidth(c.Variable); err != nil {
			return nil, err
		}
		return func(buf []byte, n int, bud budget) (*block, error) {
			return framedVariable(buf, n)
		}, nil
	case *enc21pb.CompressiveEncoding_Constant:
		value, isNull := c.Constant.GetValue(), c.Constant.Value == nil
		return func(buf []byte, n int, bud budget) (*block, error) {
			if isNull {
				return &block{n: n, null: true}, nil
			}
			return &block{n: n, scalar: true, data: value, bits: 8 * len(value)}, nil
		}, nil
	case *enc21pb.CompressiveEncoding_Rle:
		valueBits, err := flatBits(c.Rle.GetValues().GetFlat())
		if err != nil {
			return nil, corrupt("RLE values: %v", err)
		}
		lengthBits, err := flatBits(c.Rle.GetRunLengths().GetFlat())
		if err != nil {
			return nil, corrupt("RLE run lengths: %v", err)
		}
		if err := checkRLEWidths(valueBits, lengthBits); err != nil {
			return nil, err
		}
		return func(buf []byte, n int, bud budget) (*block, error) {
			if len(buf) < 8 {
				return nil, corrupt("RLE block of %d bytes has no header", len(buf))
			}
			size := binary.LittleEndian.Uint64(buf)
			if size > uint64(len(buf)-8) {
				return nil, corrupt("RLE block declares %d bytes of values in %d", size, len(buf)-8)
			}
			return expandRuns(buf[8:8+size], buf[8+size:], n, valueBits, lengthBits, bud)
		}, nil
	case *enc21pb.CompressiveEncoding_General:
		scheme := c.General.GetCompression().GetScheme()
		inner, err := newBlockDecoder(c.General.GetValues())
		if err != nil {
			return nil, err
		}
		return func(buf []byte, n int, bud budget) (*block, error) {
			raw, err := decompressBuffer(scheme, buf, bud)
			if err != nil {
				return nil, err
			}
			return inner(raw, n, bud)
		}, nil
	case nil:
		return nil, corrupt("block has no encoding")
	default:
		return nil, unsupported("%T in a block", c)
	}
}

// fixedPerValue decodes full-zip values of one fixed size: bytes() bytes
// per value, unzipped from their control words.
type fixedPerValue struct {
	bytes  int
	decode func(data []byte, n int) (*block, error)
}

func newFixedPerValue(e *enc21pb.CompressiveEncoding) (*fixedPerValue, error) {
	switch c := e.GetCompression().(type) {
	case *enc21pb.CompressiveEncoding_Flat:
		bits, err := flatBits(c.Flat)
		if err != nil {
			return nil, err
		}
		if bits%8 != 0 || c.Flat.GetData() != nil {
			return nil, unsupported("full-zip values of %d bits", bits)
		}
		return &fixedPerValue{bytes: bits / 8, decode: func(data []byte, n int) (*block, error) {
			return fixedBlock(data, n, bits)
		}}, nil
	case *enc21pb.CompressiveEncoding_FixedSizeList:
		shape, err := newFSLShape(c.FixedSizeList)
		if err != nil {
			return nil, err
		}
		if shape.itemBits%8 != 0 {
			return nil, unsupported("full-zip fixed-size lists of %d-bit items", shape.itemBits)
		}
		return &fixedPerValue{bytes: shape.zippedBytes(), decode: shape.unzip}, nil
	case nil:
		return nil, corrupt("full-zip values have no encoding")
	default:
		return nil, unsupported("%T in a fixed-width full-zip page", c)
	}
}

// variablePerValue decodes full-zip values that each carry a length: the
// values, unzipped into one variable-width block, are transformed by the
// encoding (FSST, general compression of each value).
type variablePerValue func(in *block, bud budget) (*block, error)

func newVariablePerValue(e *enc21pb.CompressiveEncoding) (variablePerValue, error) {
	switch c := e.GetCompression().(type) {
	case *enc21pb.CompressiveEncoding_Variable:
		if _, err := variableOffsetWidth(c.Variable); err != nil {
			return nil, err
		}
		return func(in *block, bud budget) (*block, error) { return in, nil }, nil
	case *enc21pb.CompressiveEncoding_Fsst:
		table, err := parseFSSTTable(c.Fsst.GetSymbolTable())
		if err != nil {
			return nil, err
		}
		inner, err := newVariablePerValue(c.Fsst.GetValues())
		if err != nil {
			return nil, err
		}
		return func(in *block, bud budget) (*block, error) {
			b, err := inner(in, bud)
			if err != nil {
				return nil, err
			}
			return table.decode(b, bud)
		}, nil
	case *enc21pb.CompressiveEncoding_General:
		scheme := c.General.GetCompression().GetScheme()
		inner, err := newVariablePerValue(c.General.GetValues())
		if err != nil {
			return nil, err
		}
		return func(in *block, bud budget) (*block, error) {
			out := &block{n: in.n, offsets: make([]int64, in.n+1)}
			for i := 0; i < in.n; i++ {
				v, err := decompressBuffer(scheme, in.data[in.offsets[i]:in.offsets[i+1]], bud)
				if err != nil {
					return nil, err
				}
				out.data = append(out.data, v...)
				out.offsets[i+1] = int64(len(out.data))
			}
			return inner(out, bud)
		}, nil
	case nil:
		return nil, corrupt("full-zip values have no encoding")
	default:
		return nil, unsupported("%T in a variable-width full-zip page", c)
	}
}

// flatBits returns a Flat's bits per value: 1 (booleans) or a positive
// multiple of 8.
func flatBits(f *enc21pb.Flat) (int, error) {
	if f == nil {
		return 0, corrupt("expected a flat encoding")
	}
	bits := f.GetBitsPerValue()
	if bits == 0 || bits > maxBitsPerValue || (bits != 1 && bits%8 != 0) {
		return 0, corrupt("flat values of %d bits", bits)
	}
	return int(bits), nil
}

// variableOffsetWidth returns the width in bytes of a Variable's offsets.
func variableOffsetWidth(v *enc21pb.Variable) (int, error) {
	bits := v.GetOffsets().GetFlat().GetBitsPerValue()
	if bits != 32 && bits != 64 {
		return 0, corrupt("variable-width offsets of %d bits", bits)
	}
	return int(bits / 8), nil
}

func maybeDecompress(c *enc21pb.BufferCompression, buf []byte, bud budget) ([]byte, error) {
	if c == nil {
		return buf, nil
	}
	return decompressBuffer(c.GetScheme(), buf, bud)
}

// fixedBlock takes n values of bits bits from the front of buf.
func fixedBlock(buf []byte, n, bits int) (*block, error) {
	need, err := mulCheck(uint64(n), uint64(bits), uint64(len(buf))*8+7, "fixed-width values")
	if err != nil {
		return nil, err
	}
	need = (need + 7) / 8
	if need > uint64(len(buf)) {
		return nil, corrupt("%d values of %d bits need %d bytes, the buffer has %d", n, bits, need, len(buf))
	}
	return &block{n: n, bits: bits, data: buf[:need]}, nil
}

// chunkVariable reads a mini-block chunk of variable-width values: n+1
// offsets of width bytes (relative to the chunk buffer), then the bytes.
func chunkVariable(buf []byte, n, width int) (*block, error) {
	if uint64(n+1)*uint64(width) > uint64(len(buf)) {
		return nil, corrupt("%d variable-width values need %d offset bytes, the chunk has %d", n, (n+1)*width, len(buf))
	}
	offsets := make([]int64, n+1)
	first := readUint(buf, 0, width)
	prev := first
	for i := 0; i <= n; i++ {
		o := readUint(buf, i*width, width)
		if o < prev || o > uint64(len(buf)) {
			return nil, corrupt("variable-width offset %d out of order or past the chunk", o)
		}
		prev = o
		offsets[i] = int64(o - first)
	}
	return &block{n: n, offsets: offsets, data: buf[first:prev]}, nil
}

// framedVariable reads a whole buffer of variable-width values: a header
// (the offset width in bits and where the bytes start), the offsets, then
// the bytes. Old writers put a u8 width, the value count and the start;
// newer ones a u32 width and a start of that width.
func framedVariable(buf []byte, n int) (*block, error) {
	if len(buf) < 8 {
		return nil, corrupt("variable-width buffer of %d bytes has no header", len(buf))
	}
	var width, offStart int
	var dataStart uint64
	if buf[1] != 0 || buf[2] != 0 || buf[3] != 0 {
		switch buf[0] {
		case 32:
			if len(buf) < 9 {
				return nil, corrupt("short variable-width header")
			}
			width, offStart, dataStart = 4, 9, uint64(binary.LittleEndian.Uint32(buf[5:]))
		case 64:
			if len(buf) < 17 {
				return nil, corrupt("short variable-width header")
			}
			width, offStart, dataStart = 8, 17, binary.LittleEndian.Uint64(buf[9:])
		default:
			return nil, corrupt("variable-width offsets of %d bits", buf[0])
		}
	} else {
		switch binary.LittleEndian.Uint32(buf) {
		case 32:
			width, offStart, dataStart = 4, 8, uint64(binary.LittleEndian.Uint32(buf[4:]))
		case 64:
			if len(buf) < 16 {
				return nil, corrupt("short variable-width header")
			}
			width, offStart, dataStart = 8, 16, binary.LittleEndian.Uint64(buf[8:])
		default:
			return nil, corrupt("variable-width offsets of %d bits", binary.LittleEndian.Uint32(buf))
		}
	}
	if dataStart > uint64(len(buf)) || dataStart < uint64(offStart) || (dataStart-uint64(offStart))/uint64(width) < uint64(n)+1 {
		return nil, corrupt("variable-width buffer has no room for %d offsets", n+1)
	}
	data := buf[dataStart:]
	offsets := make([]int64, n+1)
	var prev uint64
	for i := 0; i <= n; i++ {
		o := readUint(buf, offStart+i*width, width)
		if o < prev || o > uint64(len(data)) {
			return nil, corrupt("variable-width offset %d out of order or past the data", o)
		}
		prev = o
		offsets[i] = int64(o)
	}
	return &block{n: n, offsets: offsets, data: data}, nil
}

// unpackInline decodes inline bit-packing: chunks of 1024 values of t
// bits, each a t-bit word giving the packed width w, then 1024*w/t words.
// The last chunk is padded to 1024 values.
func unpackInline(buf []byte, n, t int, bud budget) (*block, error) {
	bt := t / 8
	chunks := (n + 1023) / 1024
	if err := bud.take(uint64(chunks)*1024*uint64(bt), "bit-unpacked values"); err != nil {
		return nil, err
	}
	out := make([]byte, chunks*1024*bt)
	off := 0
	for c := 0; c < chunks; c++ {
		if off+bt > len(buf) {
			return nil, corrupt("bit-packed chunk %d has no width", c)
		}
		w := readUint(buf, off, bt)
		off += bt
		if w > uint64(t) {
			return nil, corrupt("bit-packed chunk of %d-bit values packed to %d bits", t, w)
		}
		size := 1024 * int(w) / 8
		if off+size > len(buf) {
			return nil, corrupt("bit-packed chunk needs %d bytes, %d remain", size, len(buf)-off)
		}
		unpackFastLanes(t, int(w), buf[off:off+size], out[c*1024*bt:])
		off += size
	}
	return &block{n: n, bits: t, data: out[:n*bt]}, nil
}

// unpackOutOfLine decodes out-of-line bit-packing: every value packed to w
// bits, in FastLanes blocks of 1024; a last partial block is either padded
// and packed or stored unpacked (the buffer's length tells which).
func unpackOutOfLine(buf []byte, n, t, w int, bud budget) (*block, error) {
	bt := t / 8
	if len(buf)%bt != 0 {
		return nil, corrupt("bit-packed buffer of %d bytes holds no whole %d-bit words", len(buf), t)
	}
	perBlock := 1024 * w / 8
	whole, tail := n/1024, n%1024
	wholeBytes := whole * perBlock
	rawTail := tail > 0 && len(buf) == wholeBytes+tail*bt
	switch {
	case tail == 0 && len(buf) < wholeBytes,
		tail > 0 && !rawTail && len(buf) < wholeBytes+perBlock:
		return nil, corrupt("%d values packed to %d bits do not fit in %d bytes", n, w, len(buf))
	}
	if err := bud.take(uint64(whole+1)*1024*uint64(bt), "bit-unpacked values"); err != nil {
		return nil, err
	}
	out := make([]byte, (whole+1)*1024*bt)
	for b := 0; b < whole; b++ {
		unpackFastLanes(t, w, buf[b*perBlock:(b+1)*perBlock], out[b*1024*bt:])
	}
	if tail > 0 {
		if rawTail {
			copy(out[whole*1024*bt:], buf[wholeBytes:wholeBytes+tail*bt])
		} else {
			unpackFastLanes(t, w, buf[wholeBytes:wholeBytes+perBlock], out[whole*1024*bt:])
		}
	}
	return &block{n: n, bits: t, data: out[:n*bt]}, nil
}

func checkRLEWidths(valueBits, lengthBits int) error {
	switch valueBits {
	case 8, 16, 32, 64:
	default:
		return corrupt("RLE of %d-bit values", valueBits)
	}
	switch lengthBits {
	case 8, 16, 32, 64:
	default:
		return corrupt("RLE run lengths of %d bits", lengthBits)
	}
	return nil
}

// expandRuns expands run-length encoded values: values holds one value per
// run, lengths the length of each run. Runs past n values are cut off.
func expandRuns(values, lengths []byte, n, valueBits, lengthBits int, bud budget) (*block, error) {
	vb, lb := valueBits/8, lengthBits/8
	if len(values)%vb != 0 || len(lengths)%lb != 0 || len(values)/vb != len(lengths)/lb {
		return nil, corrupt("RLE of %d value bytes and %d length bytes", len(values), len(lengths))
	}
	if err := bud.take(uint64(n)*uint64(vb), "run-length decoded values"); err != nil {
		return nil, err
	}
	out := make([]byte, n*vb)
	pos := 0
	for r := 0; r < len(lengths)/lb && pos < n; r++ {
		l := readUint(lengths, r*lb, lb)
		v := values[r*vb : (r+1)*vb]
		for i := uint64(0); i < l && pos < n; i++ {
			copy(out[pos*vb:], v)
			pos++
		}
	}
	if pos != n {
		return nil, corrupt("runs hold %d values, %d expected", pos, n)
	}
	return &block{n: n, bits: valueBits, data: out}, nil
}

// unsplitStreams undoes byte stream split: byte j of value i is at
// j*n + i.
func unsplitStreams(buf []byte, n, width int) (*block, error) {
	if uint64(n)*uint64(width) > uint64(len(buf)) {
		return nil, corrupt("%d split values of %d bytes in %d bytes", n, width, len(buf))
	}
	out := make([]byte, n*width)
	for j := 0; j < width; j++ {
		stream := buf[j*n : (j+1)*n]
		for i, b := range stream {
			out[i*width+j] = b
		}
	}
	return &block{n: n, bits: width * 8, data: out}, nil
}
