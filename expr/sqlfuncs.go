package expr

import (
	"database/sql/driver"
	"errors"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// sqlFunc is a scalar SQL function registered with SQLite.
type sqlFunc struct {
	name  string
	nArgs int32 // -1: variadic
	fn    func(args []driver.Value) (driver.Value, error)
}

// sqlFuncs are the functions that compiled SQL calls besides SQLite's own.
// Each returns NULL when a value argument is NULL.
var sqlFuncs = []sqlFunc{
	{"lance_like", 3, likeFunc(false)},
	{"lance_ilike", 3, likeFunc(true)},
	{"lance_regexp_like", 3, regexpLike},
	{"lance_lower", 1, mapText(strings.ToLower)},
	{"lance_upper", 1, mapText(strings.ToUpper)},
	{"lance_substr", -1, substr},
	{"lance_starts_with", 2, textPredicate(strings.HasPrefix)},
	{"lance_ends_with", 2, textPredicate(strings.HasSuffix)},
	{"lance_array_has", 2, arrayHasFunc},
	{"lance_array_has_any", 2, arraySetFunc(false)},
	{"lance_array_has_all", 2, arraySetFunc(true)},
	{"lance_from_text", 4, fromTextFunc},
	{"lance_to_text", 4, toTextFunc},
	{"lance_dec_cast", 5, decCastFunc},
	{"lance_floordiv", 2, floorDivFunc},
}

var errArgs = errors.New("lance function: bad arguments")

// text returns v as a string; ok is false for NULL.
func text(v driver.Value) (s string, ok bool) {
	switch v := v.(type) {
	case string:
		return v, true
	case []byte:
		return string(v), true
	case int64:
		return strconv.FormatInt(v, 10), true
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64), true
	}
	return "", false
}

// texts returns the arguments as strings; ok is false when one is NULL.
func texts(args []driver.Value) ([]string, bool) {
	out := make([]string, len(args))
	for i, a := range args {
		var ok bool
		if out[i], ok = text(a); !ok {
			return nil, false
		}
	}
	return out, true
}

// likeFunc implements lance_like(s, pattern, escape) and lance_ilike. It
// never fails.
func likeFunc(fold bool) func([]driver.Value) (driver.Value, error) {
	return func(args []driver.Value) (driver.Value, error) {
		ts, ok := texts(args)
		if !ok {
			return nil, nil
		}
		esc, _ := utf8.DecodeRuneInString(ts[2])
		return likeMatch(ts[0], ts[1], esc, fold), nil
	}
}

// regexpLike implements lance_regexp_like(s, pattern, flags). It returns an
// error for a bad pattern or flag.
func regexpLike(args []driver.Value) (driver.Value, error) {
	ts, ok := texts(args)
	if !ok {
		return nil, nil
	}
	re, err := compileRegexp(ts[1], ts[2])
	if err != nil {
		return nil, err
	}
	return re.MatchString(ts[0]), nil
}

// mapText implements a function of one string. It never fails.
func mapText(f func(string) string) func([]driver.Value) (driver.Value, error) {
	return func(args []driver.Value) (driver.Value, error) {
		s, ok := text(args[0])
		if !ok {
			return nil, nil
		}
		return f(s), nil
	}
}

// textPredicate implements a predicate of two strings. It never fails.
func textPredicate(f func(string, string) bool) func([]driver.Value) (driver.Value, error) {
	return func(args []driver.Value) (driver.Value, error) {
		ts, ok := texts(args)
		if !ok {
			return nil, nil
		}
		return f(ts[0], ts[1]), nil
	}
}

// substr implements lance_substr(s, start[, count]) with DataFusion's
// rules: characters at 1-based positions start … start+count-1 that exist;
// a negative count is an error.
func substr(args []driver.Value) (driver.Value, error) {
	if len(args) < 2 || len(args) > 3 {
		return nil, errArgs
	}
	s, ok := text(args[0])
	start, ok2 := args[1].(int64)
	if !ok || !ok2 {
		return nil, nil
	}
	rs := []rune(s)
	n := int64(len(rs))
	end := n + 1 // exclusive position
	if len(args) == 3 {
		count, ok := args[2].(int64)
		switch {
		case !ok:
			return nil, nil
		case count < 0:
			return nil, errors.New("negative substring length not allowed")
		case start <= 0 || count <= math.MaxInt64-start:
			end = min(end, start+count)
		}
	}
	start = max(start, 1)
	if end <= start {
		return "", nil
	}
	return string(rs[start-1 : end-1]), nil
}

// fromTextFunc implements lance_from_text(s, kind, p1, p2) (see typeCode).
// It returns an error for malformed text.
func fromTextFunc(args []driver.Value) (driver.Value, error) {
	s, ok := text(args[0])
	if !ok {
		return nil, nil
	}
	t, err := codeArgs(args[1:])
	if err != nil {
		return nil, err
	}
	return fromText(s, t)
}

// toTextFunc implements lance_to_text(v, kind, p1, p2) (see typeCode). It
// returns an error for a value it cannot format.
func toTextFunc(args []driver.Value) (driver.Value, error) {
	if args[0] == nil {
		return nil, nil
	}
	t, err := codeArgs(args[1:])
	if err != nil {
		return nil, err
	}
	return toText(args[0], t)
}

// codeArgs decodes the type arguments of lance_from_text and lance_to_text.
// It returns errArgs for non-integer arguments.
func codeArgs(args []driver.Value) (Type, error) {
	kind, ok1 := args[0].(int64)
	p1, ok2 := args[1].(int64)
	p2, ok3 := args[2].(int64)
	if !ok1 || !ok2 || !ok3 {
		return Type{}, errArgs
	}
	return typeFromCode(kind, p1, p2), nil
}

// decCastFunc implements lance_dec_cast(v, fromScale, toScale, precision,
// asText): v is an integer (unscaled at fromScale), a float or decimal
// text; the result is the decimal's storage value at toScale, rounded half
// away from zero, or an error when it does not fit precision (0: no check).
func decCastFunc(args []driver.Value) (driver.Value, error) {
	if args[0] == nil {
		return nil, nil
	}
	var n [4]int64
	for i := range n {
		v, ok := args[i+1].(int64)
		if !ok {
			return nil, errArgs
		}
		n[i] = v
	}
	r, err := decimalOf(args[0], int(n[0]))
	if err != nil {
		return nil, err
	}
	return decimalStorage(r, int(n[1]), int(n[2]), n[3] != 0)
}

// floorDivFunc implements lance_floordiv(x, d): x/d rounded down. It returns
// errArgs for a non-integer x.
func floorDivFunc(args []driver.Value) (driver.Value, error) {
	x, ok1 := args[0].(int64)
	d, ok2 := args[1].(int64)
	if args[0] == nil || !ok2 || d <= 0 {
		return nil, nil
	}
	if !ok1 {
		return nil, errArgs
	}
	return floorDiv(x, d), nil
}
