package fts

import "math/bits"

// RowSet is a set of row ids as a bitmap: bit id%64 of word id/64.
type RowSet []uint64

// Has reports whether id is in the set.
func (s RowSet) Has(id int64) bool {
	return id >= 0 && int(id>>6) < len(s) && s[id>>6]>>(id&63)&1 != 0
}

// Count returns the number of rows in the set.
func (s RowSet) Count() int {
	n := 0
	for _, w := range s {
		n += bits.OnesCount64(w)
	}
	return n
}
