package v21

import "encoding/binary"

// flOrder is the order in which FastLanes visits the eight groups of rows
// of a 1024-value block (a fact of the layout Lance's bit-packing uses).
var flOrder = [8]int{0, 4, 2, 6, 1, 5, 3, 7}

// unpackFastLanes decodes one FastLanes block: 1024 values of t bits
// (8, 16, 32 or 64), each packed to w bits, from src, which must hold
// exactly 1024*w/8 bytes (w*1024/t little-endian words of t bits). The
// values are written to dst (1024 × t/8 bytes) as little-endian words.
//
// FastLanes splits the block into 1024/t lanes; lane l holds the t values
// at positions flOrder[r/8]*16 + (r%8)*128 + l for rows r = 0..t-1, packed
// one after the other into the lane's words packed[l], packed[lanes+l], …
func unpackFastLanes(t, w int, src, dst []byte) {
	bytesT := t / 8
	lanes := 1024 / t
	word := func(k, lane int) uint64 {
		off := (lanes*k + lane) * bytesT
		switch bytesT {
		case 1:
			return uint64(src[off])
		case 2:
			return uint64(binary.LittleEndian.Uint16(src[off:]))
		case 4:
			return uint64(binary.LittleEndian.Uint32(src[off:]))
		default:
			return binary.LittleEndian.Uint64(src[off:])
		}
	}
	put := func(idx int, v uint64) {
		off := idx * bytesT
		switch bytesT {
		case 1:
			dst[off] = byte(v)
		case 2:
			binary.LittleEndian.PutUint16(dst[off:], uint16(v))
		case 4:
			binary.LittleEndian.PutUint32(dst[off:], uint32(v))
		default:
			binary.LittleEndian.PutUint64(dst[off:], v)
		}
	}
	if w == 0 {
		clear(dst[:1024*bytesT])
		return
	}
	var mask uint64 = ^uint64(0)
	if w < 64 {
		mask = (uint64(1) << w) - 1
	}
	for lane := 0; lane < lanes; lane++ {
		for row := 0; row < t; row++ {
			bit := row * w
			k, shift := bit/t, bit%t
			v := word(k, lane) >> shift
			if shift+w > t {
				v |= word(k+1, lane) << (t - shift)
			}
			if t < 64 {
				v &= (uint64(1) << t) - 1
			}
			put(flOrder[row/8]*16+(row%8)*128+lane, v&mask)
		}
	}
}

// appendBits appends n bits of src starting at bit off (LSB first) to the
// bitmap dst that already holds dstLen bits, and returns the new bitmap.
func appendBits(dst []byte, dstLen int, src []byte, off, n int) []byte {
	need := (dstLen + n + 7) / 8
	for len(dst) < need {
		dst = append(dst, 0)
	}
	if dstLen%8 == 0 && off%8 == 0 {
		copy(dst[dstLen/8:], src[off/8:(off+n+7)/8])
		if r := (dstLen + n) % 8; r != 0 {
			dst[need-1] &= byte(1<<r) - 1
		}
		return dst
	}
	for i := 0; i < n; i++ {
		if src[(off+i)/8]&(1<<((off+i)%8)) != 0 {
			j := dstLen + i
			dst[j/8] |= 1 << (j % 8)
		}
	}
	return dst
}

// appendOnes appends n set bits to the bitmap dst of dstLen bits.
func appendOnes(dst []byte, dstLen, n int) []byte {
	need := (dstLen + n + 7) / 8
	for len(dst) < need {
		dst = append(dst, 0)
	}
	for i := dstLen; i < dstLen+n; i++ {
		if i%8 == 0 && dstLen+n-i >= 8 {
			dst[i/8] = 0xff
			i += 7
			continue
		}
		dst[i/8] |= 1 << (i % 8)
	}
	return dst
}

func bitSet(b []byte, i int) bool { return b[i/8]&(1<<(i%8)) != 0 }

// readUint reads a little-endian unsigned integer of width bytes (1, 2, 4
// or 8) at off.
func readUint(b []byte, off, width int) uint64 {
	switch width {
	case 1:
		return uint64(b[off])
	case 2:
		return uint64(binary.LittleEndian.Uint16(b[off:]))
	case 4:
		return uint64(binary.LittleEndian.Uint32(b[off:]))
	default:
		return binary.LittleEndian.Uint64(b[off:])
	}
}

func pad8(n int) int { return (n + 7) &^ 7 }
