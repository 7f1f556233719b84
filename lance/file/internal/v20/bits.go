package v20

import (
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// validityBuffer returns a validity bitmap as a buffer, and the null count
// to give array.NewData with it: unknown (counted on demand) for a bitmap,
// 0 without one.
func validityBuffer(bits []byte) (*memory.Buffer, int) {
	if bits == nil {
		return nil, 0
	}
	return memory.NewBufferBytes(bits), array.UnknownNullCount
}

// copyBits copies n bits of src starting at bit srcOff into dst starting at
// bit dstOff (least significant bit first, as Arrow bitmaps are). dst and
// src must be long enough.
func copyBits(dst []byte, dstOff int, src []byte, srcOff int, n int) {
	if dstOff%8 == 0 && srcOff%8 == 0 {
		whole := n / 8
		copy(dst[dstOff/8:dstOff/8+whole], src[srcOff/8:srcOff/8+whole])
		dstOff, srcOff, n = dstOff+8*whole, srcOff+8*whole, n-8*whole
	}
	for i := 0; i < n; i++ {
		s, d := srcOff+i, dstOff+i
		if src[s/8]&(1<<(s%8)) != 0 {
			dst[d/8] |= 1 << (d % 8)
		} else {
			dst[d/8] &^= 1 << (d % 8)
		}
	}
}

// bitmapBytes returns the bytes a bitmap of n bits takes.
func bitmapBytes(n uint64) uint64 {
	if n%8 != 0 {
		return n/8 + 1
	}
	return n / 8
}

// getBit reports whether bit i of b is set.
func getBit(b []byte, i int) bool { return b[i/8]&(1<<(i%8)) != 0 }

// setBit sets bit i of b.
func setBit(b []byte, i int) { b[i/8] |= 1 << (i % 8) }
