package expr

import (
	"errors"
	"strconv"
	"strings"
)

// Values holds one column's values for rows 0..n-1, in the kind's natural
// Go form:
//
//   - KindBool: Bools;
//   - KindInt, KindDate32, KindDate64, KindTimestamp, KindTime,
//     KindDuration, and KindDecimal with Precision ≤ 18 (unscaled): Ints;
//   - KindFloat: Floats (NaN counts as NULL, as SQLite stores it);
//   - KindString: Strings.
//
// Valid is nil when no value is null; otherwise Valid[i] is false for a
// null row (whose value in the slice is ignored).
type Values struct {
	Type    Type
	Ints    []int64
	Floats  []float64
	Strings []string
	Bools   []bool
	Valid   []bool
}

// Columns supplies column data to EvalFilter.
type Columns interface {
	// Len is the number of rows.
	Len() int
	// Column returns the values of the column at path (as a Resolver
	// would resolve it); an error for unknown paths is returned by
	// EvalFilter unchanged; ok=false means the column is not available in
	// memory (EvalFilter then reports ok=false).
	Column(path []string) (v *Values, ok bool, err error)
}

// EvalFilter evaluates the boolean expression e over every row of cols and
// returns a bitmap (bit i of word i/64, (Len()+63)/64 words) of the rows
// where it is TRUE (not NULL, not FALSE), with the semantics of the SQL
// that CompileFilter makes of e.
//
// ok is false when e uses anything the evaluator does not support (then
// the caller compiles e to SQL instead): columns that are not in memory,
// not of the kinds of Values or whose Values do not hold Len() values;
// binary values and decimals stored as text; CAST and ||; strings
// compared with temporal columns (parsed by the SQL at run time);
// functions other than lower, upper, length (char_length), starts_with,
// ends_with, abs and coalesce (ifnull, nvl); and rows on which the SQL
// would change storage class or fail, such as an integer overflow. err is
// the error CompileFilter reports for e (type errors with code 13,
// resolver errors unchanged); it is checked first.
func EvalFilter(e Expr, cols Columns) (rows []uint64, ok bool, err error) {
	ev := &evaluator{cols: cols, n: cols.Len(), vals: map[string]*Values{}, loaded: map[string]vec{}}
	if _, err := CompileFilter(e, ev); err != nil {
		if errors.Is(err, errNotInMemory) {
			return nil, false, nil
		}
		return nil, false, err
	}
	if ev.n < 0 {
		return nil, false, nil
	}
	ev.ones = make([]uint64, words(ev.n))
	for i := range ev.ones {
		ev.ones[i] = ^uint64(0)
	}
	if r := ev.n % 64; r != 0 {
		ev.ones[len(ev.ones)-1] = 1<<r - 1
	}
	ev.zeros = make([]uint64, len(ev.ones))
	root, err := ev.plan(e)
	if errors.Is(err, errUnsupported) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	v := root.run()
	if ev.bail {
		return nil, false, nil
	}
	t, _ := ev.bools(v)
	return t, true, nil
}

var (
	// errUnsupported reports an expression that EvalFilter leaves to SQL.
	errUnsupported = errors.New("expression not supported by the evaluator")
	// errNotInMemory is what the evaluator's resolver returns for a column
	// that Columns does not hold in memory.
	errNotInMemory = errors.New("column not in memory")
)

// evaluator evaluates one expression over the columns of cols.
type evaluator struct {
	cols   Columns
	n      int                // rows
	vals   map[string]*Values // columns by pathKey, as Columns returned them
	loaded map[string]vec     // columns by pathKey, as vectors
	ones   []uint64           // every row's bit set; read only
	zeros  []uint64           // no bit set; read only
	bail   bool               // a value met SQL semantics the evaluator does not reproduce
}

// Resolve resolves path to a column of the type of its Values, so that the
// compiler can check e. It returns the error of Columns unchanged, and
// errNotInMemory when the column is not in memory.
func (ev *evaluator) Resolve(path []string) (Column, error) {
	v, err := ev.values(path)
	if err != nil {
		return Column{}, err
	}
	return Column{SQL: "c", Type: v.Type}, nil
}

// values returns the values of the column at path, asking Columns once per
// path. It returns the error of Columns, or errNotInMemory.
func (ev *evaluator) values(path []string) (*Values, error) {
	key := pathKey(path)
	if v, ok := ev.vals[key]; ok {
		return v, nil
	}
	v, ok, err := ev.cols.Column(path)
	if err != nil {
		return nil, err
	}
	if !ok || v == nil {
		return nil, errNotInMemory
	}
	ev.vals[key] = v
	return v, nil
}

// pathKey returns a map key of path: each segment with its length.
func pathKey(path []string) string {
	var b strings.Builder
	for _, seg := range path {
		b.WriteString(strconv.Itoa(len(seg)))
		b.WriteByte(':')
		b.WriteString(seg)
	}
	return b.String()
}

// operand is a planned expression: the fragment that the compiler makes of
// it (only its type and constant matter) and how to compute its value.
type operand struct {
	f   frag
	run func() vec
}

// plan plans e the way the compiler compiles it. It returns errUnsupported
// for what the evaluator does not support; other errors are those of the
// compiler, which EvalFilter has already ruled out.
func (ev *evaluator) plan(e Expr) (operand, error) {
	switch e := e.(type) {
	case *literal:
		return ev.constant(constant(e.typ, e.val))
	case *field:
		return ev.field(e)
	case *unary:
		return ev.planUnary(e)
	case *binary:
		return ev.planBinary(e)
	case *logical:
		return ev.planLogical(e)
	case *isNull:
		x, err := ev.plan(e.x)
		if err != nil {
			return operand{}, err
		}
		return boolOperand(func() vec { return ev.isNull(x.run(), e.not) }), nil
	case *isBool:
		x, err := ev.plan(e.x)
		if err != nil {
			return operand{}, err
		}
		return boolOperand(func() vec { return ev.isBool(x.run(), e.value, e.not) }), nil
	case *inList:
		xs, err := ev.comparable(append([]Expr{e.x}, e.list...))
		if err != nil {
			return operand{}, err
		}
		return boolOperand(func() vec { return ev.in(xs, e.not) }), nil
	case *between:
		xs, err := ev.comparable([]Expr{e.x, e.lo, e.hi})
		if err != nil {
			return operand{}, err
		}
		return boolOperand(func() vec { return ev.between(xs, e.not) }), nil
	case *like:
		return ev.planLike(e)
	case *call:
		return ev.planCall(e)
	case *caseExpr:
		return ev.planCase(e)
	}
	return operand{}, errUnsupported
}

// boolOperand returns a non-constant boolean operand computed by run.
func boolOperand(run func() vec) operand {
	return operand{f: frag{typ: boolType}, run: run}
}

// all plans each of es. It returns the first error.
func (ev *evaluator) all(es []Expr) ([]operand, error) {
	out := make([]operand, len(es))
	for i, e := range es {
		var err error
		if out[i], err = ev.plan(e); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// frags returns the fragments of os.
func frags(os []operand) []frag {
	out := make([]frag, len(os))
	for i, o := range os {
		out[i] = o.f
	}
	return out
}

// constant returns the operand of the constant fragment f. It returns
// errUnsupported for constants of kinds the evaluator does not hold.
func (ev *evaluator) constant(f frag) (operand, error) {
	v, err := ev.constVec(f.typ, *f.k)
	if err != nil {
		return operand{}, err
	}
	return operand{f: f, run: func() vec { return v }}, nil
}

// field plans a column reference. It returns the error of Columns, or
// errUnsupported for a column whose values the evaluator cannot use.
func (ev *evaluator) field(e *field) (operand, error) {
	v, err := ev.values(e.path)
	if err != nil {
		return operand{}, err
	}
	cls, err := classOf(v.Type)
	if err != nil || !ev.wellFormed(v, cls) {
		return operand{}, errUnsupported
	}
	key := pathKey(e.path)
	return operand{f: frag{typ: v.Type}, run: func() vec { return ev.column(key, v, cls) }}, nil
}

// coerce returns o converted to the fragment to that the compiler
// converted o's fragment to: a constant when the compiler folded it, else
// o's value converted at run time. It returns errUnsupported for a
// conversion that the evaluator does not do.
func (ev *evaluator) coerce(o operand, to frag) (operand, error) {
	if to.k != nil {
		return ev.constant(to)
	}
	conv, err := ev.conversion(o.f.typ, to.typ)
	if err != nil {
		return operand{}, err
	}
	if conv == nil {
		return operand{f: to, run: o.run}, nil
	}
	return operand{f: to, run: func() vec { return conv(o.run()) }}, nil
}

// comparable plans es and converts them to the type they are compared in,
// as forCompare does: then they are of one class, or integers and floats,
// or NULL. It returns the first error of planning or converting.
func (ev *evaluator) comparable(es []Expr) ([]operand, error) {
	os, err := ev.all(es)
	if err != nil {
		return nil, err
	}
	fs, err := forCompare(frags(os))
	if err != nil {
		return nil, err
	}
	for i := range os {
		if os[i], err = ev.coerce(os[i], fs[i]); err != nil {
			return nil, err
		}
	}
	return os, nil
}

// planUnary plans NOT, unary plus and unary minus. It returns the error of
// planning the operand.
func (ev *evaluator) planUnary(e *unary) (operand, error) {
	x, err := ev.plan(e.x)
	if err != nil {
		return operand{}, err
	}
	switch e.op {
	case "NOT":
		return boolOperand(func() vec { return negated(x.run()) }), nil
	case "+":
		return x, nil
	}
	return operand{f: frag{typ: x.f.typ}, run: func() vec { return ev.negate(x.run()) }}, nil
}

// planBinary plans comparisons and arithmetic. It returns errUnsupported
// for || and for operands the evaluator does not compute with.
func (ev *evaluator) planBinary(e *binary) (operand, error) {
	if e.op == "||" {
		return operand{}, errUnsupported
	}
	if op, ok := cmpOps[e.op]; ok {
		os, err := ev.comparable([]Expr{e.l, e.r})
		if err != nil {
			return operand{}, err
		}
		return boolOperand(func() vec { return ev.compare(op, os[0].run(), os[1].run()) }), nil
	}
	if e.op == "IS DISTINCT FROM" || e.op == "IS NOT DISTINCT FROM" {
		os, err := ev.comparable([]Expr{e.l, e.r})
		if err != nil {
			return operand{}, err
		}
		not := e.op == "IS NOT DISTINCT FROM"
		return boolOperand(func() vec { return ev.distinct(os[0].run(), os[1].run(), not) }), nil
	}
	return ev.planArith(e)
}

// planArith plans + - * / %: integers stay integers, anything else
// computes in float64 with decimals converted to floats, as arith does. It
// returns the first error of planning or converting the operands.
func (ev *evaluator) planArith(e *binary) (operand, error) {
	os, err := ev.all([]Expr{e.l, e.r})
	if err != nil {
		return operand{}, err
	}
	res, err := arith(e.op, os[0].f, os[1].f)
	if err != nil {
		return operand{}, err
	}
	float := res.typ.Kind == KindFloat
	for i, o := range os {
		if !float {
			continue
		}
		to, err := asFloat(o.f)
		if err != nil {
			return operand{}, err
		}
		if os[i], err = ev.coerce(o, to); err != nil {
			return operand{}, err
		}
	}
	op := e.op
	return operand{f: frag{typ: res.typ}, run: func() vec {
		return ev.arith(op, float, os[0].run(), os[1].run())
	}}, nil
}

// planLogical plans an AND or OR chain. It returns the first error of the
// terms.
func (ev *evaluator) planLogical(e *logical) (operand, error) {
	terms, err := ev.all(e.terms)
	if err != nil {
		return operand{}, err
	}
	return boolOperand(func() vec {
		acc := terms[0].run()
		for _, t := range terms[1:] {
			acc = ev.logic(e.and, acc, t.run())
		}
		return acc
	}), nil
}

// planLike plans [NOT] LIKE/ILIKE; the compiler has checked that the
// escape is a string constant. It returns the first error of planning the
// operands.
func (ev *evaluator) planLike(e *like) (operand, error) {
	os, err := ev.all(nonNil(e.x, e.pattern, e.esc))
	if err != nil {
		return operand{}, err
	}
	esc := `\`
	if e.esc != nil {
		esc = os[2].f.k.v.(string)
	}
	return boolOperand(func() vec { return ev.like(os[0].run(), os[1].run(), esc, e.fold, e.not) }), nil
}

// evalFuncs are the functions the evaluator computes, by name.
var evalFuncs = map[string]func(ev *evaluator, args []vec) vec{
	"lower":            (*evaluator).lower,
	"upper":            (*evaluator).upper,
	"length":           (*evaluator).length,
	"char_length":      (*evaluator).length,
	"character_length": (*evaluator).length,
	"starts_with":      (*evaluator).startsWith,
	"ends_with":        (*evaluator).endsWith,
	"abs":              (*evaluator).abs,
	"coalesce":         (*evaluator).coalesce,
	"ifnull":           (*evaluator).coalesce,
	"nvl":              (*evaluator).coalesce,
}

// planCall plans a function call of evalFuncs; arguments are converted as
// the compiler converts them (coalesce: to their common type). It returns
// errUnsupported for other functions, else the first error of planning or
// converting the arguments.
func (ev *evaluator) planCall(e *call) (operand, error) {
	fn, ok := evalFuncs[e.name]
	if !ok {
		return operand{}, errUnsupported
	}
	args, err := ev.all(e.args)
	if err != nil {
		return operand{}, err
	}
	res, err := functions[e.name].fn(e.name, frags(args))
	if err != nil {
		return operand{}, err
	}
	switch e.name {
	case "coalesce", "ifnull", "nvl":
		_, fs, err := combine(frags(args))
		if err != nil {
			return operand{}, err
		}
		for i := range args {
			if args[i], err = ev.coerce(args[i], fs[i]); err != nil {
				return operand{}, err
			}
		}
	}
	return operand{f: res, run: func() vec {
		vs := make([]vec, len(args))
		for i, a := range args {
			vs[i] = a.run()
		}
		return fn(ev, vs)
	}}, nil
}

// planCase plans CASE: with an operand, the operand and the WHEN values are
// compared as = compares them; the results are converted to their common
// type. It returns the first error of planning or converting the parts.
func (ev *evaluator) planCase(e *caseExpr) (operand, error) {
	var conds []operand
	var err error
	if e.operand != nil {
		if conds, err = ev.comparable(append([]Expr{e.operand}, e.whens...)); err != nil {
			return operand{}, err
		}
	} else if conds, err = ev.all(e.whens); err != nil {
		return operand{}, err
	}
	results, err := ev.all(append(append([]Expr{}, e.thens...), nonNil(e.elseExpr)...))
	if err != nil {
		return operand{}, err
	}
	d, fs, err := combine(frags(results))
	if err != nil {
		return operand{}, err
	}
	cls, err := classOf(d)
	if err != nil {
		return operand{}, err
	}
	for i := range results {
		if results[i], err = ev.coerce(results[i], fs[i]); err != nil {
			return operand{}, err
		}
	}
	hasElse := e.elseExpr != nil
	return operand{f: frag{typ: d}, run: func() vec {
		var x vec
		if e.operand != nil {
			x = conds[0].run()
		}
		var takes [][]uint64
		for _, c := range conds[len(conds)-len(e.whens):] {
			var t []uint64
			if e.operand != nil {
				t, _ = ev.bools(ev.compare(opEq, x, c.run()))
			} else {
				t, _ = ev.bools(c.run())
			}
			takes = append(takes, t)
		}
		if hasElse {
			takes = append(takes, ev.ones)
		}
		vs := make([]vec, len(results))
		for i, r := range results {
			vs[i] = r.run()
		}
		return ev.pick(cls, takes, vs)
	}}, nil
}
