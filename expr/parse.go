package expr

import (
	"strings"
)

// reserved are the keywords that cannot be bare field names; quote them
// (`end`) to use them as such.
var reserved = map[string]bool{
	"and": true, "or": true, "not": true, "is": true, "null": true, "true": true,
	"false": true, "in": true, "between": true, "like": true, "ilike": true,
	"escape": true, "case": true, "when": true, "then": true, "else": true,
	"end": true, "as": true,
}

// parser is a recursive-descent parser over the tokens of a lexer, which
// it reads as it goes with at most two tokens of lookahead.
type parser struct {
	lex   *lexer
	ahead [2]token // the next tokens, read but not consumed
	n     int      // how many of ahead hold tokens
	err   error    // the lexer's error, once it has met one
	depth int
}

// Parse parses src. Bad syntax returns a *store.Error with code
// store.CodeInvalidInput whose message names the 1-based character position,
// e.g. "syntax error at position 7: unexpected ')'"; so does nesting deeper
// than 256 levels and an out-of-range literal. Parsing reads src token by
// token and stops at the first error: its memory grows with the tree, not
// with the length of src.
func Parse(src string) (Expr, error) {
	p := &parser{lex: newLexer(src)}
	e, err := p.expr()
	if err == nil {
		if t := p.peek(); t.kind != tEOF {
			err = p.unexpected(t)
		}
	}
	if p.err != nil {
		// The parser met the end of the tokens where the lexer failed.
		return nil, p.err
	}
	if err != nil {
		return nil, err
	}
	return e, nil
}

// fill reads tokens until k are ahead. A lexing error is kept (the first
// one) and reads as the end of input.
func (p *parser) fill(k int) {
	for p.n < k {
		t, err := p.lex.next()
		if err != nil && p.err == nil {
			p.err = err
		}
		p.ahead[p.n] = t
		p.n++
	}
}

func (p *parser) peek() token {
	p.fill(1)
	return p.ahead[0]
}

// peekAt returns the token n places ahead (n is 0 or 1; the end of input
// past the end).
func (p *parser) peekAt(n int) token {
	p.fill(n + 1)
	return p.ahead[n]
}

func (p *parser) next() token {
	t := p.peek()
	if t.kind != tEOF {
		p.ahead[0] = p.ahead[1]
		p.n--
	}
	return t
}

// accept consumes the next token if it is op and reports whether it did.
func (p *parser) accept(op string) bool {
	if p.peek().is(op) {
		p.next()
		return true
	}
	return false
}

// expect consumes op or returns a syntax error.
func (p *parser) expect(op string) error {
	if t := p.next(); !t.is(op) {
		return syntaxErr(t.pos, "expected %s, found %s", strings.ToUpper(op), t.describe())
	}
	return nil
}

// unexpected returns a syntax error at t naming it.
func (p *parser) unexpected(t token) error {
	return syntaxErr(t.pos, "unexpected %s", t.describe())
}

// enter counts one level of recursion and fails past maxDepth; the caller
// defers p.leave(). It returns a syntax error past the limit.
func (p *parser) enter() error {
	p.depth++
	if p.depth > maxDepth {
		return syntaxErr(p.peek().pos, "expression nested too deeply (limit %d)", maxDepth)
	}
	return nil
}

func (p *parser) leave() { p.depth-- }

// newNode is an expression under construction.
type newNode interface {
	Expr
	set(node)
}

func (n *node) set(v node) { *n = v }

// mk sets the position and height of a new node from its children and
// returns it, or an error when the tree would be too deep.
func mk(n newNode, pos int) (Expr, error) {
	h := 0
	for _, c := range n.children() {
		h = max(h, c.height())
	}
	if h+1 > maxDepth {
		return nil, syntaxErr(pos, "expression nested too deeply (limit %d)", maxDepth)
	}
	n.set(node{pos: pos, h: h + 1})
	return n, nil
}

// expr parses a full expression (an OR chain). It returns the first syntax
// error.
func (p *parser) expr() (Expr, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	return p.chain(false)
}

// chain parses terms joined by OR (and=false) or AND (and=true). It returns
// the first syntax error.
func (p *parser) chain(and bool) (Expr, error) {
	sub := func() (Expr, error) {
		if and {
			return p.not()
		}
		return p.chain(true)
	}
	op := "or"
	if and {
		op = "and"
	}
	first, err := sub()
	if err != nil || !p.peek().is(op) {
		return first, err
	}
	pos := p.peek().pos
	terms := []Expr{first}
	for p.accept(op) {
		t, err := sub()
		if err != nil {
			return nil, err
		}
		terms = append(terms, t)
	}
	n := &logical{and: and, terms: terms}
	return mk(n, pos)
}

// not parses NOT* predicate. It returns the first syntax error.
func (p *parser) not() (Expr, error) {
	if !p.peek().is("not") {
		return p.predicate()
	}
	pos := p.next().pos
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	x, err := p.not()
	if err != nil {
		return nil, err
	}
	n := &unary{op: "NOT", x: x}
	return mk(n, pos)
}
