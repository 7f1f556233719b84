package expr

import (
	"math"
	"slices"
)

// cmpOp is a comparison operator.
type cmpOp int

const (
	opEq cmpOp = iota
	opNe
	opLt
	opLe
	opGt
	opGe
)

// cmpOps maps the comparison operators of the AST to cmpOps.
var cmpOps = map[string]cmpOp{"=": opEq, "<>": opNe, "<": opLt, "<=": opLe, ">": opGt, ">=": opGe}

// swapped returns the operator that gives the same result with the
// operands exchanged.
func (op cmpOp) swapped() cmpOp {
	switch op {
	case opLt:
		return opGt
	case opLe:
		return opGe
	case opGt:
		return opLt
	case opGe:
		return opLe
	}
	return op
}

// base returns op as one of opEq, opLt and opGt, and whether that one's
// result (on non-NULL values) is negated to give op's.
func (op cmpOp) base() (cmpOp, bool) {
	switch op {
	case opNe:
		return opEq, true
	case opLe:
		return opGt, true
	case opGe:
		return opLt, true
	}
	return op, false
}

// compare returns a op b for values of comparable classes, as SQLite
// compares them: NULL when either is NULL, integers with floats exactly,
// strings bytewise (BINARY collation), false before true.
func (ev *evaluator) compare(op cmpOp, a, b vec) vec {
	switch {
	case a.cls == clsNull || b.cls == clsNull:
		return vec{cls: clsNull}
	case a.cls == clsBool:
		return ev.compareBools(op, a, b)
	case a.konst && !b.konst:
		a, b, op = b, a, op.swapped()
	}
	n := ev.rows(a, b)
	base, negate := op.base()
	bits := make([]uint64, words(n))
	cmpBits(base, a, b, n, bits)
	return ev.verdict(bits, ev.valid(n, a, b), negate, a.konst && b.konst)
}

// cmpBits sets bit i of out when row i of a and b (of n rows; a is
// constant only when b is) compare by op, which is opEq, opLt or opGt.
// Values of NULL rows give unspecified bits.
func cmpBits(op cmpOp, a, b vec, n int, out []uint64) {
	switch {
	case a.cls == clsInt && b.cls == clsFloat && b.konst:
		op2, c, always, ans := intVsFloat(op, b.floats[0])
		switch {
		case !always:
			cmpSlices(op2, a.ints, []int64{c}, true, out)
		case ans:
			for i := range out {
				out[i] = ^uint64(0)
			}
		}
	case a.cls == clsFloat && b.cls == clsInt && b.konst && exactFloat(b.ints[0]):
		cmpSlices(op, a.floats, []float64{float64(b.ints[0])}, true, out)
	case a.cls != b.cls:
		mixedBits(op, a, b, n, out)
	case a.cls == clsInt:
		cmpSlices(op, a.ints, b.ints, b.konst, out)
	case a.cls == clsFloat:
		cmpSlices(op, a.floats, b.floats, b.konst, out)
	default:
		cmpSlices(op, a.strs, b.strs, b.konst, out)
	}
}

// intVsFloat reduces comparing integers x with the float c (not NaN) by op
// (opEq, opLt or opGt) to comparing them by op2 with the integer c2; when
// always is set, the comparison is ans for every x.
func intVsFloat(op cmpOp, c float64) (op2 cmpOp, c2 int64, always, ans bool) {
	switch {
	case c >= 0x1p63:
		return op, 0, true, op == opLt
	case c < -0x1p63:
		return op, 0, true, op == opGt
	}
	fl := math.Floor(c)
	i := int64(fl)
	switch {
	case fl == c:
		return op, i, false, false
	case op == opEq:
		return op, 0, true, false
	case op == opLt: // x < c ⟺ x ≤ ⌊c⌋; c is not integral, so |c| < 2^52
		return opLt, i + 1, false, false
	}
	return opGt, i, false, false
}

// exactFloat reports whether the float64 nearest to i is i.
func exactFloat(i int64) bool {
	f := float64(i)
	return f < 0x1p63 && int64(f) == i
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
	s := float64(i)
	switch {
	case s < r:
		return -1
	case s > r:
		return 1
	}
	return 0
}

// mixedBits is cmpBits for an integer and a float operand.
func mixedBits(op cmpOp, a, b vec, n int, out []uint64) {
	if a.cls == clsFloat {
		a, b, op = b, a, op.swapped()
	}
	want := map[cmpOp]int{opEq: 0, opLt: -1, opGt: 1}[op]
	as, bs := a.stride(), b.stride()
	for i := range n {
		out[i/64] |= b2u(cmpIntFloat(a.ints[i*as], b.floats[i*bs]) == want) << (uint(i) % 64)
	}
}

// ordered are the Go types of values that compare with < as SQLite
// compares them (floats without NaN; strings bytewise).
type ordered interface{ int64 | float64 | string }

// cmpSlices sets bit i of out when xs[i] compares by op (opEq, opLt or
// opGt) with ys[i], or with ys[0] when yConst is set.
func cmpSlices[T ordered](op cmpOp, xs, ys []T, yConst bool, out []uint64) {
	switch {
	case yConst && op == opEq:
		eqConst(xs, ys[0], out)
	case yConst && op == opLt:
		ltConst(xs, ys[0], out)
	case yConst:
		gtConst(xs, ys[0], out)
	case op == opEq:
		eqVec(xs, ys, out)
	case op == opLt:
		ltVec(xs, ys, out)
	default:
		ltVec(ys, xs, out)
	}
}

// The kernels below set the bits of out, one word of 64 rows at a time,
// four rows per step: bit i when row i compares.

// eqConst sets bit i of out when xs[i] == c.
func eqConst[T ordered](xs []T, c T, out []uint64) {
	for w := range out {
		x := xs[w*64 : min(w*64+64, len(xs))]
		var word uint64
		j := 0
		for ; j+4 <= len(x); j += 4 {
			q := x[j : j+4 : j+4]
			word |= pack4(q[0] == c, q[1] == c, q[2] == c, q[3] == c) << (uint(j) & 63)
		}
		for ; j < len(x); j++ {
			word |= b2u(x[j] == c) << (uint(j) & 63)
		}
		out[w] = word
	}
}

// ltConst sets bit i of out when xs[i] < c.
func ltConst[T ordered](xs []T, c T, out []uint64) {
	for w := range out {
		x := xs[w*64 : min(w*64+64, len(xs))]
		var word uint64
		j := 0
		for ; j+4 <= len(x); j += 4 {
			q := x[j : j+4 : j+4]
			word |= pack4(q[0] < c, q[1] < c, q[2] < c, q[3] < c) << (uint(j) & 63)
		}
		for ; j < len(x); j++ {
			word |= b2u(x[j] < c) << (uint(j) & 63)
		}
		out[w] = word
	}
}

// gtConst sets bit i of out when xs[i] > c.
func gtConst[T ordered](xs []T, c T, out []uint64) {
	for w := range out {
		x := xs[w*64 : min(w*64+64, len(xs))]
		var word uint64
		j := 0
		for ; j+4 <= len(x); j += 4 {
			q := x[j : j+4 : j+4]
			word |= pack4(q[0] > c, q[1] > c, q[2] > c, q[3] > c) << (uint(j) & 63)
		}
		for ; j < len(x); j++ {
			word |= b2u(x[j] > c) << (uint(j) & 63)
		}
		out[w] = word
	}
}

// eqVec sets bit i of out when xs[i] == ys[i].
func eqVec[T ordered](xs, ys []T, out []uint64) {
	for w := range out {
		lo, hi := w*64, min(w*64+64, len(xs))
		x, y := xs[lo:hi], ys[lo:hi]
		var word uint64
		j := 0
		for ; j+4 <= len(x); j += 4 {
			p, q := x[j:j+4:j+4], y[j:j+4:j+4]
			word |= pack4(p[0] == q[0], p[1] == q[1], p[2] == q[2], p[3] == q[3]) << (uint(j) & 63)
		}
		for ; j < len(x); j++ {
			word |= b2u(x[j] == y[j]) << (uint(j) & 63)
		}
		out[w] = word
	}
}

// ltVec sets bit i of out when xs[i] < ys[i].
func ltVec[T ordered](xs, ys []T, out []uint64) {
	for w := range out {
		lo, hi := w*64, min(w*64+64, len(xs))
		x, y := xs[lo:hi], ys[lo:hi]
		var word uint64
		j := 0
		for ; j+4 <= len(x); j += 4 {
			p, q := x[j:j+4:j+4], y[j:j+4:j+4]
			word |= pack4(p[0] < q[0], p[1] < q[1], p[2] < q[2], p[3] < q[3]) << (uint(j) & 63)
		}
		for ; j < len(x); j++ {
			word |= b2u(x[j] < y[j]) << (uint(j) & 63)
		}
		out[w] = word
	}
}

// compareBools returns a op b for booleans (false < true).
func (ev *evaluator) compareBools(op cmpOp, a, b vec) vec {
	t, f := make([]uint64, len(ev.ones)), make([]uint64, len(ev.ones))
	for w := range t {
		lt, gt := a.fal[w]&b.tru[w], a.tru[w]&b.fal[w]
		eq := a.tru[w]&b.tru[w] | a.fal[w]&b.fal[w]
		var r uint64
		switch op {
		case opEq:
			r = eq
		case opNe:
			r = lt | gt
		case opLt:
			r = lt
		case opLe:
			r = lt | eq
		case opGt:
			r = gt
		case opGe:
			r = gt | eq
		}
		t[w], f[w] = r, (lt|gt|eq)&^r
	}
	return vec{cls: clsBool, tru: t, fal: f}
}

// distinct returns a IS [NOT] DISTINCT FROM b (SQLite's IS NOT and IS),
// which is never NULL: two NULLs are not distinct, a NULL and a value are.
func (ev *evaluator) distinct(a, b vec, not bool) vec {
	va, vb := ev.validBits(a), ev.validBits(b)
	_, ne := ev.bools(ev.compare(opEq, a, b))
	t, f := make([]uint64, len(ev.ones)), make([]uint64, len(ev.ones))
	for w := range t {
		d := (va[w] ^ vb[w]) | ne[w]
		if not {
			d = ev.ones[w] &^ d
		}
		t[w], f[w] = d, ev.ones[w]&^d
	}
	return vec{cls: clsBool, tru: t, fal: f}
}

// maxScanIn is the number of constants of an IN list up to which each is
// compared with x; more are looked up in a set.
const maxScanIn = 4

// maxDenseSpan bounds the span of integer IN lists looked up in a bitmap
// rather than a map.
const maxDenseSpan = 1 << 16

// in returns x [NOT] IN (list) for os = x, list...: TRUE when x equals an
// element, else NULL when x or an element is NULL, else FALSE. Every
// element is computed, as SQLite computes them even for a NULL x.
func (ev *evaluator) in(os []operand, not bool) vec {
	x := os[0].run()
	list := make([]vec, len(os)-1)
	for i, o := range os[1:] {
		list[i] = o.run()
	}
	if x.cls == clsNull {
		return x
	}
	t, f := make([]uint64, len(ev.ones)), append([]uint64(nil), ev.ones...)
	or := func(v vec) {
		vt, vf := ev.bools(v)
		for w := range t {
			t[w] |= vt[w]
			f[w] &= vf[w]
		}
	}
	var consts []vec
	for _, v := range list {
		if v.konst && !x.konst {
			consts = append(consts, v)
			continue
		}
		or(ev.compare(opEq, x, v))
	}
	if len(consts) > maxScanIn {
		or(ev.member(x, consts))
	} else {
		for _, c := range consts {
			or(ev.compare(opEq, x, c))
		}
	}
	r := vec{cls: clsBool, tru: t, fal: f}
	if not {
		return negated(r)
	}
	return r
}

// member returns whether the non-constant x equals one of the non-NULL
// constants consts, which are of x's class or (integers and floats) the
// other number class.
func (ev *evaluator) member(x vec, consts []vec) vec {
	bits := make([]uint64, len(ev.ones))
	switch x.cls {
	case clsInt:
		var keys []int64
		for _, c := range consts {
			if c.cls == clsInt {
				keys = append(keys, c.ints[0])
			} else if _, i, always, _ := intVsFloat(opEq, c.floats[0]); !always {
				keys = append(keys, i)
			}
		}
		intMemberBits(x.ints, keys, bits)
	case clsFloat:
		set := map[float64]struct{}{}
		for _, c := range consts {
			if c.cls == clsFloat {
				set[c.floats[0]] = struct{}{}
			} else if exactFloat(c.ints[0]) {
				set[float64(c.ints[0])] = struct{}{}
			}
		}
		memberBits(x.floats, set, bits)
	default:
		set := map[string]struct{}{}
		for _, c := range consts {
			set[c.strs[0]] = struct{}{}
		}
		memberBits(x.strs, set, bits)
	}
	return ev.verdict(bits, ev.validBits(x), false, false)
}

// intMemberBits sets bit i of out when xs[i] is one of keys, which it
// looks up in a bitmap of their span when that is small, else in a map.
func intMemberBits(xs, keys []int64, out []uint64) {
	if len(keys) == 0 {
		return
	}
	lo, hi := slices.Min(keys), slices.Max(keys)
	span := uint64(hi) - uint64(lo) + 1
	if span == 0 || span > maxDenseSpan {
		set := map[int64]struct{}{}
		for _, k := range keys {
			set[k] = struct{}{}
		}
		memberBits(xs, set, out)
		return
	}
	dense := make([]uint64, words(int(span)))
	for _, k := range keys {
		u := uint64(k) - uint64(lo)
		dense[u/64] |= 1 << (u % 64)
	}
	for w := range out {
		var word uint64
		for j, x := range xs[w*64 : min(w*64+64, len(xs))] {
			u := uint64(x) - uint64(lo)
			c := min(u, span-1) // in range for the lookup; u < span decides
			word |= (b2u(u < span) & (dense[c/64] >> (c % 64))) << (uint(j) & 63)
		}
		out[w] = word
	}
}

// memberBits sets bit i of out when xs[i] is in set.
func memberBits[T comparable](xs []T, set map[T]struct{}, out []uint64) {
	for i, x := range xs {
		if _, ok := set[x]; ok {
			out[i/64] |= 1 << (uint(i) % 64)
		}
	}
}

// between returns x [NOT] BETWEEN lo AND hi for os = x, lo, hi, which is
// x >= lo AND x <= hi as in SQLite.
func (ev *evaluator) between(os []operand, not bool) vec {
	x := os[0].run()
	r := ev.logic(true, ev.compare(opGe, x, os[1].run()), ev.compare(opLe, x, os[2].run()))
	if not {
		return negated(r)
	}
	return r
}
