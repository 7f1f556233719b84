package expr

import (
	"errors"

	"github.com/lancens/lancens/store"
)

var (
	boolType   = Type{Kind: KindBool}
	stringType = Type{Kind: KindString}
	floatType  = Type{Kind: KindFloat}
	intType    = Type{Kind: KindInt}
)

// compiler compiles one expression against a resolver into the tree of
// SQL constructs (sqlnode.go) that the evaluator runs.
type compiler struct {
	r   resolver
	err error // the first error, once located
}

// resolver maps a field path (split into segments, quoting removed) to the
// type of the column it reads. It returns an error for unknown paths,
// which the compiler returns unchanged.
type resolver interface {
	resolve(path []string) (Type, error)
}

// compileValue compiles e. Type errors (such as adding a number to a
// string, an unknown function or a wrong argument count) return a
// *store.Error with code store.CodeInvalidInput; an error of the resolver
// is returned unchanged.
func compileValue(e Expr, r resolver) (frag, error) {
	if e == nil {
		return frag{}, invalid("empty expression")
	}
	return (&compiler{r: r}).compile(e)
}

// compileFilter compiles e like compileValue and checks that it is boolean
// (or NULL); otherwise it returns a code-13 error.
func compileFilter(e Expr, r resolver) (frag, error) {
	f, err := compileValue(e, r)
	if err == nil && f.typ.Kind != KindBool && f.typ.Kind != KindNull {
		return frag{}, invalid("filter must be a boolean expression, not %s", f.typ)
	}
	return f, err
}

// compile compiles one node. The first invalid-input error gets the
// position of the innermost node that failed; errors of the resolver are
// returned unchanged.
func (c *compiler) compile(e Expr) (frag, error) {
	f, err := c.node(e)
	if err == nil || c.err != nil {
		return f, err
	}
	var se *store.Error
	if _, isField := e.(*field); !isField && errors.As(err, &se) && se.Code == store.CodeInvalidInput {
		err = store.Errorf(se.Code, "%s at position %d", se.Message, e.position())
	}
	c.err = err
	return f, err
}

// node compiles one node by its kind. It returns the first error of the node
// or its children.
func (c *compiler) node(e Expr) (frag, error) {
	switch e := e.(type) {
	case *literal:
		return constant(e.typ, e.val), nil
	case *field:
		typ, err := c.r.resolve(e.path)
		if err != nil {
			return frag{}, err
		}
		return frag{n: columnNode(e.path), typ: typ}, nil
	case *unary:
		return c.unary(e)
	case *binary:
		return c.binary(e)
	case *logical:
		return c.logical(e)
	case *isNull:
		return c.isNull(e)
	case *isBool:
		return c.isBool(e)
	case *inList:
		return c.in(e)
	case *between:
		return c.between(e)
	case *like:
		return c.like(e)
	case *cast:
		x, err := c.compile(e.x)
		if err != nil {
			return frag{}, err
		}
		return convert(x, e.to)
	case *call:
		return c.call(e)
	case *caseExpr:
		return c.caseExpr(e)
	case *array:
		return c.array(e)
	}
	return frag{}, invalid("unsupported expression")
}

// all compiles each of es. It returns the first error.
func (c *compiler) all(es []Expr) ([]frag, error) {
	out := make([]frag, len(es))
	for i, e := range es {
		var err error
		if out[i], err = c.compile(e); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// boolean compiles e and checks that it is boolean or NULL; what names the
// operand in the error.
func (c *compiler) boolean(e Expr, what string) (frag, error) {
	f, err := c.compile(e)
	if err == nil && f.typ.Kind != KindBool && f.typ.Kind != KindNull {
		return frag{}, invalid("%s must be boolean, not %s", what, f.typ)
	}
	return f, err
}
