package expr

// caseExpr compiles CASE. With an operand, the operand and the WHEN values
// are converted to their common type and SQLite's CASE x WHEN form compares
// them, so the operand is evaluated once. It returns a code-13 error for
// non-boolean conditions or results of types that do not mix.
func (c *compiler) caseExpr(e *caseExpr) (frag, error) {
	var whens []frag
	var operand *sqlNode
	var err error
	if e.operand != nil {
		if whens, err = c.all(append([]Expr{e.operand}, e.whens...)); err != nil {
			return frag{}, err
		}
		if whens, err = forCompare(whens); err != nil {
			return frag{}, err
		}
		operand, whens = whens[0].n, whens[1:]
	} else {
		for _, w := range e.whens {
			f, err := c.boolean(w, "WHEN condition")
			if err != nil {
				return frag{}, err
			}
			whens = append(whens, f)
		}
	}
	results, err := c.all(append(append([]Expr{}, e.thens...), nonNil(e.elseExpr)...))
	if err != nil {
		return frag{}, err
	}
	d, results, err := combine(results)
	if err != nil {
		return frag{}, err
	}
	var els *sqlNode
	if e.elseExpr != nil {
		els = results[len(results)-1].n
	}
	return frag{n: caseNode(operand, nodes(whens), nodes(results[:len(whens)]), els), typ: d}, nil
}

// combine converts values that one expression may return (CASE branches,
// coalesce arguments, array elements) to their common type. It returns a
// code-13 error when the types do not mix.
func combine(fs []frag) (Type, []frag, error) {
	d, fs, err := domain(fs, "combine")
	if err != nil {
		return Type{}, nil, err
	}
	out := make([]frag, len(fs))
	for i, f := range fs {
		if out[i], err = convert(f, d); err != nil {
			return Type{}, nil, err
		}
	}
	return d, out, nil
}
