package expr

import (
	"errors"
	"math"
	"math/big"
	"strconv"
)

// conv converts values of one type to another: fold at compile time (nil
// when constants are converted by the SQL too) and sql at run time.
type conv struct {
	fold func(konst) (konst, error)
	sql  func(frag) frag
}

var errRange = errors.New("value out of range")

// convert returns f converted to type to with the semantics of CAST;
// constants are converted at compile time. It returns a code-13 error when
// no conversion exists or a constant cannot be converted.
func convert(f frag, to Type) (frag, error) {
	if sameType(f.typ, to) {
		f.typ = to
		return f, nil
	}
	if f.isNull() {
		return constant(to, konst{}), nil
	}
	cv, err := converterFor(f.typ, to)
	if err != nil {
		return frag{}, err
	}
	if f.k != nil && cv.fold != nil {
		k, err := cv.fold(*f.k)
		if err != nil {
			return frag{}, invalid("cannot cast %s to %s: %v", f.typ, to, err)
		}
		return constant(to, k), nil
	}
	out := cv.sql(f)
	out.typ = to
	return out, nil
}

// exactConst returns the constant f converted to type to when the
// conversion loses nothing (converting back gives f again).
func exactConst(f frag, to Type) (frag, bool) {
	if f.k == nil {
		return frag{}, false
	}
	there, err1 := converterFor(f.typ, to)
	back, err2 := converterFor(to, f.typ)
	if err1 != nil || err2 != nil || there.fold == nil || back.fold == nil {
		return frag{}, false
	}
	k, err1 := there.fold(*f.k)
	if err1 != nil {
		return frag{}, false
	}
	again, err2 := back.fold(k)
	if err2 != nil || !sameValue(again.v, f.k.v) {
		return frag{}, false
	}
	return constant(to, k), true
}

// converterFor returns how values of from become values of to, or a
// code-13 error when CAST does not allow it.
func converterFor(from, to Type) (conv, error) {
	switch {
	case to.Kind == KindString:
		return toStringConv(from)
	case from.Kind == KindString:
		return fromStringConv(to)
	case isNumeric(from.Kind) && isNumeric(to.Kind):
		return numericConv(from, to), nil
	case temporalFamily(from.Kind) != 0 && temporalFamily(from.Kind) == temporalFamily(to.Kind):
		return rescaleConv(from, to), nil
	case from.Kind == KindInt && temporalFamily(to.Kind) != 0,
		to.Kind == KindInt && temporalFamily(from.Kind) != 0:
		return conv{fold: func(k konst) (konst, error) { return konst{v: k.v}, nil }, sql: identity}, nil
	case from.Kind == KindList && to.Kind == KindList && from.Elem != nil && from.Elem.Kind == KindNull:
		return conv{sql: identity}, nil
	}
	return conv{}, invalid("cannot cast %s to %s", from, to)
}

func identity(f frag) frag { return f }

func isNumeric(k Kind) bool {
	return k == KindBool || k == KindInt || k == KindFloat || k == KindDecimal
}

// temporalFamily groups the kinds whose values convert by scaling: 1 for
// dates and timestamps, 2 for times, 3 for durations, 0 otherwise.
func temporalFamily(k Kind) int {
	switch k {
	case KindDate32, KindDate64, KindTimestamp:
		return 1
	case KindTime:
		return 2
	case KindDuration:
		return 3
	}
	return 0
}

// nanosPer returns the nanoseconds in one storage unit of a temporal type.
func nanosPer(t Type) int64 {
	switch t.Kind {
	case KindDate32:
		return nanosPerDay
	case KindDate64:
		return 1e6
	}
	return 1e9 / t.Unit.perSecond()
}

// rescaleConv converts between temporal types of one family: multiplying
// into a finer unit, dividing (rounding down) into a coarser one.
func rescaleConv(from, to Type) conv {
	nf, nt := nanosPer(from), nanosPer(to)
	if nf >= nt {
		m := nf / nt
		return conv{
			fold: func(k konst) (konst, error) {
				v := k.v.(int64)
				if v > math.MaxInt64/m || v < math.MinInt64/m {
					return konst{}, errRange
				}
				return konst{v: v * m}, nil
			},
			sql: func(x frag) frag { return frag{n: binaryNode(sqlMul, x.n, constNode(m)), typ: to} },
		}
	}
	d := nt / nf
	return conv{
		fold: func(k konst) (konst, error) { return konst{v: floorDiv(k.v.(int64), d)}, nil },
		sql:  func(x frag) frag { return callSQL(to, "lance_floordiv", x, arg(d)) },
	}
}

// numericConv converts between booleans, integers, floats and decimals.
func numericConv(from, to Type) conv {
	fold := func(k konst) (konst, error) {
		r, err := exactValue(k, from)
		if err != nil {
			return konst{}, err
		}
		return numericFromRat(r, to)
	}
	var sql func(frag) frag
	switch to.Kind {
	case KindBool:
		sql = func(x frag) frag { return frag{n: binaryNode(sqlNe, realSQL(x, from).n, constNode(int64(0))), typ: to} }
	case KindInt:
		sql = func(x frag) frag { return intSQL(x, from) }
	case KindFloat:
		sql = func(x frag) frag { return realSQL(x, from) }
	case KindDecimal:
		sql = func(x frag) frag {
			return callSQL(to, "lance_dec_cast", x, arg(int64(from.Scale)), arg(int64(to.Scale)),
				arg(int64(to.Precision)), arg(boolInt(to.textDecimal())))
		}
	}
	return conv{fold: fold, sql: sql}
}

// realSQL returns x (of numeric type from) as a REAL.
func realSQL(x frag, from Type) frag {
	if from.Kind == KindFloat {
		return x
	}
	if from.Kind == KindDecimal && !from.textDecimal() && from.Scale != 0 {
		return frag{n: binaryNode(sqlDiv, x.n, constNode(math.Pow10(from.Scale))), typ: floatType}
	}
	return frag{n: castNode("REAL", x.n), typ: floatType}
}

// intSQL returns x (of numeric type from) as an INTEGER, truncating.
func intSQL(x frag, from Type) frag {
	switch {
	case from.Kind == KindBool:
		return x
	case from.Kind == KindDecimal && !from.textDecimal():
		return frag{n: binaryNode(sqlDiv, x.n, constNode(pow10Int(from.Scale))), typ: intType}
	}
	return frag{n: castNode("INTEGER", x.n), typ: intType}
}

// pow10Int returns 10^n for 0 ≤ n ≤ 18.
func pow10Int(n int) int64 {
	p := int64(1)
	for range n {
		p *= 10
	}
	return p
}

// exactValue returns the exact value of numeric constant k of type t. It
// returns an error for a malformed decimal or non-finite float.
func exactValue(k konst, t Type) (*big.Rat, error) {
	switch t.Kind {
	case KindFloat:
		if k.rat != nil {
			return k.rat, nil
		}
		return decimalOf(k.v, 0)
	case KindDecimal:
		return decimalOf(k.v, t.Scale)
	}
	return new(big.Rat).SetInt64(k.v.(int64)), nil
}

// numericFromRat returns r as a constant of numeric type t: truncated for
// integers, rounded for decimals. It returns errRange when r does not fit.
func numericFromRat(r *big.Rat, t Type) (konst, error) {
	switch t.Kind {
	case KindBool:
		return konst{v: boolInt(r.Sign() != 0)}, nil
	case KindInt:
		q := new(big.Int).Quo(r.Num(), r.Denom())
		if !q.IsInt64() {
			return konst{}, errRange
		}
		return konst{v: q.Int64()}, nil
	case KindFloat:
		f, _ := r.Float64()
		if math.IsInf(f, 0) {
			return konst{}, errRange
		}
		return konst{v: f, rat: r}, nil
	}
	v, err := decimalStorage(r, t.Scale, t.Precision, t.textDecimal())
	return konst{v: v}, err
}

// toStringConv converts values of from to text. It returns a code-13 error
// when from has no text form.
func toStringConv(from Type) (conv, error) {
	to := Type{Kind: KindString}
	switch from.Kind {
	case KindBool:
		return conv{
			fold: func(k konst) (konst, error) { return konst{v: strconv.FormatBool(k.v.(int64) != 0)}, nil },
			sql:  func(x frag) frag { return frag{n: boolText(x.n), typ: to} },
		}, nil
	case KindInt, KindFloat, KindBinary:
		return conv{sql: func(x frag) frag { return frag{n: castNode("TEXT", x.n), typ: to} }}, nil
	case KindDecimal, KindDate32, KindDate64, KindTimestamp, KindTime:
		kind, p1, p2 := typeCode(from)
		return conv{
			fold: func(k konst) (konst, error) {
				s, err := toText(k.v, from)
				return konst{v: s}, err
			},
			sql: func(x frag) frag {
				return callSQL(to, "lance_to_text", x, arg(kind), arg(p1), arg(p2))
			},
		}, nil
	}
	return conv{}, invalid("cannot cast %s to string", from)
}

// fromStringConv parses text into values of to. It returns a code-13 error
// when text cannot become a to.
func fromStringConv(to Type) (conv, error) {
	switch to.Kind {
	case KindBinary:
		return conv{
			fold: func(k konst) (konst, error) { return konst{v: []byte(k.v.(string))}, nil },
			sql:  func(x frag) frag { return frag{n: castNode("BLOB", x.n), typ: to} },
		}, nil
	case KindBool, KindInt, KindFloat, KindDecimal, KindDate32, KindDate64, KindTimestamp, KindTime:
		kind, p1, p2 := typeCode(to)
		return conv{
			fold: func(k konst) (konst, error) {
				v, err := fromText(k.v.(string), to)
				return konst{v: v}, err
			},
			sql: func(x frag) frag {
				return callSQL(to, "lance_from_text", x, arg(kind), arg(p1), arg(p2))
			},
		}, nil
	}
	return conv{}, invalid("cannot cast string to %s", to)
}

// boolText returns SQL of the text 'true' or 'false' of the boolean x
// (NULL when x is NULL).
func boolText(x *sqlNode) *sqlNode {
	return caseNode(x, []*sqlNode{constNode(int64(1)), constNode(int64(0))}, []*sqlNode{constNode("true"), constNode("false")}, nil)
}
