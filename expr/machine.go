package expr

import (
	"errors"

	"github.com/lancens/lancens/store"
)

// machine evaluates compiled SQL (a tree of sqlNodes) over the n rows of
// one batch with SQLite's semantics, including which rows each part is
// evaluated on: SQLite evaluates the branches of CASE, the later
// arguments of coalesce, the later elements of IN and the right operand
// of AND and OR in a condition only on the rows that need them, and a
// value that fails to convert on a row that is not evaluated is no error.
// Each method takes the mask of the rows to evaluate (nil: every row);
// values of other rows in its result are unspecified.
type machine struct {
	n      int
	scalar bool // evaluating a fixed node once (n is 1)
	prog   *program
	load   func(n *sqlNode) (vec, error) // a column's values
	cache  map[*sqlNode]vec              // fixed nodes and columns, once computed
}

// errEval is the code-13 error of a value the SQL cannot compute.
func errEval(msg string) error {
	return store.Errorf(store.CodeInvalidInput, "evaluating the expression failed: %s", msg)
}

// eval returns the value of n on the rows of mask.
func (m *machine) eval(n *sqlNode, mask []uint64) (vec, error) {
	if n.fixed && !m.scalar {
		return m.fixedValue(n, mask)
	}
	switch n.kind {
	case sqlConst:
		return constVec(constValue(n.v)), nil
	case sqlColumn:
		if v, ok := m.cache[n]; ok {
			return v, nil
		}
		v, err := m.load(n)
		if err == nil {
			m.cache[n] = v
		}
		return v, err
	case sqlNot:
		x, err := m.eval(n.args[0], mask)
		return m.not(x), err
	case sqlNeg:
		x, err := m.eval(n.args[0], mask)
		if err != nil {
			return vec{}, err
		}
		return m.arith(sqlSub, constVec(intValue(0)), x), nil
	case sqlBinary:
		a, err := m.eval(n.args[0], mask)
		if err != nil {
			return vec{}, err
		}
		b, err := m.eval(n.args[1], mask)
		if err != nil {
			return vec{}, err
		}
		switch {
		case n.op == sqlAnd || n.op == sqlOr:
			return m.logic(n.op == sqlAnd, a, b), nil
		case n.op.isComparison():
			return m.compare(n.op, a, b), nil
		case n.op == sqlConcat:
			return m.concat(a, b, mask), nil
		}
		return m.arith(n.op, a, b), nil
	case sqlTest:
		x, err := m.eval(n.args[0], mask)
		if err != nil {
			return vec{}, err
		}
		return m.test(n.op, x), nil
	case sqlIn:
		return m.in(n, mask)
	case sqlBetween:
		return m.between(n, mask, nil)
	case sqlCase:
		return m.caseValue(n, mask)
	case sqlCast:
		x, err := m.eval(n.args[0], mask)
		if err != nil {
			return vec{}, err
		}
		return m.cast(n.text, x, mask), nil
	case sqlCall:
		return m.call(n, mask)
	}
	return vec{}, errors.New("expr: unknown SQL node")
}

// fixedValue returns the value of a node that reads no column: computed
// once per batch, when some row needs it.
func (m *machine) fixedValue(n *sqlNode, mask []uint64) (vec, error) {
	if v, ok := m.cache[n]; ok {
		return v, nil
	}
	if empty(m.n, mask) {
		return nullVec, nil
	}
	one := &machine{n: 1, scalar: true, prog: m.prog, cache: map[*sqlNode]vec{}}
	v, err := one.eval(n, nil)
	if err != nil {
		return vec{}, err
	}
	v.konst = true
	m.cache[n] = v
	return v, nil
}

// constValue returns the SQLite value of a bound argument (NaN binds as
// NULL).
func constValue(v any) value {
	switch v := v.(type) {
	case int64:
		return intValue(v)
	case float64:
		return floatValue(v)
	case string:
		return textValue(v)
	case []byte:
		return value{cls: clsBlob, s: string(v)}
	}
	return nullValue
}

// A condition is evaluated the way SQLite codes a WHERE term or a WHEN:
// as a jump taken when the condition is TRUE (ifTrue) or FALSE, and also
// when it is NULL if jumpNull is set. AND, OR, NOT and IS TRUE/FALSE pass
// their jumps on to their operands and skip the right operand where the
// left one decides; anything else is computed as a value.

// cond returns the value of the boolean n on the rows of mask, evaluated
// as a condition. Where an operand was skipped the result is NULL or the
// value that decided, which takes the same jump.
func (m *machine) cond(n *sqlNode, mask []uint64, ifTrue, jumpNull bool) (vec, error) {
	if n.fixed && !m.scalar {
		return m.fixedValue(n, mask)
	}
	switch {
	case n.kind == sqlNot:
		x, err := m.cond(n.args[0], mask, !ifTrue, jumpNull)
		return m.not(x), err
	case n.kind == sqlTest && n.op >= sqlIsTrue:
		// IS TRUE and IS NOT FALSE jump with their operand's truth, the
		// others with its falsity; NULL jumps for the IS NOT forms.
		isNot := n.op == sqlIsNotTrue || n.op == sqlIsNotFalse
		positive := n.op == sqlIsTrue || n.op == sqlIsNotFalse
		x, err := m.cond(n.args[0], mask, ifTrue == positive, ifTrue == isNot)
		if err != nil {
			return vec{}, err
		}
		return m.test(n.op, x), nil
	case n.kind == sqlBetween:
		return m.between(n, mask, &jump{ifTrue, jumpNull})
	case n.kind == sqlBinary && (n.op == sqlAnd || n.op == sqlOr):
		return m.andOr(n, mask, ifTrue, jumpNull)
	}
	return m.eval(n, mask)
}

// jump is how a condition is tested: see cond.
type jump struct{ ifTrue, jumpNull bool }

// andOr evaluates AND or OR as a condition. The second operand is
// evaluated on the rows where the first does not decide the jump: for AND,
// where the first is TRUE, and where it is NULL unless that NULL already
// jumps; for OR likewise with FALSE. SQLite evaluates the right operand
// first when only the left one holds a subquery.
func (m *machine) andOr(n *sqlNode, mask []uint64, ifTrue, jumpNull bool) (vec, error) {
	and := n.op == sqlAnd
	first, second := n.args[0], n.args[1]
	if hasSubquery(first) && !hasSubquery(second) {
		first, second = second, first
	}
	// The first operand is tested with the opposite jump when AND jumps
	// on TRUE (skipping to the end when it is FALSE) or OR on FALSE.
	firstTrue, firstNull := ifTrue, jumpNull
	if and == ifTrue {
		firstTrue, firstNull = !ifTrue, !jumpNull
	}
	a, err := m.cond(first, mask, firstTrue, firstNull)
	if err != nil {
		return vec{}, err
	}
	at, af := m.bools(a)
	decided := af // AND: FALSE decides
	if !and {
		decided = at
	}
	rest := andNot(m.n, mask, decided)
	if firstNull {
		rest = andNot(m.n, rest, andNot(m.n, nil, orBits(at, af)))
	}
	b, err := m.cond(second, rest, ifTrue, jumpNull)
	if err != nil {
		return vec{}, err
	}
	bt, bf := m.bools(b)
	// Rows where b was skipped: decided ones take a's value; NULL ones
	// stay NULL (b's bits there are ignored).
	t, f := make([]uint64, len(at)), make([]uint64, len(at))
	for w := range t {
		r := rest[w]
		if and {
			t[w] = at[w] & bt[w] & r
			f[w] = af[w] | bf[w]&r
		} else {
			t[w] = at[w] | bt[w]&r
			f[w] = af[w] & bf[w] & r
		}
	}
	return boolVec(t, f), nil
}

// hasSubquery reports whether n holds an IN over a JSON list, which SQLite
// runs as a subquery.
func hasSubquery(n *sqlNode) bool {
	if n.kind == sqlIn && n.v != nil {
		return true
	}
	for _, a := range n.args {
		if hasSubquery(a) {
			return true
		}
	}
	return false
}

// filter returns the rows (a bitmap of n rows) where the boolean n is TRUE,
// evaluating it as SQLite evaluates a WHERE clause: its AND terms one after
// the other on the rows the earlier ones kept, except that terms reading no
// column are evaluated first, once, and when one of them is not TRUE no row
// is selected and nothing else is evaluated.
func (m *machine) filter(root *sqlNode) ([]uint64, error) {
	var terms []*sqlNode
	var split func(*sqlNode)
	split = func(n *sqlNode) {
		if n.kind == sqlBinary && n.op == sqlAnd {
			split(n.args[0])
			split(n.args[1])
			return
		}
		terms = append(terms, n)
	}
	split(root)
	rows := onesBitmap(m.n)
	for _, t := range terms {
		if !t.fixed {
			continue
		}
		v, ok := m.cache[t]
		if !ok {
			one := &machine{n: 1, scalar: true, prog: m.prog, cache: map[*sqlNode]vec{}}
			var err error
			if v, err = one.cond(t, nil, false, true); err != nil {
				return nil, err
			}
		}
		if x := v.at(0); x.cls == clsNull || !x.truth() {
			return make([]uint64, words(m.n)), nil
		}
	}
	for _, t := range terms {
		if t.fixed {
			continue
		}
		v, err := m.cond(t, rows, false, true)
		if err != nil {
			return nil, err
		}
		tr, _ := m.bools(v)
		for w := range rows {
			rows[w] &= tr[w]
		}
	}
	return rows, nil
}

// bools returns the TRUE and FALSE rows of v (for every row of the batch):
// a boolean's bitmaps, or the truth of other values as SQLite tests them.
// The results may be shared and must not be modified.
func (m *machine) bools(v vec) (t, f []uint64) {
	nw := words(m.n)
	switch {
	case v.cls == clsNull:
		return make([]uint64, nw), make([]uint64, nw)
	case v.konst:
		t, f = make([]uint64, nw), make([]uint64, nw)
		if x := v.at(0); x.cls != clsNull {
			if x.truth() {
				copy(t, onesBitmap(m.n))
			} else {
				copy(f, onesBitmap(m.n))
			}
		}
		return t, f
	case v.cls == clsBool:
		return v.tru, v.fal
	}
	t, f = make([]uint64, nw), make([]uint64, nw)
	for i := range m.n {
		if x := v.at(i); x.cls != clsNull {
			if x.truth() {
				set(t, i)
			} else {
				set(f, i)
			}
		}
	}
	return t, f
}

// not returns NOT v.
func (m *machine) not(v vec) vec {
	if v.cls == clsNull {
		return v
	}
	t, f := m.bools(v)
	return boolVec(f, t)
}

// logic returns a AND b (and set) or a OR b in three-valued logic, both
// evaluated on every row.
func (m *machine) logic(and bool, a, b vec) vec {
	ta, fa := m.bools(a)
	tb, fb := m.bools(b)
	t, f := make([]uint64, len(ta)), make([]uint64, len(ta))
	for w := range t {
		if and {
			t[w], f[w] = ta[w]&tb[w], fa[w]|fb[w]
		} else {
			t[w], f[w] = ta[w]|tb[w], fa[w]&fb[w]
		}
	}
	return boolVec(t, f)
}

// test returns v IS [NOT] NULL or v IS [NOT] TRUE/FALSE, which are never
// NULL.
func (m *machine) test(op sqlOp, v vec) vec {
	var hit []uint64
	switch op {
	case sqlIsNull, sqlNotNull:
		valid := v.validBits(m.n)
		if valid == nil {
			valid = onesBitmap(m.n)
		}
		hit = valid
		if op == sqlIsNull {
			hit = andNot(m.n, nil, valid)
		}
	case sqlIsTrue, sqlIsNotFalse:
		t, f := m.bools(v)
		hit = t
		if op == sqlIsNotFalse {
			hit = andNot(m.n, nil, f)
		}
	default:
		t, f := m.bools(v)
		hit = f
		if op == sqlIsNotTrue {
			hit = andNot(m.n, nil, t)
		}
	}
	return boolVec(hit, andNot(m.n, nil, hit))
}

func orBits(a, b []uint64) []uint64 {
	out := make([]uint64, len(a))
	for w := range out {
		out[w] = a[w] | b[w]
	}
	return out
}

// between returns x [NOT] BETWEEN lo AND hi, which SQLite computes as
// x >= lo AND x <= hi with x computed once: as a value (j nil) or, as a
// condition, with hi evaluated only where x >= lo does not decide.
func (m *machine) between(n *sqlNode, mask []uint64, j *jump) (vec, error) {
	x, err := m.eval(n.args[0], mask)
	if err != nil {
		return vec{}, err
	}
	lo, err := m.eval(n.args[1], mask)
	if err != nil {
		return vec{}, err
	}
	ge := m.compare(sqlGe, x, lo)
	rest := mask
	if j != nil {
		// The AND is tested with jumps inverted by NOT BETWEEN's NOT.
		ifTrue, jumpNull := j.ifTrue != n.not, j.jumpNull
		firstNull := jumpNull
		if ifTrue {
			firstNull = !jumpNull
		}
		t, f := m.bools(ge)
		rest = andNot(m.n, mask, f)
		if firstNull {
			rest = andNot(m.n, rest, andNot(m.n, nil, orBits(t, f)))
		}
	}
	hi, err := m.eval(n.args[2], rest)
	if err != nil {
		return vec{}, err
	}
	r := m.logic(true, ge, m.compare(sqlLe, x, hi))
	if n.not {
		return m.not(r), nil
	}
	return r, nil
}

// caseValue returns the value of CASE on the rows of mask: each WHEN is
// evaluated on the rows no earlier WHEN took, each THEN on the rows its
// WHEN took and ELSE on the rest. With an operand, a WHEN takes the rows
// where the operand = it; without, where it is TRUE as a condition.
func (m *machine) caseValue(n *sqlNode, mask []uint64) (vec, error) {
	operand, whens, thens, els := n.caseParts()
	var x vec
	if operand != nil {
		var err error
		if x, err = m.eval(operand, mask); err != nil {
			return vec{}, err
		}
	}
	left := mask
	if left == nil {
		left = onesBitmap(m.n)
	} else {
		left = append([]uint64(nil), left...)
	}
	var takes [][]uint64
	var results []vec
	for i, w := range whens {
		var c vec
		var err error
		if operand != nil {
			var wv vec
			if wv, err = m.eval(w, left); err == nil {
				c = m.compare(sqlEq, x, wv)
			}
		} else {
			c, err = m.cond(w, left, false, true)
		}
		if err != nil {
			return vec{}, err
		}
		t, _ := m.bools(c)
		take := andBitmaps(m.n, left, t)
		for k := range left {
			left[k] &^= take[k]
		}
		r, err := m.eval(thens[i], take)
		if err != nil {
			return vec{}, err
		}
		takes, results = append(takes, take), append(results, r)
	}
	if els != nil {
		r, err := m.eval(els, left)
		if err != nil {
			return vec{}, err
		}
		takes, results = append(takes, left), append(results, r)
	}
	return m.pick(takes, results), nil
}

// pick returns the vec whose row i is row i of vals[j] for the j whose
// takes[j] has bit i (the takes are disjoint), and NULL where none has it.
func (m *machine) pick(takes [][]uint64, vals []vec) vec {
	cls := clsNull
	same := true
	for _, v := range vals {
		switch {
		case v.cls == clsNull:
		case cls == clsNull:
			cls = v.cls
		case v.cls != cls:
			same = false
		}
		same = same && v.over == nil && v.cls != clsAny && v.cls != clsOpaque
	}
	if !same {
		b := newBuilder(m.n)
		for j, v := range vals {
			forEach(m.n, takes[j], func(i int) error {
				b.put(i, v.at(i))
				return nil
			})
		}
		return b.vec()
	}
	nw := words(m.n)
	out := vec{cls: cls}
	switch cls {
	case clsNull:
		return nullVec
	case clsBool:
		out.tru, out.fal = make([]uint64, nw), make([]uint64, nw)
	case clsInt:
		out.ints = make([]int64, m.n)
	case clsFloat:
		out.flts = make([]float64, m.n)
	default:
		out.txt.strs = make([]string, m.n)
	}
	valid := make([]uint64, nw)
	for j, v := range vals {
		if v.cls == clsNull {
			continue
		}
		if cls == clsBool {
			vt, vf := m.bools(v)
			for w := range valid {
				out.tru[w] |= takes[j][w] & vt[w]
				out.fal[w] |= takes[j][w] & vf[w]
			}
			continue
		}
		vv := v.validBits(m.n)
		for w := range valid {
			take := takes[j][w]
			if vv != nil {
				take &= vv[w]
			}
			valid[w] |= take
			for ; take != 0; take &= take - 1 {
				i := w*64 + trailingZeros(take)
				k := v.idx(i)
				switch cls {
				case clsInt:
					out.ints[i] = v.ints[k]
				case clsFloat:
					out.flts[i] = v.flts[k]
				default:
					out.txt.strs[i] = v.txt.at(k)
				}
			}
		}
	}
	if cls != clsBool {
		out.valid = valid
	}
	return out
}

// coalesce returns the first non-NULL argument: SQLite evaluates each
// argument only on the rows where all earlier ones are NULL.
func (m *machine) coalesce(n *sqlNode, mask []uint64) (vec, error) {
	left := mask
	var takes [][]uint64
	var vals []vec
	for _, a := range n.args {
		if empty(m.n, left) && len(vals) > 0 {
			break
		}
		v, err := m.eval(a, left)
		if err != nil {
			return vec{}, err
		}
		valid := v.validBits(m.n)
		take := andBitmaps(m.n, left, valid)
		if take == nil {
			take = onesBitmap(m.n)
		}
		takes, vals = append(takes, take), append(vals, v)
		left = andNot(m.n, left, take)
	}
	if len(vals) == 1 {
		return vals[0], nil
	}
	return m.pick(takes, vals), nil
}
