package expr

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
)

// isNull compiles x IS [NOT] NULL, which works on values of any type. It
// returns the error of compiling x.
func (c *compiler) isNull(e *isNull) (frag, error) {
	x, err := c.compile(e.x)
	if err != nil {
		return frag{}, err
	}
	op := sqlIsNull
	if e.not {
		op = sqlNotNull
	}
	return frag{n: testNode(op, x.n), typ: boolType}, nil
}

// isBool compiles x IS [NOT] TRUE/FALSE, which is never NULL. It returns a
// code-13 error for a non-boolean x.
func (c *compiler) isBool(e *isBool) (frag, error) {
	x, err := c.boolean(e.x, "operand of IS TRUE/FALSE")
	if err != nil {
		return frag{}, err
	}
	op := map[[2]bool]sqlOp{
		{true, false}: sqlIsTrue, {true, true}: sqlIsNotTrue,
		{false, false}: sqlIsFalse, {false, true}: sqlIsNotFalse,
	}[[2]bool{e.value, e.not}]
	return frag{n: testNode(op, x.n), typ: boolType}, nil
}

// in compiles x [NOT] IN (list). It returns a code-13 error when the types
// do not mix.
func (c *compiler) in(e *inList) (frag, error) {
	fs, err := c.all(append([]Expr{e.x}, e.list...))
	if err != nil {
		return frag{}, err
	}
	if fs, err = forCompare(fs); err != nil {
		return frag{}, err
	}
	n := &sqlNode{kind: sqlIn, not: e.not, args: []*sqlNode{fs[0].n}}
	if len(fs)-1 > maxInlineIn {
		if list, ok := jsonList(fs[1:]); ok {
			n.v = list
			return frag{n: n, typ: boolType}, nil
		}
	}
	n.args = append(n.args, nodes(fs[1:])...)
	return frag{n: n, typ: boolType}, nil
}

// maxInlineIn is the longest IN list compiled to one node per value;
// longer lists of constants are one JSON array, whose SQL binds one
// argument however long the list (SQLite limits the placeholders).
const maxInlineIn = 256

// jsonList returns constants as a JSON array that json_each reads back as
// the same SQLite values; ok is false when one is not a constant or is a
// blob or a non-finite float.
func jsonList(fs []frag) (string, bool) {
	var b strings.Builder
	b.WriteByte('[')
	for i, f := range fs {
		if i > 0 {
			b.WriteByte(',')
		}
		if f.k == nil {
			return "", false
		}
		switch v := f.k.v.(type) {
		case nil:
			b.WriteString("null")
		case int64:
			b.WriteString(strconv.FormatInt(v, 10))
		case float64:
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return "", false
			}
			b.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
		case string:
			s, _ := json.Marshal(v)
			b.Write(s)
		default:
			return "", false
		}
	}
	b.WriteByte(']')
	return b.String(), true
}

// between compiles x [NOT] BETWEEN lo AND hi. It returns a code-13 error
// when the types do not mix.
func (c *compiler) between(e *between) (frag, error) {
	fs, err := c.all([]Expr{e.x, e.lo, e.hi})
	if err != nil {
		return frag{}, err
	}
	if fs, err = forCompare(fs); err != nil {
		return frag{}, err
	}
	return frag{n: &sqlNode{kind: sqlBetween, not: e.not, args: nodes(fs)}, typ: boolType}, nil
}

// like compiles [NOT] LIKE/ILIKE with the registered matchers; the escape
// character defaults to backslash. It returns a code-13 error for non-string
// operands or a bad ESCAPE.
func (c *compiler) like(e *like) (frag, error) {
	fs, err := c.all([]Expr{e.x, e.pattern})
	if err != nil {
		return frag{}, err
	}
	for _, f := range fs {
		if f.typ.Kind != KindString && f.typ.Kind != KindNull {
			return frag{}, invalid("LIKE needs string operands, not %s", f.typ)
		}
	}
	esc := `\`
	if e.esc != nil {
		f, err := c.compile(e.esc)
		if err != nil {
			return frag{}, err
		}
		s, ok := "", f.k != nil && f.typ.Kind == KindString
		if ok {
			s = f.k.v.(string)
		}
		if !ok || len([]rune(s)) != 1 {
			return frag{}, invalid("ESCAPE must be a single-character string literal")
		}
		esc = s
	}
	name := "lance_like"
	if e.fold {
		name = "lance_ilike"
	}
	m := callSQL(boolType, name, fs[0], fs[1], arg(esc))
	if e.not {
		return frag{n: unaryNode(sqlNot, m.n), typ: boolType}, nil
	}
	return m, nil
}
