package expr

import (
	"math"
	"strconv"
	"unsafe"
)

// The evaluator computes the compiled SQL over every row of a batch at
// once. A vec is the value of one SQL node for every row, held by SQLite
// storage class: SQL is dynamically typed, and the evaluator follows the
// values SQLite would hold, not the expression's type (an integer sum that
// overflows holds a REAL, as in SQLite).

// class is how a vec holds its values.
type class uint8

const (
	clsNull   class = iota // every row NULL
	clsBool                // INTEGER 0 or 1, as the bitmaps tru and fal
	clsInt                 // INTEGER in ints; the rows of over hold a REAL instead
	clsFloat               // REAL in flts (never NaN, which SQLite holds as NULL)
	clsText                // TEXT in txt
	clsBlob                // BLOB in txt
	clsAny                 // values of several classes, one value per row
	clsOpaque              // a struct, map or vector: only whether each row is NULL
)

// vec is the value of an expression for the rows of a batch, or when
// konst is set one value for every row (its slices have one element).
// Rows outside valid (nil: every row) are NULL; a clsBool row is NULL when
// neither tru nor fal has it. Values of rows outside the mask an
// expression was evaluated under are unspecified.
type vec struct {
	cls      class
	konst    bool
	ints     []int64
	flts     []float64
	txt      textCol
	tru, fal []uint64
	valid    []uint64
	over     *realRows
	vals     []value
}

// realRows are the rows of an INTEGER vec that hold a REAL: an integer
// operation that overflowed, as SQLite computes it.
type realRows struct {
	rows []uint64
	vals []float64 // by row
}

// textCol holds TEXT or BLOB values: Arrow's offsets into data (32- or
// 64-bit, absolute), or Go strings.
type textCol struct {
	data  []byte
	off32 []int32
	off64 []int64
	strs  []string
}

// at returns value i without copying (the string shares Arrow's buffer,
// which does not change).
func (t *textCol) at(i int) string {
	switch {
	case t.strs != nil:
		return t.strs[i]
	case t.off32 != nil:
		return bytesString(t.data[t.off32[i]:t.off32[i+1]])
	}
	return bytesString(t.data[t.off64[i]:t.off64[i+1]])
}

// bytesString returns b as a string sharing its memory; b must not change.
func bytesString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// value is one SQLite value: cls is clsNull, clsInt, clsFloat, clsText or
// clsBlob (a boolean is an INTEGER).
type value struct {
	cls class
	i   int64
	f   float64
	s   string
}

var nullValue = value{}

func intValue(i int64) value { return value{cls: clsInt, i: i} }

// floatValue returns the REAL f; NaN is NULL, as SQLite stores it.
func floatValue(f float64) value {
	if f != f {
		return nullValue
	}
	return value{cls: clsFloat, f: f}
}

func textValue(s string) value { return value{cls: clsText, s: s} }

// idx returns the index of row i in v's slices.
func (v *vec) idx(i int) int {
	if v.konst {
		return 0
	}
	return i
}

// isNull reports whether row i of v is NULL.
func (v *vec) isNull(i int) bool {
	switch v.cls {
	case clsNull:
		return true
	case clsBool:
		j := v.idx(i)
		return !has(v.tru, j) && !has(v.fal, j)
	case clsAny:
		return v.vals[v.idx(i)].cls == clsNull
	}
	return !has(v.valid, v.idx(i))
}

// at returns row i of v.
func (v *vec) at(i int) value {
	j := v.idx(i)
	switch v.cls {
	case clsBool:
		switch {
		case has(v.tru, j):
			return intValue(1)
		case has(v.fal, j):
			return intValue(0)
		}
		return nullValue
	case clsAny:
		return v.vals[j]
	case clsNull:
		return nullValue
	}
	if !has(v.valid, j) {
		return nullValue
	}
	switch v.cls {
	case clsInt:
		if v.over != nil && has(v.over.rows, j) {
			return value{cls: clsFloat, f: v.over.vals[j]}
		}
		return intValue(v.ints[j])
	case clsFloat:
		return value{cls: clsFloat, f: v.flts[j]}
	case clsText:
		return textValue(v.txt.at(j))
	case clsBlob:
		return value{cls: clsBlob, s: v.txt.at(j)}
	}
	return intValue(1) // clsOpaque: present
}

// nullVec is NULL for every row.
var nullVec = vec{cls: clsNull, konst: true}

// constVec returns the vec of a SQLite value for every row.
func constVec(x value) vec {
	switch x.cls {
	case clsInt:
		return vec{cls: clsInt, konst: true, ints: []int64{x.i}}
	case clsFloat:
		return vec{cls: clsFloat, konst: true, flts: []float64{x.f}}
	case clsText, clsBlob:
		return vec{cls: x.cls, konst: true, txt: textCol{strs: []string{x.s}}}
	}
	return nullVec
}

// boolVec returns the boolean vec whose row i is TRUE where tru has it,
// FALSE where fal has it and NULL elsewhere.
func boolVec(tru, fal []uint64) vec { return vec{cls: clsBool, tru: tru, fal: fal} }

// validBits returns the bitmap of the rows of n where v is not NULL (nil:
// every row); the result may be shared and must not be modified.
func (v *vec) validBits(n int) []uint64 {
	switch {
	case v.cls == clsNull:
		return make([]uint64, words(n))
	case v.konst:
		if v.isNull(0) {
			return make([]uint64, words(n))
		}
		return nil
	case v.cls == clsBool:
		out := make([]uint64, len(v.tru))
		for w := range out {
			out[w] = v.tru[w] | v.fal[w]
		}
		return out
	case v.cls == clsAny:
		out := make([]uint64, words(n))
		for i, x := range v.vals {
			if x.cls != clsNull {
				set(out, i)
			}
		}
		return out
	}
	return v.valid
}

// builder collects the values of a vec row by row; rows it is not given
// are NULL.
type builder struct {
	n    int
	vals []value
}

func newBuilder(n int) *builder { return &builder{n: n, vals: make([]value, n)} }

func (b *builder) put(i int, x value) { b.vals[i] = x }

// vec returns the collected values in the narrowest class that holds
// them all.
func (b *builder) vec() vec {
	var seen [clsOpaque + 1]bool
	for _, x := range b.vals {
		seen[x.cls] = true
	}
	kinds := 0
	for c := clsBool; c <= clsBlob; c++ {
		if seen[c] {
			kinds++
		}
	}
	valid := func() []uint64 {
		out := make([]uint64, words(b.n))
		for i, x := range b.vals {
			if x.cls != clsNull {
				set(out, i)
			}
		}
		return out
	}
	switch {
	case kinds == 0:
		return nullVec
	case kinds == 2 && seen[clsInt] && seen[clsFloat]:
		v := vec{cls: clsInt, ints: make([]int64, b.n), valid: valid(),
			over: &realRows{rows: make([]uint64, words(b.n)), vals: make([]float64, b.n)}}
		for i, x := range b.vals {
			if x.cls == clsFloat {
				set(v.over.rows, i)
				v.over.vals[i] = x.f
			} else {
				v.ints[i] = x.i
			}
		}
		return v
	case kinds > 1:
		return vec{cls: clsAny, vals: b.vals}
	case seen[clsInt]:
		v := vec{cls: clsInt, ints: make([]int64, b.n), valid: valid()}
		for i, x := range b.vals {
			v.ints[i] = x.i
		}
		return v
	case seen[clsFloat]:
		v := vec{cls: clsFloat, flts: make([]float64, b.n), valid: valid()}
		for i, x := range b.vals {
			v.flts[i] = x.f
		}
		return v
	}
	c := clsText
	if seen[clsBlob] {
		c = clsBlob
	}
	v := vec{cls: c, txt: textCol{strs: make([]string, b.n)}, valid: valid()}
	for i, x := range b.vals {
		v.txt.strs[i] = x.s
	}
	return v
}

// asFloat64 returns the REAL SQLite makes of x (sqlite3VdbeRealValue): an
// INTEGER converted, text read as a number, NULL as 0.
func (x value) asFloat64() float64 {
	switch x.cls {
	case clsInt:
		return float64(x.i)
	case clsFloat:
		return x.f
	case clsText, clsBlob:
		return sqlAtoF(x.s)
	}
	return 0
}

// asInt64 returns the INTEGER SQLite makes of x (sqlite3VdbeIntValue).
func (x value) asInt64() int64 {
	switch x.cls {
	case clsInt:
		return x.i
	case clsFloat:
		return sqlRealToInt(x.f)
	case clsText, clsBlob:
		return sqlTextToInt(x.s)
	}
	return 0
}

// truth returns whether the non-NULL x is true in SQLite (a number other
// than zero; text as the number it starts with).
func (x value) truth() bool {
	switch x.cls {
	case clsInt:
		return x.i != 0
	case clsFloat:
		return x.f != 0
	}
	return x.asFloat64() != 0
}

// text returns the TEXT SQLite makes of x (CAST(x AS TEXT)).
func (x value) text() string {
	switch x.cls {
	case clsInt:
		return strconv.FormatInt(x.i, 10)
	case clsFloat:
		return sqlRealText(x.f)
	}
	return x.s
}

// compareValues compares two non-NULL values as SQLite does
// (sqlite3MemCompare, BINARY collation): numbers before text before blobs,
// numbers by value (integers with reals exactly), text and blobs bytewise.
func compareValues(a, b value) int {
	ra, rb := rank(a.cls), rank(b.cls)
	switch {
	case ra != rb:
		return cmp3(ra, rb)
	case ra == 1:
		switch {
		case a.cls == clsInt && b.cls == clsInt:
			return cmp3(a.i, b.i)
		case a.cls == clsFloat && b.cls == clsFloat:
			return cmp3(a.f, b.f)
		case a.cls == clsInt:
			return cmpIntFloat(a.i, b.f)
		}
		return -cmpIntFloat(b.i, a.f)
	}
	return cmp3(a.s, b.s)
}

// rank orders storage classes as SQLite sorts them.
func rank(c class) int {
	switch c {
	case clsInt, clsFloat:
		return 1
	case clsText:
		return 2
	case clsBlob:
		return 3
	}
	return 0
}

func cmp3[T int | int64 | float64 | string](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// cmpIntFloat compares the integer i with the float r (not NaN) exactly,
// as SQLite's sqlite3IntFloatCompare does: -1, 0 or +1 as i is less than,
// equal to or greater than r.
func cmpIntFloat(i int64, r float64) int {
	switch {
	case r < -0x1p63:
		return 1
	case r >= 0x1p63:
		return -1
	}
	y := int64(r)
	switch {
	case i < y:
		return -1
	case i > y:
		return 1
	}
	return cmp3(float64(i), r)
}

// exactFloat reports whether the float64 nearest to i is i.
func exactFloat(i int64) bool {
	f := float64(i)
	return f < 0x1p63 && int64(f) == i
}

// floats returns REALs as SQLite stores them: NULL where not valid or NaN,
// and a negative zero as zero (a REAL column keeps an integral value as an
// integer, and so loses the sign of a zero). fs is copied only when a
// value changes.
func floats(fs []float64, valid []uint64) vec {
	if hasNaN(fs) {
		if valid == nil {
			valid = onesBitmap(len(fs))
		} else {
			valid = append([]uint64(nil), valid...)
		}
		for i, f := range fs {
			if f != f {
				clear(valid, i)
			}
		}
	}
	if hasNegZero(fs) {
		fs = append([]float64(nil), fs...)
		for i, f := range fs {
			if f == 0 {
				fs[i] = 0
			}
		}
	}
	return vec{cls: clsFloat, flts: fs, valid: valid}
}

// hasNegZero reports whether fs holds a negative zero.
func hasNegZero(fs []float64) bool {
	found := false
	for _, f := range fs {
		found = found || math.Float64bits(f) == 1<<63
	}
	return found
}

// hasNaN reports whether fs holds a NaN: a value whose bits without the
// sign exceed those of +Inf, so that subtracting them from those of +Inf
// sets the top bit. Four accumulators keep the loop short.
func hasNaN(fs []float64) bool {
	const inf, abs = 0x7ff0000000000000, 1<<63 - 1
	var a, b, c, d uint64
	i := 0
	for ; i+4 <= len(fs); i += 4 {
		q := fs[i : i+4 : i+4]
		a |= inf - math.Float64bits(q[0])&abs
		b |= inf - math.Float64bits(q[1])&abs
		c |= inf - math.Float64bits(q[2])&abs
		d |= inf - math.Float64bits(q[3])&abs
	}
	for ; i < len(fs); i++ {
		a |= inf - math.Float64bits(fs[i])&abs
	}
	return (a|b|c|d)>>63 != 0
}
