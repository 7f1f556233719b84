package expr

import (
	"math"
	"strconv"
)

// arith returns a op b for + - * / %, as SQLite's arithmetic opcodes
// compute it: two INTEGERs give an INTEGER (division truncates) unless the
// result overflows, which gives a REAL; anything with a REAL computes in
// float64, except % which truncates both to integers; division or
// remainder by zero and NaN results are NULL.
func (m *machine) arith(op sqlOp, a, b vec) vec {
	if a.cls == clsNull || b.cls == clsNull {
		return nullVec
	}
	a, b = m.ints(a), m.ints(b)
	n := m.rows(a, b)
	var out vec
	switch {
	case !simple(a) || !simple(b) || !isNum(a.cls) || !isNum(b.cls),
		op == sqlRem && (a.cls == clsFloat || b.cls == clsFloat):
		bl := newBuilder(n)
		for i := range n {
			bl.put(i, arithValue(op, a.at(i), b.at(i)))
		}
		out = bl.vec()
	case a.cls == clsInt && b.cls == clsInt:
		out = intArith(op, a, b, n, m.validAll(n, a, b))
	default:
		out = floatArith(op, a, b, n, m.validAll(n, a, b))
	}
	out.konst = n == 1 && m.n != 1
	return out
}

func isNum(c class) bool { return c == clsInt || c == clsFloat }

// arithValue is arith for one pair of values.
func arithValue(op sqlOp, l, r value) value {
	if l.cls == clsNull || r.cls == clsNull {
		return nullValue
	}
	l, r = numeric(l), numeric(r)
	if l.cls == clsInt && r.cls == clsInt {
		if v, ok := intOp(op, l.i, r.i); ok {
			return v
		}
	}
	x, y := l.asFloat64(), r.asFloat64()
	var z float64
	switch op {
	case sqlAdd:
		z = x + y
	case sqlSub:
		z = x - y
	case sqlMul:
		z = x * y
	case sqlDiv:
		if y == 0 {
			return nullValue
		}
		z = x / y
	default:
		p, q := l.asInt64(), r.asInt64()
		if q == 0 {
			return nullValue
		}
		if q == -1 {
			q = 1
		}
		z = float64(p % q)
	}
	return floatValue(z)
}

// intOp computes x op y for INTEGERs; ok is false when SQLite computes it
// in float64 instead (an overflow).
func intOp(op sqlOp, x, y int64) (value, bool) {
	switch op {
	case sqlAdd:
		z := x + y
		return intValue(z), (x^z)&(y^z) >= 0
	case sqlSub:
		z := x - y
		return intValue(z), (x^y)&(x^z) >= 0
	case sqlMul:
		z, over := mul64(x, y)
		return intValue(z), !over
	case sqlDiv:
		switch {
		case y == 0:
			return nullValue, true
		case y == -1 && x == math.MinInt64:
			return value{}, false
		}
		return intValue(x / y), true
	}
	switch y {
	case 0:
		return nullValue, true
	case -1:
		return intValue(0), true
	}
	return intValue(x % y), true
}

// numeric returns a text or blob as the number SQLite's arithmetic reads
// from it: an INTEGER when the whole text is one, else a REAL.
func numeric(x value) value {
	if x.cls != clsText && x.cls != clsBlob {
		return x
	}
	if i, err := strconv.ParseInt(x.s, 10, 64); err == nil {
		return intValue(i)
	}
	return value{cls: clsFloat, f: sqlAtoF(x.s)}
}

// mul64 returns x*y and whether the product overflows int64.
func mul64(x, y int64) (int64, bool) {
	r := x * y
	if y == 0 || (x == int64(int32(x)) && y == int64(int32(y))) {
		return r, false
	}
	return r, r/y != x || (y == -1 && x == math.MinInt64)
}

// intArith is arith for two INTEGER vecs (of n rows, valid where both
// are): overflowing rows hold the REAL SQLite computes.
func intArith(op sqlOp, a, b vec, n int, valid []uint64) vec {
	out := vec{cls: clsInt, ints: make([]int64, n), valid: valid}
	x, y := a.ints, b.ints
	xs, ys := 1, 1
	if a.konst {
		xs = 0
	}
	if b.konst {
		ys = 0
	}
	// over collects, per 64 rows, the rows whose result overflowed.
	var over []uint64
	mark := func(i int) {
		if over == nil {
			over = make([]uint64, words(n))
		}
		set(over, i)
	}
	r := out.ints
	switch op {
	case sqlAdd:
		for i := range r {
			p, q := x[i*xs], y[i*ys]
			z := p + q
			r[i] = z
			if (p^z)&(q^z) < 0 {
				mark(i)
			}
		}
	case sqlSub:
		for i := range r {
			p, q := x[i*xs], y[i*ys]
			z := p - q
			r[i] = z
			if (p^q)&(p^z) < 0 {
				mark(i)
			}
		}
	case sqlMul:
		for i := range r {
			z, o := mul64(x[i*xs], y[i*ys])
			r[i] = z
			if o {
				mark(i)
			}
		}
	case sqlDiv:
		for i := range r {
			p, q := x[i*xs], y[i*ys]
			switch {
			case q == 0:
				clear(valid, i)
			case q == -1 && p == math.MinInt64:
				mark(i)
			default:
				r[i] = p / q
			}
		}
	default:
		for i := range r {
			switch q := y[i*ys]; q {
			case 0:
				clear(valid, i)
			case -1:
			default:
				r[i] = x[i*xs] % q
			}
		}
	}
	if over != nil {
		forEach(n, over, func(i int) error {
			if has(valid, i) {
				if out.over == nil {
					out.over = &realRows{rows: make([]uint64, words(n)), vals: make([]float64, n)}
				}
				set(out.over.rows, i)
				p, q := x[i*xs], y[i*ys]
				out.over.vals[i] = arithValue(op, value{cls: clsFloat, f: float64(p)}, value{cls: clsFloat, f: float64(q)}).f
			}
			return nil
		})
	}
	return out
}

// toFloats returns an INTEGER vec as REALs (REAL vecs unchanged).
func toFloats(v vec) vec {
	if v.cls != clsInt {
		return v
	}
	out := vec{cls: clsFloat, konst: v.konst, flts: make([]float64, len(v.ints)), valid: v.valid}
	for i, x := range v.ints {
		out.flts[i] = float64(x)
	}
	return out
}

// floatArith is arith of + - * / in float64 for two vecs of n rows, REAL
// or INTEGER (converted as SQLite converts), valid where both are; NaN
// results and division by zero clear rows of valid.
func floatArith(op sqlOp, a, b vec, n int, valid []uint64) vec {
	out := vec{cls: clsFloat, flts: make([]float64, n), valid: valid}
	xs, ys := 1, 1
	if a.konst {
		xs = 0
	}
	if b.konst {
		ys = 0
	}
	switch {
	case a.cls == clsFloat && b.cls == clsFloat:
		floatLoop(op, a.flts, b.flts, xs, ys, out.flts)
	case a.cls == clsFloat:
		floatLoop(op, a.flts, b.ints, xs, ys, out.flts)
	case b.cls == clsFloat:
		floatLoop(op, a.ints, b.flts, xs, ys, out.flts)
	default:
		floatLoop(op, a.ints, b.ints, xs, ys, out.flts)
	}
	if hasNaN(out.flts) {
		for i, z := range out.flts {
			if z != z {
				clear(valid, i)
			}
		}
	}
	return out
}

// floatLoop computes r[i] = x[i*xs] op y[i*ys] in float64 for + - * /;
// division by zero gives NaN.
func floatLoop[X, Y int64 | float64](op sqlOp, x []X, y []Y, xs, ys int, r []float64) {
	switch op {
	case sqlAdd:
		for i := range r {
			r[i] = float64(x[i*xs]) + float64(y[i*ys])
		}
	case sqlSub:
		for i := range r {
			r[i] = float64(x[i*xs]) - float64(y[i*ys])
		}
	case sqlMul:
		for i := range r {
			r[i] = float64(x[i*xs]) * float64(y[i*ys])
		}
	default:
		for i := range r {
			q := float64(y[i*ys])
			if q == 0 {
				r[i] = math.NaN()
				continue
			}
			r[i] = float64(x[i*xs]) / q
		}
	}
}

// concat returns a || b: NULL when either is NULL, else their textCol
// joined.
func (m *machine) concat(a, b vec, mask []uint64) vec {
	if a.cls == clsNull || b.cls == clsNull {
		return nullVec
	}
	a, b = m.ints(a), m.ints(b)
	n, mask, ok := m.span(mask, a, b)
	if !ok {
		return nullVec
	}
	out := vec{cls: clsText, konst: n == 1 && m.n != 1, txt: textCol{strs: make([]string, n)}, valid: make([]uint64, words(n))}
	forEach(n, mask, func(i int) error {
		x, y := a.at(i), b.at(i)
		if x.cls != clsNull && y.cls != clsNull {
			out.txt.strs[i] = x.text() + y.text()
			set(out.valid, i)
		}
		return nil
	})
	return out
}

// cast returns CAST(x AS to) for to REAL, INTEGER, TEXT or BLOB, as
// SQLite converts.
func (m *machine) cast(to string, x vec, mask []uint64) vec {
	if x.cls == clsNull {
		return x
	}
	x = m.ints(x)
	switch {
	case to == "REAL" && x.cls == clsFloat:
		return x
	case to == "REAL" && x.cls == clsInt && x.over == nil:
		return toFloats(x)
	case to == "INTEGER" && x.cls == clsInt && x.over == nil:
		return x
	case to == "TEXT" && x.cls == clsText, to == "BLOB" && x.cls == clsBlob:
		return x
	}
	n, mask, ok := m.span(mask, x)
	if !ok {
		return nullVec
	}
	b := newBuilder(n)
	forEach(n, mask, func(i int) error {
		b.put(i, castValue(to, x.at(i)))
		return nil
	})
	out := b.vec()
	out.konst = n == 1 && m.n != 1
	return out
}

// castValue is cast for one value.
func castValue(to string, x value) value {
	if x.cls == clsNull {
		return x
	}
	switch to {
	case "REAL":
		return floatValue(x.asFloat64())
	case "INTEGER":
		return intValue(x.asInt64())
	case "TEXT":
		return textValue(x.text())
	}
	return value{cls: clsBlob, s: x.text()}
}
