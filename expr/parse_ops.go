package expr

import (
	"slices"
	"strconv"
	"strings"
)

// comparisons maps comparison operators to their canonical spelling.
var comparisons = map[string]string{
	"=": "=", "==": "=", "!=": "<>", "<>": "<>", "<": "<", "<=": "<=", ">": ">", ">=": ">=",
}

// predicate parses a concatenation followed by comparisons and IS, IN,
// BETWEEN, LIKE and ILIKE tests, applied left to right. It returns the first
// syntax error.
func (p *parser) predicate() (Expr, error) {
	x, err := p.concat()
	for err == nil {
		t := p.peek()
		if op, ok := comparisons[t.text]; ok && t.kind == tOp {
			p.next()
			var r Expr
			if r, err = p.concat(); err != nil {
				return nil, err
			}
			n := &binary{op: op, l: x, r: r}
			x, err = mk(n, t.pos)
			continue
		}
		not := t.is("not") && (p.peekAt(1).is("in") || p.peekAt(1).is("between") ||
			p.peekAt(1).is("like") || p.peekAt(1).is("ilike"))
		if not {
			p.next()
		}
		switch k := p.peek(); {
		case k.is("is") && !not:
			x, err = p.isTest(x)
		case k.is("in"):
			x, err = p.in(x, not)
		case k.is("between"):
			x, err = p.between(x, not)
		case k.is("like"), k.is("ilike"):
			x, err = p.like(x, not)
		default:
			return x, nil
		}
	}
	return nil, err
}

// isTest parses IS [NOT] (NULL | TRUE | FALSE | DISTINCT FROM y) after x. It
// returns a syntax error for anything else after IS.
func (p *parser) isTest(x Expr) (Expr, error) {
	pos := p.next().pos
	not := p.accept("not")
	t := p.next()
	switch {
	case t.is("null"):
		n := &isNull{x: x, not: not}
		return mk(n, pos)
	case t.is("true"), t.is("false"):
		n := &isBool{x: x, value: t.is("true"), not: not}
		return mk(n, pos)
	case t.is("distinct"):
		if err := p.expect("from"); err != nil {
			return nil, err
		}
		r, err := p.concat()
		if err != nil {
			return nil, err
		}
		op := "IS DISTINCT FROM"
		if not {
			op = "IS NOT DISTINCT FROM"
		}
		n := &binary{op: op, l: x, r: r}
		return mk(n, pos)
	}
	return nil, p.unexpected(t)
}

// in parses IN (list) after x. It returns a syntax error for a missing or
// empty list.
func (p *parser) in(x Expr, not bool) (Expr, error) {
	pos := p.next().pos
	if err := p.expect("("); err != nil {
		return nil, err
	}
	list, err := p.list(")")
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, syntaxErr(pos, "IN list is empty")
	}
	n := &inList{x: x, list: list, not: not}
	return mk(n, pos)
}

// between parses BETWEEN lo AND hi after x. It returns a syntax error when
// AND is missing.
func (p *parser) between(x Expr, not bool) (Expr, error) {
	pos := p.next().pos
	lo, err := p.concat()
	if err != nil {
		return nil, err
	}
	if err := p.expect("and"); err != nil {
		return nil, err
	}
	hi, err := p.concat()
	if err != nil {
		return nil, err
	}
	n := &between{x: x, lo: lo, hi: hi, not: not}
	return mk(n, pos)
}

// like parses LIKE/ILIKE pattern [ESCAPE esc] after x. It returns the first
// syntax error.
func (p *parser) like(x Expr, not bool) (Expr, error) {
	t := p.next()
	pat, err := p.concat()
	if err != nil {
		return nil, err
	}
	n := &like{x: x, pattern: pat, fold: t.is("ilike"), not: not}
	if p.accept("escape") {
		if n.esc, err = p.concat(); err != nil {
			return nil, err
		}
	}
	return mk(n, t.pos)
}

// binaryLevel parses operands joined by the given left-associative
// operators. It returns the first syntax error.
func (p *parser) binaryLevel(ops []string, operand func() (Expr, error)) (Expr, error) {
	x, err := operand()
	for err == nil {
		t := p.peek()
		if t.kind != tOp || !slices.Contains(ops, t.text) {
			return x, nil
		}
		p.next()
		var r Expr
		if r, err = operand(); err != nil {
			return nil, err
		}
		n := &binary{op: t.text, l: x, r: r}
		x, err = mk(n, t.pos)
	}
	return nil, err
}

// concat parses operands joined by ||; it returns the first syntax error.
func (p *parser) concat() (Expr, error) {
	return p.binaryLevel([]string{"||"}, p.additive)
}

// additive parses operands joined by + and -; it returns the first syntax
// error.
func (p *parser) additive() (Expr, error) {
	return p.binaryLevel([]string{"+", "-"}, p.multiplicative)
}

// multiplicative parses operands joined by *, / and %; it returns the first
// syntax error.
func (p *parser) multiplicative() (Expr, error) {
	return p.binaryLevel([]string{"*", "/", "%"}, p.unary)
}

// unary parses prefix minus and plus; a minus directly before a number makes
// a negative literal (so the smallest int64 can be written). It returns the
// first syntax error.
func (p *parser) unary() (Expr, error) {
	t := p.peek()
	if !t.is("-") && !t.is("+") {
		return p.postfix()
	}
	p.next()
	if t.is("-") && p.peek().kind == tNumber {
		lit, err := p.number(p.next(), true)
		if err != nil {
			return nil, err
		}
		return p.casts(lit)
	}
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	x, err := p.unary()
	if err != nil {
		return nil, err
	}
	n := &unary{op: t.text, x: x}
	return mk(n, t.pos)
}

// postfix parses a primary followed by any ::type casts. It returns the
// first syntax error.
func (p *parser) postfix() (Expr, error) {
	x, err := p.primary()
	if err != nil {
		return nil, err
	}
	return p.casts(x)
}

// casts applies trailing ::type casts to x. It returns a syntax error for an
// unknown type.
func (p *parser) casts(x Expr) (Expr, error) {
	for p.peek().is("::") {
		pos := p.next().pos
		to, err := p.typeName()
		if err != nil {
			return nil, err
		}
		n := &cast{x: x, to: to}
		if x, err = mk(n, pos); err != nil {
			return nil, err
		}
	}
	return x, nil
}

// list parses comma-separated expressions up to the closing token, which it
// consumes. It returns the first syntax error.
func (p *parser) list(closing string) ([]Expr, error) {
	var out []Expr
	if p.accept(closing) {
		return out, nil
	}
	for {
		e, err := p.expr()
		if err != nil {
			return nil, err
		}
		out = append(out, e)
		if p.accept(closing) {
			return out, nil
		}
		if err := p.expect(","); err != nil {
			return nil, err
		}
	}
}

// number makes a literal of a numeric token, negated when neg is set. It
// returns an error when the value is out of range.
func (p *parser) number(t token, neg bool) (Expr, error) {
	text := t.text
	if neg {
		text = "-" + text
	}
	n := &literal{node: node{pos: t.pos, h: 1}}
	if !strings.ContainsAny(text, ".eE") {
		v, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			return nil, syntaxErr(t.pos, "integer %s out of range", text)
		}
		n.typ, n.val = Type{Kind: KindInt}, konst{v: v}
		return n, nil
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil {
		return nil, syntaxErr(t.pos, "number %s out of range", text)
	}
	n.typ, n.val = Type{Kind: KindFloat}, konst{v: f}
	if r, err := parseDecimal(text); err == nil {
		n.val.rat = r
	}
	return n, nil
}
