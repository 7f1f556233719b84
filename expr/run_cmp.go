package expr

import (
	"math"
	"slices"
)

// swapped returns the comparison that gives the same result with the
// operands exchanged.
func swapped(op sqlOp) sqlOp {
	switch op {
	case sqlLt:
		return sqlGt
	case sqlLe:
		return sqlGe
	case sqlGt:
		return sqlLt
	case sqlGe:
		return sqlLe
	}
	return op
}

// base returns op as one of sqlEq, sqlLt and sqlGt, and whether that one's
// result (on non-NULL values) is negated to give op's.
func base(op sqlOp) (sqlOp, bool) {
	switch op {
	case sqlNe:
		return sqlEq, true
	case sqlLe:
		return sqlGt, true
	case sqlGe:
		return sqlLt, true
	}
	return op, false
}

// rows returns how many values an operation on vs computes: 1 when all
// are constants, else the batch's rows.
func (m *machine) rows(vs ...vec) int {
	for _, v := range vs {
		if !v.konst {
			return m.n
		}
	}
	return 1
}

// span returns how many values an operation on vs computes and the mask
// of the rows to compute them for: every row of mask, or, when all of vs
// are constants, one value (mask nil), which none is when no row of mask
// needs it (ok false).
func (m *machine) span(mask []uint64, vs ...vec) (n int, rows []uint64, ok bool) {
	if n = m.rows(vs...); n != 1 || m.n == 1 {
		return n, mask, true
	}
	return 1, nil, !empty(m.n, mask)
}

// validAll returns the rows of n (m.n or 1) where every one of vs is
// non-NULL, as a new bitmap.
func (m *machine) validAll(n int, vs ...vec) []uint64 {
	out := onesBitmap(n)
	for _, v := range vs {
		if v.konst {
			if v.isNull(0) {
				return make([]uint64, words(n))
			}
			continue
		}
		if vb := v.validBits(n); vb != nil {
			for w := range out {
				out[w] &= vb[w]
			}
		}
	}
	return out
}

// verdict returns the boolean of n rows (m.n or 1) whose value is bit i of
// bits (negated when negate is set) on the valid rows and NULL on the
// others; bits becomes the TRUE bitmap. With n = 1 it is a constant.
func (m *machine) verdict(bits, valid []uint64, negate bool, n int) vec {
	f := make([]uint64, len(bits))
	for w, b := range bits {
		if negate {
			b = ^b
		}
		bits[w], f[w] = b&valid[w], ^b&valid[w]
	}
	v := boolVec(bits, f)
	v.konst = n == 1 && m.n != 1
	return v
}

// ints returns a boolean as INTEGER 0/1 values (other vecs unchanged).
func (m *machine) ints(v vec) vec {
	if v.cls != clsBool {
		return v
	}
	n := m.n
	if v.konst {
		n = 1
	}
	out := vec{cls: clsInt, konst: v.konst, ints: make([]int64, n), valid: make([]uint64, words(n))}
	for i := range n {
		switch {
		case has(v.tru, i):
			out.ints[i] = 1
			set(out.valid, i)
		case has(v.fal, i):
			set(out.valid, i)
		}
	}
	return out
}

// simple reports whether v holds one class in its slices (no REAL rows of
// an INTEGER vec, no mixture).
func simple(v vec) bool {
	return v.over == nil && v.cls != clsAny && v.cls != clsOpaque
}

// compare returns a op b for a comparison operator, as SQLite compares:
// NULL when either is NULL (except IS and IS NOT), integers with reals
// exactly, text and blobs bytewise, numbers before text before blobs.
func (m *machine) compare(op sqlOp, a, b vec) vec {
	if op == sqlIs || op == sqlIsNot {
		return m.distinct(op == sqlIsNot, a, b)
	}
	if a.cls == clsNull || b.cls == clsNull {
		return nullVec
	}
	if a.cls == clsBool && b.cls == clsBool {
		return m.compareBools(op, a, b)
	}
	a, b = m.ints(a), m.ints(b)
	n := m.rows(a, b)
	baseOp, negate := base(op)
	if a.konst && !b.konst {
		a, b, baseOp = b, a, swapped(baseOp)
	}
	bits := make([]uint64, words(n))
	if !simple(a) || !simple(b) || !cmpFast(baseOp, a, b, n, bits) {
		want := map[sqlOp]int{sqlEq: 0, sqlLt: -1, sqlGt: 1}[baseOp]
		for i := range n {
			x, y := a.at(i), b.at(i)
			if x.cls != clsNull && y.cls != clsNull && compareValues(x, y) == want {
				set(bits, i)
			}
		}
	}
	return m.verdict(bits, m.validAll(n, a, b), negate, n)
}

// cmpFast sets bit i of out when row i of a and b compare by op (sqlEq,
// sqlLt or sqlGt; a is constant only when b is), for the pairs of classes
// it has a kernel for, and reports whether it had one. Bits of NULL rows
// are unspecified.
func cmpFast(op sqlOp, a, b vec, n int, out []uint64) bool {
	switch {
	case a.cls == clsInt && b.cls == clsFloat && b.konst:
		op2, c, always, ans := intVsFloat(op, b.flts[0])
		switch {
		case !always:
			cmpSlices(op2, a.ints, []int64{c}, true, out)
		case ans:
			for w := range out {
				out[w] = ^uint64(0)
			}
		}
	case a.cls == clsFloat && b.cls == clsInt && b.konst && exactFloat(b.ints[0]):
		cmpSlices(op, a.flts, []float64{float64(b.ints[0])}, true, out)
	case a.cls == clsInt && b.cls == clsFloat, a.cls == clsFloat && b.cls == clsInt:
		mixedBits(op, a, b, n, out)
	case a.cls != b.cls:
		return false
	case a.cls == clsInt:
		cmpSlices(op, a.ints, b.ints, b.konst, out)
	case a.cls == clsFloat:
		cmpSlices(op, a.flts, b.flts, b.konst, out)
	default:
		cmpTexts(op, &a.txt, &b.txt, b.konst, n, out)
	}
	return true
}

// intVsFloat reduces comparing integers x with the float c by op (sqlEq,
// sqlLt or sqlGt) to comparing them by op2 with the integer c2; when
// always is set, the comparison is ans for every x.
func intVsFloat(op sqlOp, c float64) (op2 sqlOp, c2 int64, always, ans bool) {
	switch {
	case c >= 0x1p63:
		return op, 0, true, op == sqlLt
	case c < -0x1p63:
		return op, 0, true, op == sqlGt
	}
	fl := math.Floor(c)
	i := int64(fl)
	switch {
	case fl == c:
		return op, i, false, false
	case op == sqlEq:
		return op, 0, true, false
	case op == sqlLt: // x < c ⟺ x ≤ ⌊c⌋; c is not integral, so |c| < 2^52
		return sqlLt, i + 1, false, false
	}
	return sqlGt, i, false, false
}

// mixedBits is cmpFast for an integer and a float operand.
func mixedBits(op sqlOp, a, b vec, n int, out []uint64) {
	if a.cls == clsFloat {
		a, b, op = b, a, swapped(op)
	}
	want := map[sqlOp]int{sqlEq: 0, sqlLt: -1, sqlGt: 1}[op]
	for i := range n {
		out[i/64] |= b2u(cmpIntFloat(a.ints[a.idx(i)], b.flts[b.idx(i)]) == want) << (uint(i) % 64)
	}
}

// ordered are the Go types of values that compare with < as SQLite
// compares them (floats without NaN; strings bytewise).
type ordered interface{ int64 | float64 | string }

// cmpSlices sets bit i of out when xs[i] compares by op (sqlEq, sqlLt or
// sqlGt) with ys[i], or with ys[0] when yConst is set.
func cmpSlices[T ordered](op sqlOp, xs, ys []T, yConst bool, out []uint64) {
	switch {
	case yConst && op == sqlEq:
		eqConst(xs, ys[0], out)
	case yConst && op == sqlLt:
		ltConst(xs, ys[0], out)
	case yConst:
		gtConst(xs, ys[0], out)
	case op == sqlEq:
		eqVec(xs, ys, out)
	case op == sqlLt:
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

// cmpTexts sets bit i of out when text (or blob) i of x compares by op
// (sqlEq, sqlLt or sqlGt) with y's (y's only value when yConst is set).
func cmpTexts(op sqlOp, x, y *textCol, yConst bool, n int, out []uint64) {
	if yConst {
		c := y.at(0)
		switch op {
		case sqlEq:
			for i := range n {
				out[i/64] |= b2u(x.at(i) == c) << (uint(i) % 64)
			}
		case sqlLt:
			for i := range n {
				out[i/64] |= b2u(x.at(i) < c) << (uint(i) % 64)
			}
		default:
			for i := range n {
				out[i/64] |= b2u(x.at(i) > c) << (uint(i) % 64)
			}
		}
		return
	}
	want := map[sqlOp]int{sqlEq: 0, sqlLt: -1, sqlGt: 1}[op]
	for i := range n {
		out[i/64] |= b2u(cmp3(x.at(i), y.at(i)) == want) << (uint(i) % 64)
	}
}

// compareBools returns a op b for booleans (false < true).
func (m *machine) compareBools(op sqlOp, a, b vec) vec {
	at, af := m.bools(a)
	bt, bf := m.bools(b)
	t, f := make([]uint64, len(at)), make([]uint64, len(at))
	for w := range t {
		lt, gt := af[w]&bt[w], at[w]&bf[w]
		eq := at[w]&bt[w] | af[w]&bf[w]
		var r uint64
		switch op {
		case sqlEq:
			r = eq
		case sqlNe:
			r = lt | gt
		case sqlLt:
			r = lt
		case sqlLe:
			r = lt | eq
		case sqlGt:
			r = gt
		case sqlGe:
			r = gt | eq
		}
		t[w], f[w] = r, (lt|gt|eq)&^r
	}
	return boolVec(t, f)
}

// distinct returns a IS NOT b (not set) or a IS b, which is never NULL:
// two NULLs are the same, a NULL and a value are not.
func (m *machine) distinct(not bool, a, b vec) vec {
	eq, _ := m.bools(m.compare(sqlEq, a, b))
	va, vb := a.validBits(m.n), b.validBits(m.n)
	if va == nil {
		va = onesBitmap(m.n)
	}
	if vb == nil {
		vb = onesBitmap(m.n)
	}
	ones := onesBitmap(m.n)
	t, f := make([]uint64, len(ones)), make([]uint64, len(ones))
	for w := range t {
		same := eq[w] | ones[w]&^(va[w]|vb[w])
		if not {
			same = ones[w] &^ same
		}
		t[w], f[w] = same, ones[w]&^same
	}
	return boolVec(t, f)
}

// in returns x [NOT] IN (list): TRUE where x equals an element, else NULL
// where x or an element is NULL, else FALSE. SQLite compares the elements
// in order and stops at a match, so an element is evaluated only on rows
// no earlier one matched; runs of constants are looked up together.
func (m *machine) in(n *sqlNode, mask []uint64) (vec, error) {
	x, err := m.eval(n.args[0], mask)
	if err != nil {
		return vec{}, err
	}
	if x.cls == clsNull {
		return nullVec, nil
	}
	nw := words(m.n)
	hit, sawNull := make([]uint64, nw), make([]uint64, nw)
	left := mask
	var consts []value
	flush := func() {
		if len(consts) == 0 {
			return
		}
		h, null := m.member(x, consts)
		for w := range hit {
			hit[w] |= h[w]
		}
		if null {
			copy(sawNull, onesBitmap(m.n))
		}
		left = andNot(m.n, left, h)
		consts = nil
	}
	if list, ok := n.v.(string); ok {
		consts = m.prog.jsonLists[list]
		flush()
	}
	for _, e := range n.args[1:] {
		if e.fixed {
			v, err := m.fixedValue(e, mask)
			if err != nil {
				return vec{}, err
			}
			consts = append(consts, v.at(0))
			continue
		}
		flush()
		v, err := m.eval(e, left)
		if err != nil {
			return vec{}, err
		}
		t, f := m.bools(m.compare(sqlEq, x, v))
		for w := range hit {
			hit[w] |= t[w]
			sawNull[w] |= ^(t[w] | f[w])
		}
		left = andNot(m.n, left, t)
	}
	flush()
	valid := x.validBits(m.n)
	if valid == nil {
		valid = onesBitmap(m.n)
	}
	f := make([]uint64, nw)
	for w := range f {
		f[w] = valid[w] &^ hit[w] &^ sawNull[w]
		hit[w] &= valid[w]
	}
	r := boolVec(hit, f)
	if n.not {
		return m.not(r), nil
	}
	return r, nil
}

// maxDenseSpan bounds the span of integer IN lists looked up in a bitmap
// rather than a map.
const maxDenseSpan = 1 << 16

// member returns the rows where x equals one of the constants consts, and
// whether one of them is NULL.
func (m *machine) member(x vec, consts []value) (hit []uint64, hasNull bool) {
	hit = make([]uint64, words(m.n))
	var live []value
	for _, c := range consts {
		if c.cls == clsNull {
			hasNull = true
		} else {
			live = append(live, c)
		}
	}
	x = m.ints(x)
	n := m.rows(x)
	if x.konst {
		if xv := x.at(0); xv.cls != clsNull && slices.ContainsFunc(live, func(c value) bool { return compareValues(xv, c) == 0 }) {
			copy(hit, onesBitmap(m.n))
		}
		return hit, hasNull
	}
	switch {
	case !simple(x):
		for i := range n {
			xv := x.at(i)
			if xv.cls != clsNull && slices.ContainsFunc(live, func(c value) bool { return compareValues(xv, c) == 0 }) {
				set(hit, i)
			}
		}
	case x.cls == clsInt:
		var keys []int64
		for _, c := range live {
			if c.cls == clsInt {
				keys = append(keys, c.i)
			} else if c.cls == clsFloat {
				if _, i, always, _ := intVsFloat(sqlEq, c.f); !always {
					keys = append(keys, i)
				}
			}
		}
		intMemberBits(x.ints, keys, hit)
	case x.cls == clsFloat:
		set := map[float64]struct{}{}
		for _, c := range live {
			if c.cls == clsFloat {
				set[c.f] = struct{}{}
			} else if c.cls == clsInt && exactFloat(c.i) {
				set[float64(c.i)] = struct{}{}
			}
		}
		memberBits(x.flts, set, hit)
	default:
		set := map[string]struct{}{}
		for _, c := range live {
			if c.cls == x.cls {
				set[c.s] = struct{}{}
			}
		}
		for i := range n {
			if _, ok := set[x.txt.at(i)]; ok {
				hit[i/64] |= 1 << (uint(i) % 64)
			}
		}
	}
	return hit, hasNull
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
