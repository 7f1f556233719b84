package expr

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"strconv"
	"strings"
)

// array compiles [a, b, ...] and make_array(a, b, ...) to a JSON array of
// the elements converted to their common type. It returns a code-13 error
// when the elements do not mix.
func (c *compiler) array(e *array) (frag, error) {
	elems, err := c.all(e.elems)
	if err != nil {
		return frag{}, err
	}
	d, elems, err := combine(elems)
	if err != nil {
		return frag{}, err
	}
	return jsonArray(elems, d)
}

// jsonArray returns the JSON array of elems as a list of elem: built at
// compile time when every element is constant, else with json_array.
// Each element is rendered by its own type. It returns a code-13 error for
// non-finite floats and non-constant binary elements.
func jsonArray(elems []frag, elem Type) (frag, error) {
	t := Type{Kind: KindList, Elem: &elem}
	consts := true
	for _, e := range elems {
		consts = consts && e.k != nil
	}
	if consts {
		parts := make([]string, len(elems))
		for i, e := range elems {
			var err error
			if parts[i], err = jsonConst(e); err != nil {
				return frag{}, err
			}
		}
		return constant(t, konst{v: "[" + strings.Join(parts, ",") + "]"}), nil
	}
	for i, e := range elems {
		var err error
		if elems[i], err = jsonElem(e); err != nil {
			return frag{}, err
		}
	}
	return callSQL(t, "json_array", elems...), nil
}

// jsonConst renders a constant as a JSON value, in the server's list
// encoding: booleans as true/false, decimals as numbers, binary as base64.
// It returns a code-13 error for a non-finite float.
func jsonConst(e frag) (string, error) {
	v := e.k.v
	switch {
	case v == nil:
		return "null", nil
	case e.typ.Kind == KindBool:
		return strconv.FormatBool(v.(int64) != 0), nil
	case e.typ.Kind == KindFloat:
		f := v.(float64)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return "", invalid("a list cannot hold %v", f)
		}
		return strconv.FormatFloat(f, 'g', -1, 64), nil
	case e.typ.Kind == KindDecimal:
		return toText(v, e.typ)
	case e.typ.Kind == KindString:
		b, err := json.Marshal(v.(string))
		return string(b), err
	case e.typ.Kind == KindBinary:
		b, err := json.Marshal(base64.StdEncoding.EncodeToString(v.([]byte)))
		return string(b), err
	}
	return strconv.FormatInt(v.(int64), 10), nil
}

// jsonElem returns SQL whose value json_array renders as the JSON encoding
// of the element e. It returns a code-13 error for a non-constant binary
// element.
func jsonElem(e frag) (frag, error) {
	switch {
	case e.typ.Kind == KindBool:
		return frag{n: callNode("json", boolText(e.n)), typ: e.typ}, nil
	case e.typ.textDecimal():
		return callSQL(e.typ, "json", e), nil
	case e.typ.Kind == KindDecimal:
		return realSQL(e, e.typ), nil
	case e.typ.Kind == KindBinary && e.k == nil:
		return frag{}, invalid("binary list elements must be constants")
	case e.typ.Kind == KindBinary:
		return arg(base64.StdEncoding.EncodeToString(e.k.v.([]byte))), nil
	}
	return e, nil
}

// listOf compiles e and checks that it is a list with a known element type
// (or NULL); what names it in errors.
func (c *compiler) listOf(e Expr, what string) (frag, error) {
	f, err := c.compile(e)
	if err != nil {
		return frag{}, err
	}
	if f.typ.Kind != KindNull && (f.typ.Kind != KindList || f.typ.Elem == nil) {
		return frag{}, invalid("%s must be a list, not %s", what, f.typ)
	}
	return f, nil
}

// listValue returns v converted to how elements of a list of elem compare
// with it: numbers as numbers (decimals as floats), other values converted
// to elem. It returns a code-13 error when they cannot be compared.
func listValue(elem Type, v frag) (frag, error) {
	switch {
	case v.typ.Kind == KindNull || elem.Kind == KindNull:
		return v, nil
	case !scalar(elem.Kind):
		return frag{}, invalid("list elements of type %s cannot be searched", elem.Kind)
	case isNumber(elem.Kind) && isNumber(v.typ.Kind):
		return asFloat(v)
	}
	d, fs, err := domain([]frag{{typ: elem}, v}, "compare")
	if err != nil {
		return frag{}, err
	}
	if !sameType(d, elem) {
		return frag{}, invalid("cannot compare %s elements with %s", elem, v.typ)
	}
	return convert(fs[1], elem)
}

// arrayHas compiles array_has(list, value). It returns a code-13 error
// unless the first argument is a list whose elements compare with the value.
func arrayHas(c *compiler, args []Expr) (frag, error) {
	list, err := c.listOf(args[0], "argument 1 of array_has")
	if err != nil {
		return frag{}, err
	}
	v, err := c.compile(args[1])
	if err != nil {
		return frag{}, err
	}
	if list.typ.Elem != nil {
		if v, err = listValue(*list.typ.Elem, v); err != nil {
			return frag{}, err
		}
	}
	return callSQL(boolType, "lance_array_has", list, v), nil
}

// arrayHasSet compiles array_has_any and array_has_all. When the second
// argument is an array literal, its elements are converted like the value of
// array_has. The compiled function returns a code-13 error unless both
// arguments are lists of elements that compare.
func arrayHasSet(sqlName string) func(*compiler, []Expr) (frag, error) {
	return func(c *compiler, args []Expr) (frag, error) {
		a, err := c.listOf(args[0], "argument 1 of "+strings.TrimPrefix(sqlName, "lance_"))
		if err != nil {
			return frag{}, err
		}
		lit, isLit := args[1].(*array)
		if !isLit || a.typ.Elem == nil {
			b, err := c.listOf(args[1], "argument 2 of "+strings.TrimPrefix(sqlName, "lance_"))
			if err != nil {
				return frag{}, err
			}
			if a.typ.Elem != nil && b.typ.Elem != nil && !elemsMix(*a.typ.Elem, *b.typ.Elem) {
				return frag{}, invalid("cannot compare %s with %s", a.typ, b.typ)
			}
			return callSQL(boolType, sqlName, a, b), nil
		}
		elems, err := c.all(lit.elems)
		if err != nil {
			return frag{}, err
		}
		for i, e := range elems {
			if elems[i], err = listValue(*a.typ.Elem, e); err != nil {
				return frag{}, err
			}
		}
		b, err := jsonArray(elems, *a.typ.Elem)
		if err != nil {
			return frag{}, err
		}
		return callSQL(boolType, sqlName, a, b), nil
	}
}

// elemsMix reports whether elements of lists of a and b can be compared.
func elemsMix(a, b Type) bool {
	return sameType(a, b) || a.Kind == KindNull || b.Kind == KindNull ||
		(isNumber(a.Kind) && isNumber(b.Kind))
}

// arrayLengthFn compiles array_length(list) and cardinality(list); it
// returns a code-13 error for a non-list.
func arrayLengthFn(name string, args []frag) (frag, error) {
	if err := need(name, args, KindList); err != nil {
		return frag{}, err
	}
	return callSQL(intType, "json_array_length", args[0]), nil
}
