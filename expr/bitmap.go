package expr

import "math/bits"

// Rows are sets of bits in []uint64 words: row i is bit i%64 of word
// i/64. A nil set stands for every row where a function says so.

// words returns the number of bitmap words of n rows.
func words(n int) int { return (n + 63) / 64 }

// has reports whether bit i of the bitmap b is set; a nil b has every bit.
func has(b []uint64, i int) bool {
	return b == nil || b[i/64]&(1<<(uint(i)%64)) != 0
}

// set sets bit i of b.
func set(b []uint64, i int) { b[i/64] |= 1 << (uint(i) % 64) }

// clear clears bit i of b.
func clear(b []uint64, i int) { b[i/64] &^= 1 << (uint(i) % 64) }

// b2u returns 1 for true and 0 for false.
func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// pack4 returns the bits a, b, c and d, lowest first.
func pack4(a, b, c, d bool) uint64 {
	return b2u(a) | b2u(b)<<1 | b2u(c)<<2 | b2u(d)<<3
}

// onesBitmap returns a bitmap of n rows with every bit set.
func onesBitmap(n int) []uint64 {
	out := make([]uint64, words(n))
	for i := range out {
		out[i] = ^uint64(0)
	}
	if r := n % 64; r != 0 {
		out[len(out)-1] = 1<<uint(r) - 1
	}
	return out
}

// andBitmaps returns a new bitmap of the bits set in both a and b, where
// nil stands for every row of n.
func andBitmaps(n int, a, b []uint64) []uint64 {
	switch {
	case a == nil && b == nil:
		return nil
	case a == nil:
		return append([]uint64(nil), b...)
	case b == nil:
		return append([]uint64(nil), a...)
	}
	out := make([]uint64, len(a))
	for w := range out {
		out[w] = a[w] & b[w]
	}
	return out
}

// andNot returns the bits of a (every row of n when nil) not set in b.
func andNot(n int, a, b []uint64) []uint64 {
	if a == nil {
		a = onesBitmap(n)
	} else {
		a = append([]uint64(nil), a...)
	}
	for w := range a {
		a[w] &^= b[w]
	}
	return a
}

// empty reports whether no bit of b is set (a nil b, every row, is not
// empty unless n is 0).
func empty(n int, b []uint64) bool {
	if b == nil {
		return n == 0
	}
	for _, w := range b {
		if w != 0 {
			return false
		}
	}
	return true
}

// forEach calls f with every set bit of b (every row of n when b is nil),
// in ascending order, and stops at the first error.
func forEach(n int, b []uint64, f func(i int) error) error {
	if b == nil {
		for i := range n {
			if err := f(i); err != nil {
				return err
			}
		}
		return nil
	}
	for w, word := range b {
		for word != 0 {
			if err := f(w*64 + bits.TrailingZeros64(word)); err != nil {
				return err
			}
			word &= word - 1
		}
	}
	return nil
}

// trailingZeros returns the index of the lowest set bit of w.
func trailingZeros(w uint64) int { return bits.TrailingZeros64(w) }
