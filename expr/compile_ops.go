package expr

// compareOps maps comparison operators of the AST to their SQL operators.
var compareOps = map[string]sqlOp{
	"=": sqlEq, "<>": sqlNe, "<": sqlLt, "<=": sqlLe, ">": sqlGt, ">=": sqlGe,
	"IS DISTINCT FROM": sqlIsNot, "IS NOT DISTINCT FROM": sqlIs,
}

// arithOps maps arithmetic operators of the AST to their SQL operators.
var arithOps = map[string]sqlOp{"+": sqlAdd, "-": sqlSub, "*": sqlMul, "/": sqlDiv, "%": sqlRem}

// unary compiles NOT, unary minus and unary plus. It returns a code-13 error
// for an operand of the wrong type.
func (c *compiler) unary(e *unary) (frag, error) {
	if e.op == "NOT" {
		x, err := c.boolean(e.x, "operand of NOT")
		if err != nil {
			return frag{}, err
		}
		return frag{n: unaryNode(sqlNot, x.n), typ: boolType}, nil
	}
	x, err := c.compile(e.x)
	if err != nil {
		return frag{}, err
	}
	k := x.typ.Kind
	switch {
	case k != KindNull && !isNumber(k) && k != KindDuration:
		return frag{}, invalid("cannot apply unary %s to %s", e.op, x.typ)
	case e.op == "+":
		return x, nil
	case x.typ.textDecimal():
		x = realSQL(x, x.typ)
	}
	return frag{n: unaryNode(sqlNeg, x.n), typ: x.typ}, nil
}

// binary compiles comparisons, arithmetic and ||. It returns the first error
// of the operands, or a code-13 error when their types do not fit the
// operator.
func (c *compiler) binary(e *binary) (frag, error) {
	l, err := c.compile(e.l)
	if err != nil {
		return frag{}, err
	}
	r, err := c.compile(e.r)
	if err != nil {
		return frag{}, err
	}
	if op, ok := compareOps[e.op]; ok {
		return compare(op, l, r)
	}
	if e.op == "||" {
		return concatOp(l, r)
	}
	return arith(e.op, l, r)
}

// compare returns l op r after converting both to their common type. It
// returns a code-13 error when the types do not mix.
func compare(op sqlOp, l, r frag) (frag, error) {
	fs, err := forCompare([]frag{l, r})
	if err != nil {
		return frag{}, err
	}
	return frag{n: binaryNode(op, fs[0].n, fs[1].n), typ: boolType}, nil
}

// forCompare converts fragments to the common type they are compared in.
// Decimals stored as text compare as floats, since their text does not
// sort numerically; integers compared with floats are left alone, since
// SQLite compares them exactly. It returns a code-13 error when the types
// do not mix.
func forCompare(fs []frag) ([]frag, error) {
	d, fs, err := domain(fs, "compare")
	if err != nil {
		return nil, err
	}
	if d.textDecimal() {
		d = floatType
	}
	out := make([]frag, len(fs))
	for i, f := range fs {
		if d.Kind == KindFloat && f.typ.Kind == KindInt {
			out[i] = f
			continue
		}
		if out[i], err = convert(f, d); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// arith returns l op r for + - * / %: integers stay integers (division
// truncates), anything with a float or decimal computes in float64. It
// returns a code-13 error for non-numeric operands.
func arith(op string, l, r frag) (frag, error) {
	for _, f := range []frag{l, r} {
		if f.typ.Kind != KindNull && !isNumber(f.typ.Kind) {
			return frag{}, invalid("cannot apply %s to %s and %s", op, l.typ, r.typ)
		}
	}
	t := intType
	switch {
	case l.typ.Kind == KindNull && r.typ.Kind == KindNull:
		t = Type{}
	case l.typ.Kind == KindFloat || r.typ.Kind == KindFloat ||
		l.typ.Kind == KindDecimal || r.typ.Kind == KindDecimal:
		t = floatType
		var err error
		if l, err = asFloat(l); err != nil {
			return frag{}, err
		}
		if r, err = asFloat(r); err != nil {
			return frag{}, err
		}
	}
	if op == "%" && t.Kind == KindFloat {
		return callSQL(t, "mod", l, r), nil
	}
	return frag{n: binaryNode(arithOps[op], l.n, r.n), typ: t}, nil
}

// asFloat returns a decimal fragment as a float, and others unchanged. It
// returns a code-13 error for a malformed decimal constant.
func asFloat(f frag) (frag, error) {
	if f.typ.Kind != KindDecimal {
		return f, nil
	}
	return convert(f, floatType)
}

// concatOp returns l || r, rendering non-string operands as text. It returns
// a code-13 error for an operand that has no text form.
func concatOp(l, r frag) (frag, error) {
	fs, err := asStrings([]frag{l, r})
	if err != nil {
		return frag{}, err
	}
	return frag{n: binaryNode(sqlConcat, fs[0].n, fs[1].n), typ: stringType}, nil
}

// asStrings converts each fragment to a string (NULL stays NULL). It returns
// a code-13 error for a value that has no text form.
func asStrings(fs []frag) ([]frag, error) {
	out := make([]frag, len(fs))
	for i, f := range fs {
		var err error
		if out[i], err = convert(f, stringType); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// logical compiles an AND or OR chain, nesting the terms as a balanced tree
// so that the depth of the evaluator's recursion (and of SQLite's
// expression) grows with the logarithm of the chain's length. It returns a
// code-13 error for a non-boolean term.
func (c *compiler) logical(e *logical) (frag, error) {
	op, name := sqlOr, "OR"
	if e.and {
		op, name = sqlAnd, "AND"
	}
	terms := make([]frag, len(e.terms))
	for i, t := range e.terms {
		var err error
		if terms[i], err = c.boolean(t, "operand of "+name); err != nil {
			return frag{}, err
		}
	}
	return frag{n: balanced(op, nodes(terms)), typ: boolType}, nil
}

func balanced(op sqlOp, ns []*sqlNode) *sqlNode {
	if len(ns) == 1 {
		return ns[0]
	}
	mid := len(ns) / 2
	return binaryNode(op, balanced(op, ns[:mid]), balanced(op, ns[mid:]))
}
