package expr

import "strings"

// primary parses a literal, field path, function call, CAST, CASE, array or
// parenthesised expression. It returns the first syntax error.
func (p *parser) primary() (Expr, error) {
	t := p.peek()
	switch t.kind {
	case tNumber:
		return p.number(p.next(), false)
	case tString:
		p.next()
		return &literal{node: node{pos: t.pos, h: 1}, typ: Type{Kind: KindString}, val: konst{v: t.text}}, nil
	case tQuoted:
		return p.path()
	case tOp:
		switch t.text {
		case "(":
			p.next()
			e, err := p.expr()
			if err != nil {
				return nil, err
			}
			return e, p.expect(")")
		case "[":
			p.next()
			return p.array(t.pos, "]")
		}
		return nil, p.unexpected(t)
	case tIdent:
		return p.word(t)
	}
	return nil, p.unexpected(t)
}

// word parses what starts with a bare word: a keyword literal, a typed
// literal, CAST, CASE, a function call or a field path. It returns the first
// syntax error, or one for a reserved word.
func (p *parser) word(t token) (Expr, error) {
	lower := strings.ToLower(t.text)
	lit := &literal{node: node{pos: t.pos, h: 1}}
	switch {
	case lower == "null":
		p.next()
		return lit, nil
	case lower == "true" || lower == "false":
		p.next()
		lit.typ, lit.val = Type{Kind: KindBool}, konst{v: boolInt(lower == "true")}
		return lit, nil
	case lower == "case":
		p.next()
		return p.caseExpr(t.pos)
	case p.peekAt(1).kind == tString && (lower == "date" || lower == "timestamp" || lower == "time"):
		p.next()
		return p.typedLiteral(lower, p.next())
	case reserved[lower]:
		return nil, p.unexpected(t)
	case p.peekAt(1).is("("):
		p.next()
		p.next()
		return p.call(lower, t.pos)
	}
	return p.path()
}

// typedLiteral parses the string s of DATE 's', TIMESTAMP 's' or TIME 's'. A
// timestamp has nanosecond unit, or microseconds when out of that range. It
// returns a syntax error for malformed text.
func (p *parser) typedLiteral(kind string, s token) (Expr, error) {
	lit := &literal{node: node{pos: s.pos, h: 1}}
	var err error
	switch kind {
	case "date":
		var days int64
		days, err = parseDate(s.text)
		lit.typ, lit.val = Type{Kind: KindDate32}, konst{v: days}
	case "time":
		var nanos int64
		nanos, err = parseTime(s.text)
		lit.typ, lit.val = Type{Kind: KindTime, Unit: Nano}, konst{v: nanos}
	default:
		lit.typ, lit.val, err = timestampLiteral(s.text)
	}
	if err != nil {
		return nil, syntaxErr(s.pos, "invalid %s literal", strings.ToUpper(kind))
	}
	return lit, nil
}

// path parses segment(.segment)*, where a segment is a bare word or a quoted
// identifier. It returns a syntax error when a segment is missing.
func (p *parser) path() (Expr, error) {
	pos := p.peek().pos
	var segs []string
	for {
		t := p.next()
		if t.kind != tIdent && t.kind != tQuoted {
			return nil, p.unexpected(t)
		}
		segs = append(segs, t.text)
		if !p.accept(".") {
			return &field{node: node{pos: pos, h: 1}, path: segs}, nil
		}
	}
}

// call parses the arguments of a function after "name(". CAST, substring
// FROM/FOR and make_array have their own syntax or node. It returns the
// first syntax error.
func (p *parser) call(name string, pos int) (Expr, error) {
	switch name {
	case "cast":
		return p.castCall(pos)
	case "make_array", "make_list":
		return p.array(pos, ")")
	}
	var args []Expr
	var err error
	if name == "substring" || name == "substr" {
		args, err = p.substringArgs()
	} else {
		args, err = p.list(")")
	}
	if err != nil {
		return nil, err
	}
	return mk(&call{name: name, args: args}, pos)
}

// substringArgs parses "s, start[, len])" or "s FROM start [FOR len])". It
// returns the first syntax error.
func (p *parser) substringArgs() ([]Expr, error) {
	s, err := p.expr()
	if err != nil {
		return nil, err
	}
	if !p.accept("from") {
		if p.accept(")") {
			return []Expr{s}, nil
		}
		if err := p.expect(","); err != nil {
			return nil, err
		}
		rest, err := p.list(")")
		return append([]Expr{s}, rest...), err
	}
	start, err := p.expr()
	if err != nil {
		return nil, err
	}
	args := []Expr{s, start}
	if p.accept("for") {
		n, err := p.expr()
		if err != nil {
			return nil, err
		}
		args = append(args, n)
	}
	return args, p.expect(")")
}

// castCall parses "x AS type)" after "CAST(". It returns the first syntax
// error.
func (p *parser) castCall(pos int) (Expr, error) {
	x, err := p.expr()
	if err != nil {
		return nil, err
	}
	if err := p.expect("as"); err != nil {
		return nil, err
	}
	to, err := p.typeName()
	if err != nil {
		return nil, err
	}
	if err := p.expect(")"); err != nil {
		return nil, err
	}
	return mk(&cast{x: x, to: to}, pos)
}

// array parses the elements of [a, b] or make_array(a, b) up to closing. It
// returns the first syntax error.
func (p *parser) array(pos int, closing string) (Expr, error) {
	elems, err := p.list(closing)
	if err != nil {
		return nil, err
	}
	return mk(&array{elems: elems}, pos)
}

// caseExpr parses the rest of CASE [operand] WHEN ... THEN ... [ELSE ...]
// END. It returns a syntax error when no WHEN or the END is missing.
func (p *parser) caseExpr(pos int) (Expr, error) {
	n := &caseExpr{}
	var err error
	if !p.peek().is("when") {
		if n.operand, err = p.expr(); err != nil {
			return nil, err
		}
	}
	for p.accept("when") {
		w, err := p.expr()
		if err != nil {
			return nil, err
		}
		if err := p.expect("then"); err != nil {
			return nil, err
		}
		t, err := p.expr()
		if err != nil {
			return nil, err
		}
		n.whens, n.thens = append(n.whens, w), append(n.thens, t)
	}
	if len(n.whens) == 0 {
		return nil, syntaxErr(p.peek().pos, "CASE needs at least one WHEN")
	}
	if p.accept("else") {
		if n.elseExpr, err = p.expr(); err != nil {
			return nil, err
		}
	}
	if err := p.expect("end"); err != nil {
		return nil, err
	}
	return mk(n, pos)
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
