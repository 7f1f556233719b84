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

// compiler compiles one expression against a resolver.
type compiler struct {
	r   Resolver
	err error // the first error, once located
}

// Compile compiles e to a SQLite expression. Type errors (such as adding a
// number to a string, an unknown function or a wrong argument count) return
// a *store.Error with code store.CodeInvalidInput; an error of the resolver
// is returned unchanged.
func Compile(e Expr, r Resolver) (Compiled, error) {
	if e == nil {
		return Compiled{}, invalid("empty expression")
	}
	f, err := (&compiler{r: r}).compile(e)
	if err != nil {
		return Compiled{}, err
	}
	return compiled(f), nil
}

// compiled returns the SQL of f.
func compiled(f frag) Compiled {
	sql, args := sqlText(f.n)
	return Compiled{SQL: sql, Args: args, Type: f.typ, root: f.n}
}

// CompileFilter compiles e like Compile and checks that it is boolean (or
// NULL); otherwise it returns a code-13 error.
func CompileFilter(e Expr, r Resolver) (Compiled, error) {
	c, err := Compile(e, r)
	if err == nil && c.Type.Kind != KindBool && c.Type.Kind != KindNull {
		return Compiled{}, invalid("filter must be a boolean expression, not %s", c.Type)
	}
	return c, err
}

// CompileAs compiles e like Compile and converts the value to type t as
// CAST would (for update values and new columns: a string becomes a
// timestamp of t's unit, a number a decimal of t's scale). It returns a
// code-13 error when the value cannot be converted.
func CompileAs(e Expr, r Resolver, t Type) (Compiled, error) {
	if e == nil {
		return Compiled{}, invalid("empty expression")
	}
	c := &compiler{r: r}
	f, err := c.compile(e)
	if err != nil {
		return Compiled{}, err
	}
	if f, err = convert(f, t); err != nil {
		return Compiled{}, err
	}
	return compiled(f), nil
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
		col, err := c.r.Resolve(e.path)
		if err != nil {
			return frag{}, err
		}
		return frag{n: columnNode(col.SQL, e.path), typ: col.Type}, nil
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
