package expr

import "math/big"

// Expr is a parsed expression. Its nodes are produced by Parse only.
type Expr interface {
	// position returns the 1-based source position of the node.
	position() int
	// height returns the depth of the tree rooted at the node.
	height() int
	// children returns the sub-expressions, in source order.
	children() []Expr
}

// node holds what every expression has.
type node struct {
	pos int
	h   int
}

func (n node) position() int { return n.pos }
func (n node) height() int   { return n.h }

// literal is a constant. val is its storage value (see konst).
type literal struct {
	node
	typ Type
	val konst
}

// field is a column reference.
type field struct {
	node
	path []string
}

// unary is NOT, unary minus or unary plus (op "NOT", "-", "+").
type unary struct {
	node
	op string
	x  Expr
}

// binary is an arithmetic, comparison or concatenation operator, or IS
// [NOT] DISTINCT FROM (op "IS DISTINCT FROM" / "IS NOT DISTINCT FROM").
type binary struct {
	node
	op   string
	l, r Expr
}

// logical is a chain of terms joined by one of AND and OR.
type logical struct {
	node
	and   bool
	terms []Expr
}

// isNull is x IS [NOT] NULL.
type isNull struct {
	node
	x   Expr
	not bool
}

// isBool is x IS [NOT] TRUE/FALSE.
type isBool struct {
	node
	x     Expr
	value bool
	not   bool
}

// inList is x [NOT] IN (list).
type inList struct {
	node
	x    Expr
	list []Expr
	not  bool
}

// between is x [NOT] BETWEEN lo AND hi.
type between struct {
	node
	x, lo, hi Expr
	not       bool
}

// like is x [NOT] LIKE/ILIKE pattern [ESCAPE esc]; esc is nil when absent.
type like struct {
	node
	x, pattern, esc Expr
	fold            bool // ILIKE
	not             bool
}

// cast is CAST(x AS to) or x::to.
type cast struct {
	node
	x  Expr
	to Type
}

// call is a function call; name is lower-cased.
type call struct {
	node
	name string
	args []Expr
}

// caseExpr is CASE [operand] WHEN ... THEN ... [ELSE ...] END; operand and
// elseExpr are nil when absent.
type caseExpr struct {
	node
	operand  Expr
	whens    []Expr
	thens    []Expr
	elseExpr Expr
}

// array is [a, b, ...] or make_array(a, b, ...).
type array struct {
	node
	elems []Expr
}

func (*literal) children() []Expr  { return nil }
func (*field) children() []Expr    { return nil }
func (e *unary) children() []Expr  { return []Expr{e.x} }
func (e *binary) children() []Expr { return []Expr{e.l, e.r} }
func (e *logical) children() []Expr {
	return e.terms
}
func (e *isNull) children() []Expr { return []Expr{e.x} }
func (e *isBool) children() []Expr { return []Expr{e.x} }
func (e *inList) children() []Expr {
	return append([]Expr{e.x}, e.list...)
}
func (e *between) children() []Expr { return []Expr{e.x, e.lo, e.hi} }
func (e *like) children() []Expr {
	return nonNil(e.x, e.pattern, e.esc)
}
func (e *cast) children() []Expr  { return []Expr{e.x} }
func (e *call) children() []Expr  { return e.args }
func (e *array) children() []Expr { return e.elems }
func (e *caseExpr) children() []Expr {
	out := nonNil(e.operand)
	for i := range e.whens {
		out = append(out, e.whens[i], e.thens[i])
	}
	return append(out, nonNil(e.elseExpr)...)
}

// nonNil returns the non-nil expressions of es.
func nonNil(es ...Expr) []Expr {
	out := make([]Expr, 0, len(es))
	for _, e := range es {
		if e != nil {
			out = append(out, e)
		}
	}
	return out
}

// konst is a constant's storage value: nil, int64 (also for booleans and
// temporal kinds), float64, string or []byte. rat is the exact value of a
// numeric literal written with a fraction or exponent, or nil.
type konst struct {
	v   any
	rat *big.Rat
}
