package expr

import (
	"math"
	"strconv"
	"strings"
)

// function describes a supported function: its argument counts (max -1
// for any) and how it compiles, from compiled arguments (fn) or from the
// argument expressions (raw).
type function struct {
	min, max int
	fn       func(name string, args []frag) (frag, error)
	raw      func(c *compiler, args []Expr) (frag, error)
}

// functions maps lower-case function names to their definitions.
var functions map[string]function

func init() {
	functions = map[string]function{
		"lower":            {min: 1, max: 1, fn: stringFn("lance_lower")},
		"upper":            {min: 1, max: 1, fn: stringFn("lance_upper")},
		"length":           {min: 1, max: 1, fn: lengthFn},
		"char_length":      {min: 1, max: 1, fn: lengthFn},
		"character_length": {min: 1, max: 1, fn: lengthFn},
		"abs":              {min: 1, max: 1, fn: absFn},
		"coalesce":         {min: 1, max: -1, fn: coalesceFn},
		"ifnull":           {min: 2, max: 2, fn: coalesceFn},
		"nvl":              {min: 2, max: 2, fn: coalesceFn},
		"nullif":           {min: 2, max: 2, fn: nullifFn},
		"concat":           {min: 1, max: -1, fn: concatFn},
		"substring":        {min: 2, max: 3, fn: substrFn},
		"substr":           {min: 2, max: 3, fn: substrFn},
		"starts_with":      {min: 2, max: 2, fn: boolStringFn("lance_starts_with")},
		"ends_with":        {min: 2, max: 2, fn: boolStringFn("lance_ends_with")},
		"regexp_match":     {min: 2, max: 3, fn: regexpFn},
		"regexp_like":      {min: 2, max: 3, fn: regexpFn},
		"trim":             {min: 1, max: 2, fn: stringFn("trim")},
		"btrim":            {min: 1, max: 2, fn: stringFn("trim")},
		"ltrim":            {min: 1, max: 2, fn: stringFn("ltrim")},
		"rtrim":            {min: 1, max: 2, fn: stringFn("rtrim")},
		"replace":          {min: 3, max: 3, fn: stringFn("replace")},
		"round":            {min: 1, max: 2, fn: roundFn},
		"floor":            {min: 1, max: 1, fn: floatFn("floor")},
		"ceil":             {min: 1, max: 1, fn: floatFn("ceil")},
		"ceiling":          {min: 1, max: 1, fn: floatFn("ceil")},
		"sqrt":             {min: 1, max: 1, fn: floatFn("sqrt")},
		"power":            {min: 2, max: 2, fn: floatFn("power")},
		"pow":              {min: 2, max: 2, fn: floatFn("power")},
		"array_length":     {min: 1, max: 1, fn: arrayLengthFn},
		"cardinality":      {min: 1, max: 1, fn: arrayLengthFn},
		"list_length":      {min: 1, max: 1, fn: arrayLengthFn},
		"array_has":        {min: 2, max: 2, raw: arrayHas},
		"array_contains":   {min: 2, max: 2, raw: arrayHas},
		"list_has":         {min: 2, max: 2, raw: arrayHas},
		"list_contains":    {min: 2, max: 2, raw: arrayHas},
		"array_has_any":    {min: 2, max: 2, raw: arrayHasSet("lance_array_has_any")},
		"array_has_all":    {min: 2, max: 2, raw: arrayHasSet("lance_array_has_all")},
		"list_has_any":     {min: 2, max: 2, raw: arrayHasSet("lance_array_has_any")},
		"list_has_all":     {min: 2, max: 2, raw: arrayHasSet("lance_array_has_all")},
	}
}

// call compiles a function call. It returns a code-13 error for an unknown
// function, a wrong argument count or argument types.
func (c *compiler) call(e *call) (frag, error) {
	f, ok := functions[e.name]
	if !ok {
		return frag{}, invalid("unknown function %s", e.name)
	}
	if n := len(e.args); n < f.min || (f.max >= 0 && n > f.max) {
		return frag{}, invalid("%s expects %s, got %d", e.name, arity(f), n)
	}
	if f.raw != nil {
		return f.raw(c, e.args)
	}
	args, err := c.all(e.args)
	if err != nil {
		return frag{}, err
	}
	return f.fn(e.name, args)
}

// arity describes the argument counts of f.
func arity(f function) string {
	plural := func(n int) string {
		if n == 1 {
			return "1 argument"
		}
		return strconv.Itoa(n) + " arguments"
	}
	switch {
	case f.max < 0:
		return "at least " + plural(f.min)
	case f.min == f.max:
		return plural(f.min)
	}
	return strconv.Itoa(f.min) + " to " + plural(f.max)
}

// need checks that each argument has one of the kinds (or is NULL). It
// returns a code-13 error naming the function and argument otherwise.
func need(name string, args []frag, kinds ...Kind) error {
	for i, a := range args {
		if a.typ.Kind == KindNull {
			continue
		}
		ok := false
		for _, k := range kinds {
			ok = ok || a.typ.Kind == k
		}
		if !ok {
			names := make([]string, len(kinds))
			for j, k := range kinds {
				names[j] = k.String()
			}
			return invalid("argument %d of %s must be %s, not %s", i+1, name, strings.Join(names, " or "), a.typ)
		}
	}
	return nil
}

// stringFn is a function of string arguments returning a string. The
// compiled function returns a code-13 error for other argument types.
func stringFn(sqlName string) func(string, []frag) (frag, error) {
	return func(name string, args []frag) (frag, error) {
		if err := need(name, args, KindString); err != nil {
			return frag{}, err
		}
		return callSQL(stringType, sqlName, args...), nil
	}
}

// boolStringFn is a predicate of string arguments. The compiled function
// returns a code-13 error for other argument types.
func boolStringFn(sqlName string) func(string, []frag) (frag, error) {
	return func(name string, args []frag) (frag, error) {
		if err := need(name, args, KindString); err != nil {
			return frag{}, err
		}
		return callSQL(boolType, sqlName, args...), nil
	}
}

// floatFn is a numeric function computed in float64. The compiled function
// returns a code-13 error for non-numeric arguments.
func floatFn(sqlName string) func(string, []frag) (frag, error) {
	return func(name string, args []frag) (frag, error) {
		if err := need(name, args, KindInt, KindFloat, KindDecimal); err != nil {
			return frag{}, err
		}
		for i, a := range args {
			var err error
			if args[i], err = convert(a, floatType); err != nil {
				return frag{}, err
			}
		}
		return callSQL(floatType, sqlName, args...), nil
	}
}

// lengthFn compiles length(s) of a string (characters) or binary (bytes); it
// returns a code-13 error for other types.
func lengthFn(name string, args []frag) (frag, error) {
	if err := need(name, args, KindString, KindBinary); err != nil {
		return frag{}, err
	}
	return callSQL(intType, "length", args[0]), nil
}

// absFn keeps the type of integers, floats, durations and integer-stored
// decimals; text-stored decimals become floats. It returns a code-13 error
// for other types.
func absFn(name string, args []frag) (frag, error) {
	if err := need(name, args, KindInt, KindFloat, KindDecimal, KindDuration); err != nil {
		return frag{}, err
	}
	x := args[0]
	if x.typ.textDecimal() {
		var err error
		if x, err = convert(x, floatType); err != nil {
			return frag{}, err
		}
	}
	return callSQL(x.typ, "abs", x), nil
}

// coalesceFn compiles coalesce(a, ...) over values converted to their common
// type; it returns a code-13 error when they do not mix.
func coalesceFn(_ string, args []frag) (frag, error) {
	d, args, err := combine(args)
	if err != nil {
		return frag{}, err
	}
	if len(args) == 1 {
		return args[0], nil
	}
	return callSQL(d, "coalesce", args...), nil
}

// nullifFn compiles nullif(a, b): NULL when a equals b, else a, both
// converted to the type they compare in. It returns a code-13 error when
// they do not compare.
func nullifFn(_ string, args []frag) (frag, error) {
	args, err := forCompare(args)
	if err != nil {
		return frag{}, err
	}
	return callSQL(args[0].typ, "nullif", args...), nil
}

// concatFn concatenates the arguments as text, skipping NULLs. It returns a
// code-13 error for values that have no text form.
func concatFn(_ string, args []frag) (frag, error) {
	args, err := asStrings(args)
	if err != nil {
		return frag{}, err
	}
	return callSQL(stringType, "concat", args...), nil
}

// substrFn compiles substring(s, start[, count]); it returns a code-13 error
// unless s is a string and the others integers.
func substrFn(name string, args []frag) (frag, error) {
	if err := need(name, args[:1], KindString); err != nil {
		return frag{}, err
	}
	if err := need(name, args[1:], KindInt); err != nil {
		return frag{}, err
	}
	return callSQL(stringType, "lance_substr", args...), nil
}

// regexpFn validates a constant pattern and flags at compile time. It
// returns a code-13 error for non-string arguments or a bad constant pattern
// or flag.
func regexpFn(name string, args []frag) (frag, error) {
	if err := need(name, args, KindString); err != nil {
		return frag{}, err
	}
	if len(args) == 2 {
		args = append(args, constant(stringType, konst{v: ""}))
	}
	if args[1].k != nil && args[2].k != nil && !args[1].isNull() && !args[2].isNull() {
		if _, err := compileRegexp(args[1].k.v.(string), args[2].k.v.(string)); err != nil {
			return frag{}, invalid("%s: %v", name, err)
		}
	}
	return callSQL(boolType, "lance_regexp_like", args...), nil
}

// roundFn rounds half away from zero to d digits (default 0); a negative
// constant d rounds to tens, hundreds and so on. It returns a code-13 error
// for a non-numeric value or non-integer digits.
func roundFn(name string, args []frag) (frag, error) {
	if err := need(name, args[:1], KindInt, KindFloat, KindDecimal); err != nil {
		return frag{}, err
	}
	if err := need(name, args[1:], KindInt); err != nil {
		return frag{}, err
	}
	x, err := convert(args[0], floatType)
	if err != nil {
		return frag{}, err
	}
	if len(args) == 2 && args[1].k != nil && !args[1].isNull() {
		if d := args[1].k.v.(int64); d < 0 {
			p := math.Pow10(int(-max(d, -400)))
			scaled := callNode("round", binaryNode(sqlDiv, x.n, constNode(p)))
			return frag{n: binaryNode(sqlMul, scaled, constNode(p)), typ: floatType}, nil
		}
	}
	return callSQL(floatType, "round", append([]frag{x}, args[1:]...)...), nil
}
