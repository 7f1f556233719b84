package expr

import "math"

// class is how the evaluator holds values: the SQLite storage class of a
// type's values.
type class int

const (
	clsNull   class = iota // every value NULL (the NULL type)
	clsBool                // bitmaps of the TRUE and FALSE rows
	clsInt                 // int64: integers, temporal kinds, integer-stored decimals
	clsFloat               // float64
	clsString              // string
)

// classOf returns the class of values of type t. It returns errUnsupported
// for binary values, decimals stored as text, lists, structs, maps and
// vectors.
func classOf(t Type) (class, error) {
	switch t.Kind {
	case KindNull:
		return clsNull, nil
	case KindBool:
		return clsBool, nil
	case KindInt, KindDate32, KindDate64, KindTimestamp, KindTime, KindDuration:
		return clsInt, nil
	case KindDecimal:
		if !t.textDecimal() {
			return clsInt, nil
		}
	case KindFloat:
		return clsFloat, nil
	case KindString:
		return clsString, nil
	}
	return 0, errUnsupported
}

// vec is the value of an expression for every row. A boolean is two
// bitmaps, of the TRUE and of the FALSE rows (rows in neither are NULL).
// Other classes hold one value per row in the slice of their class, or
// when konst is set one value for every row, and valid, the bitmap of the
// rows that are not NULL (nil when every row is valid, as for constants).
// Valid floats are never NaN (which SQLite stores as NULL). Values of NULL
// rows are unspecified. A clsNull vec holds nothing.
type vec struct {
	cls      class
	konst    bool
	ints     []int64
	floats   []float64
	strs     []string
	tru, fal []uint64
	valid    []uint64
}

// stride returns the distance between the values of consecutive rows in
// v's slice: 0 for a constant.
func (v vec) stride() int {
	if v.konst {
		return 0
	}
	return 1
}

// words returns the number of bitmap words of n rows.
func words(n int) int { return (n + 63) / 64 }

// has reports whether bit i of the bitmap b is set; a nil b has every bit.
func has(b []uint64, i int) bool {
	return b == nil || b[i/64]&(1<<(uint(i)%64)) != 0
}

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

// rows returns the number of values an operation on vs computes: 1 when
// all are constants, else the number of rows.
func (ev *evaluator) rows(vs ...vec) int {
	for _, v := range vs {
		if !v.konst {
			return ev.n
		}
	}
	return 1
}

// valid returns a new bitmap of the n values (n is ev.n or 1) where all of
// vs, which are integers, floats or strings, are valid.
func (ev *evaluator) valid(n int, vs ...vec) []uint64 {
	out := make([]uint64, words(n))
	if n == 1 {
		out[0] = 1
	} else {
		copy(out, ev.ones)
	}
	for _, v := range vs {
		for w := range v.valid {
			out[w] &= v.valid[w]
		}
	}
	return out
}

// validBits returns the bitmap of the rows where v is not NULL; the result
// may be shared and must not be modified.
func (ev *evaluator) validBits(v vec) []uint64 {
	switch {
	case v.cls == clsNull:
		return ev.zeros
	case v.cls == clsBool:
		out := make([]uint64, len(ev.ones))
		for w := range out {
			out[w] = v.tru[w] | v.fal[w]
		}
		return out
	case v.valid == nil:
		return ev.ones
	}
	return v.valid
}

// bools returns the TRUE and FALSE bitmaps of a boolean or NULL v; the
// results may be shared and must not be modified.
func (ev *evaluator) bools(v vec) (t, f []uint64) {
	if v.cls == clsNull {
		return ev.zeros, ev.zeros
	}
	return v.tru, v.fal
}

// boolConst returns b for every row.
func (ev *evaluator) boolConst(b bool) vec {
	t, f := make([]uint64, len(ev.ones)), make([]uint64, len(ev.ones))
	if b {
		copy(t, ev.ones)
	} else {
		copy(f, ev.ones)
	}
	return vec{cls: clsBool, tru: t, fal: f}
}

// verdict returns the boolean whose value is bit i of bits (negated when
// negate is set) on the valid rows and NULL on the others; bits becomes
// the TRUE bitmap. When konst is set, bits holds the value of constants
// (which are valid), which every row gets.
func (ev *evaluator) verdict(bits, valid []uint64, negate, konst bool) vec {
	if konst {
		return ev.boolConst((bits[0]&1 != 0) != negate)
	}
	f := make([]uint64, len(bits))
	for w, b := range bits {
		if negate {
			b = ^b
		}
		m := ev.ones[w] & valid[w]
		bits[w], f[w] = b&m, ^b&m
	}
	return vec{cls: clsBool, tru: bits, fal: f}
}

// result returns the values computed into v for n rows (n is ev.n or 1)
// with the validity bitmap valid: a constant, or NULL, when n is 1.
func result(v vec, valid []uint64, n int) vec {
	if n == 1 && valid[0]&1 == 0 {
		return vec{cls: clsNull}
	}
	if n == 1 {
		v.konst = true
		return v
	}
	v.valid = valid
	return v
}

// boolBits returns the bitmap of the true elements of bs.
func boolBits(bs []bool) []uint64 {
	out := make([]uint64, words(len(bs)))
	for w := range out {
		x := bs[w*64 : min(w*64+64, len(bs))]
		var word uint64
		j := 0
		for ; j+4 <= len(x); j += 4 {
			q := x[j : j+4 : j+4]
			word |= pack4(q[0], q[1], q[2], q[3]) << (uint(j) & 63)
		}
		for ; j < len(x); j++ {
			word |= b2u(x[j]) << (uint(j) & 63)
		}
		out[w] = word
	}
	return out
}

// wellFormed reports whether v holds ev.n values in the slice of class cls
// (and in Valid, when set).
func (ev *evaluator) wellFormed(v *Values, cls class) bool {
	n := -1
	switch cls {
	case clsBool:
		n = len(v.Bools)
	case clsInt:
		n = len(v.Ints)
	case clsFloat:
		n = len(v.Floats)
	case clsString:
		n = len(v.Strings)
	}
	return n == ev.n && (v.Valid == nil || len(v.Valid) == ev.n)
}

// column returns the vector of the column key with values v of class cls,
// built once per evaluation. NaN floats are NULL, as SQLite stores them.
func (ev *evaluator) column(key string, v *Values, cls class) vec {
	if c, ok := ev.loaded[key]; ok {
		return c
	}
	var valid []uint64
	if v.Valid != nil {
		valid = boolBits(v.Valid)
	}
	var c vec
	switch cls {
	case clsBool:
		if valid == nil {
			valid = ev.ones
		}
		c = ev.verdict(boolBits(v.Bools), valid, false, false)
	case clsInt:
		c = vec{cls: clsInt, ints: v.Ints, valid: valid}
	case clsFloat:
		if hasNaN(v.Floats) {
			if valid == nil {
				valid = append([]uint64(nil), ev.ones...)
			}
			for i, f := range v.Floats {
				if f != f {
					valid[i/64] &^= 1 << (uint(i) % 64)
				}
			}
		}
		c = vec{cls: clsFloat, floats: v.Floats, valid: valid}
	case clsString:
		c = vec{cls: clsString, strs: v.Strings, valid: valid}
	}
	ev.loaded[key] = c
	return c
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

// constVec returns the constant k of type t for every row (float
// constants, parsed from literals or converted exactly, are never NaN). It
// returns errUnsupported for kinds the evaluator does not hold.
func (ev *evaluator) constVec(t Type, k konst) (vec, error) {
	cls, err := classOf(t)
	if err != nil {
		return vec{}, err
	}
	if k.v == nil {
		return vec{cls: clsNull}, nil
	}
	ok := false
	var v vec
	switch cls {
	case clsBool:
		var b int64
		b, ok = k.v.(int64)
		v = ev.boolConst(b != 0)
	case clsInt:
		var i int64
		i, ok = k.v.(int64)
		v = vec{cls: clsInt, konst: true, ints: []int64{i}}
	case clsFloat:
		var f float64
		f, ok = k.v.(float64)
		v = vec{cls: clsFloat, konst: true, floats: []float64{f}}
	case clsString:
		var s string
		s, ok = k.v.(string)
		v = vec{cls: clsString, konst: true, strs: []string{s}}
	}
	if !ok {
		return vec{}, errUnsupported
	}
	return v, nil
}

// conversion returns how the evaluator converts values of type from to
// type to as the compiled SQL does at run time (nil when nothing changes):
// integers and integer-stored decimals to floats, and temporal values to a
// finer unit of their family (the compiler converts only constants to
// coarser units). It returns errUnsupported for other conversions.
func (ev *evaluator) conversion(from, to Type) (func(vec) vec, error) {
	switch {
	case sameType(from, to):
		return nil, nil
	case to.Kind == KindFloat && (from.Kind == KindInt || (from.Kind == KindDecimal && !from.textDecimal())):
		div := 1.0
		if from.Kind == KindDecimal && from.Scale != 0 {
			div = math.Pow10(from.Scale)
		}
		return func(v vec) vec { return toFloat(v, div) }, nil
	case temporalFamily(from.Kind) != 0 && temporalFamily(from.Kind) == temporalFamily(to.Kind) &&
		nanosPer(from) >= nanosPer(to):
		m := nanosPer(from) / nanosPer(to)
		return func(v vec) vec { return ev.scaleUp(v, m) }, nil
	}
	return nil, errUnsupported
}

// toFloat returns integer values as floats divided by div, as SQLite's
// CAST(x AS REAL) (div 1, which changes nothing) or x / div computes them.
// Other classes are returned unchanged.
func toFloat(v vec, div float64) vec {
	if v.cls != clsInt {
		return v
	}
	out := make([]float64, len(v.ints))
	for i, x := range v.ints {
		out[i] = float64(x) / div
	}
	return vec{cls: clsFloat, konst: v.konst, floats: out, valid: v.valid}
}

// scaleUp returns integer values multiplied by m, as SQLite's x * m; an
// overflow on a valid row (where SQLite would switch to a float) makes the
// evaluation bail out.
func (ev *evaluator) scaleUp(v vec, m int64) vec {
	if v.cls != clsInt || m == 1 {
		return v
	}
	out := make([]int64, len(v.ints))
	for i, x := range v.ints {
		var over bool
		if out[i], over = mul64(x, m); over && has(v.valid, i) {
			ev.bail = true
		}
	}
	return vec{cls: clsInt, konst: v.konst, ints: out, valid: v.valid}
}

// mul64 returns x*y and whether the product overflows int64.
func mul64(x, y int64) (int64, bool) {
	r := x * y
	if y == 0 || (x == int64(int32(x)) && y == int64(int32(y))) {
		return r, false
	}
	return r, r/y != x || (y == -1 && x == math.MinInt64)
}
