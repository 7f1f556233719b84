package expr

import (
	"math"
	"math/bits"
	"strings"
	"unicode/utf8"
)

// arith returns a op b for + - * / %: in float64 when float is set
// (integers converted as SQLite converts them), else in int64. Division or
// modulo by zero and NaN results give NULL; an integer overflow on a valid
// row (where SQLite would switch to a float) makes the evaluation bail out.
func (ev *evaluator) arith(op string, float bool, a, b vec) vec {
	if a.cls == clsNull || b.cls == clsNull {
		return vec{cls: clsNull}
	}
	n := ev.rows(a, b)
	valid := ev.valid(n, a, b)
	if float {
		return result(vec{cls: clsFloat, floats: floatArith(op[0], toFloat(a, 1), toFloat(b, 1), n, valid)}, valid, n)
	}
	return result(vec{cls: clsInt, ints: ev.intArith(op[0], a, b, n, valid)}, valid, n)
}

// intArith computes n values of a op b in int64 as SQLite does; it clears
// the bits of valid where b is zero for / and %.
func (ev *evaluator) intArith(op byte, a, b vec, n int, valid []uint64) []int64 {
	out := make([]int64, n)
	x, y, xs, ys := a.ints, b.ints, a.stride(), b.stride()
	over := false
	for i := range out {
		p, q := x[i*xs], y[i*ys]
		var r int64
		var o bool
		switch op {
		case '+':
			r = p + q
			o = (p^r)&(q^r) < 0
		case '-':
			r = p - q
			o = (p^q)&(p^r) < 0
		case '*':
			r, o = mul64(p, q)
		default:
			switch {
			case q == 0:
				valid[i/64] &^= 1 << (uint(i) % 64)
			case op == '/':
				r = p / q
				o = q == -1 && p == math.MinInt64
			default: // SQLite computes x % -1 as x % 1, which is 0 as in Go
				r = p % q
			}
		}
		out[i] = r
		over = over || (o && has(valid, i))
	}
	if over {
		ev.bail = true
	}
	return out
}

// floatArith computes n values of a op b in float64 as SQLite does (% as
// its mod function, with C's fmod); it clears the bits of valid where the
// result is NULL: division by zero and NaN.
func floatArith(op byte, a, b vec, n int, valid []uint64) []float64 {
	out := make([]float64, n)
	x, y, xs, ys := a.floats, b.floats, a.stride(), b.stride()
	for i := range out {
		p, q := x[i*xs], y[i*ys]
		var r float64
		switch op {
		case '+':
			r = p + q
		case '-':
			r = p - q
		case '*':
			r = p * q
		case '/':
			r = math.NaN()
			if q != 0 {
				r = p / q
			}
		default:
			r = math.Mod(p, q)
		}
		if r != r {
			valid[i/64] &^= 1 << (uint(i) % 64)
		}
		out[i] = r
	}
	return out
}

// negate returns -v, which SQLite computes as 0 - v.
func (ev *evaluator) negate(v vec) vec {
	switch v.cls {
	case clsInt:
		return ev.arith("-", false, vec{cls: clsInt, konst: true, ints: []int64{0}}, v)
	case clsFloat:
		return ev.arith("-", true, vec{cls: clsFloat, konst: true, floats: []float64{0}}, v)
	}
	return v
}

// abs returns abs(args[0]) as SQLite computes it; abs of the smallest
// integer on a valid row (an SQL error) makes the evaluation bail out.
func (ev *evaluator) abs(args []vec) vec {
	v := args[0]
	switch v.cls {
	case clsInt:
		out := make([]int64, len(v.ints))
		for i, x := range v.ints {
			if x == math.MinInt64 && has(v.valid, i) {
				ev.bail = true
			}
			out[i] = abs64(x)
		}
		v.ints = out
	case clsFloat:
		out := make([]float64, len(v.floats))
		for i, x := range v.floats {
			if x < 0 {
				x = -x
			}
			out[i] = x
		}
		v.floats = out
	}
	return v
}

// abs64 returns |x|, with the smallest int64 unchanged.
func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// negated returns NOT v.
func negated(v vec) vec {
	if v.cls == clsNull {
		return v
	}
	return vec{cls: clsBool, tru: v.fal, fal: v.tru}
}

// logic returns a AND b (and set) or a OR b in three-valued logic.
func (ev *evaluator) logic(and bool, a, b vec) vec {
	ta, fa := ev.bools(a)
	tb, fb := ev.bools(b)
	t, f := make([]uint64, len(ev.ones)), make([]uint64, len(ev.ones))
	for w := range t {
		if and {
			t[w], f[w] = ta[w]&tb[w], fa[w]|fb[w]
		} else {
			t[w], f[w] = ta[w]|tb[w], fa[w]&fb[w]
		}
	}
	return vec{cls: clsBool, tru: t, fal: f}
}

// isNull returns v IS NULL, or v IS NOT NULL when not is set.
func (ev *evaluator) isNull(v vec, not bool) vec {
	valid := ev.validBits(v)
	t, f := make([]uint64, len(ev.ones)), make([]uint64, len(ev.ones))
	for w := range t {
		t[w], f[w] = ev.ones[w]&^valid[w], valid[w]
	}
	if not {
		t, f = f, t
	}
	return vec{cls: clsBool, tru: t, fal: f}
}

// isBool returns v IS [NOT] TRUE/FALSE, which is never NULL.
func (ev *evaluator) isBool(v vec, value, not bool) vec {
	vt, vf := ev.bools(v)
	base := vf
	if value {
		base = vt
	}
	t, f := make([]uint64, len(ev.ones)), make([]uint64, len(ev.ones))
	for w := range t {
		r := base[w]
		if not {
			r = ev.ones[w] &^ r
		}
		t[w], f[w] = r, ev.ones[w]&^r
	}
	return vec{cls: clsBool, tru: t, fal: f}
}

// cString returns s up to its first NUL byte: the text that SQLite passes
// to the Go functions that compiled SQL calls (lance_like and others).
func cString(s string) string {
	if i := strings.IndexByte(s, 0); i >= 0 {
		return s[:i]
	}
	return s
}

// like returns x [NOT] LIKE/ILIKE p ESCAPE esc as lance_like and
// lance_ilike compute it.
func (ev *evaluator) like(x, p vec, esc string, fold, not bool) vec {
	if x.cls == clsNull || p.cls == clsNull {
		return vec{cls: clsNull}
	}
	escRune, _ := utf8.DecodeRuneInString(cString(esc))
	n := ev.rows(x, p)
	hit := make([]uint64, words(n))
	xs := x.stride()
	if p.konst {
		m := newLikeMatcher(cString(p.strs[0]), escRune, fold)
		for i := range n {
			hit[i/64] |= b2u(m.match(x.strs[i*xs])) << (uint(i) % 64)
		}
	} else {
		for i := range n {
			hit[i/64] |= b2u(likeMatch(cString(x.strs[i*xs]), cString(p.strs[i]), escRune, fold)) << (uint(i) % 64)
		}
	}
	return ev.verdict(hit, ev.valid(n, x, p), not, x.konst && p.konst)
}

// likeMatcher matches strings against one LIKE pattern, with byte-wise
// fast paths for case-sensitive patterns of literal characters with % at
// the ends only.
type likeMatcher struct {
	how likeHow
	lit string // the literal characters, for the fast paths
	pat likePattern
}

type likeHow int

const (
	likeGeneral  likeHow = iota // likePattern.match
	likeExact                   // lit
	likePrefix                  // lit%
	likeSuffix                  // %lit
	likeContains                // %lit%
)

// newLikeMatcher compiles the pattern p (which holds no NUL) as
// newLikePattern does. The fast paths give likePattern's results: a valid
// UTF-8 literal without U+FFFD is found byte-wise exactly where it is
// found rune by rune, since its first byte cannot continue an earlier
// character.
func newLikeMatcher(p string, esc rune, fold bool) likeMatcher {
	m := likeMatcher{pat: newLikePattern(p, esc, fold)}
	toks := m.pat.toks
	lead := len(toks) > 0 && toks[0].kind == likeAny
	if lead {
		toks = toks[1:]
	}
	trail := len(toks) > 0 && toks[len(toks)-1].kind == likeAny
	if trail {
		toks = toks[:len(toks)-1]
	}
	var lit []byte
	for _, t := range toks {
		if fold || t.kind != likeLit || t.r == utf8.RuneError || !utf8.ValidRune(t.r) {
			return m
		}
		lit = utf8.AppendRune(lit, t.r)
	}
	m.lit = string(lit)
	switch {
	case lead && trail:
		m.how = likeContains
	case lead:
		m.how = likeSuffix
	case trail:
		m.how = likePrefix
	default:
		m.how = likeExact
	}
	return m
}

// match reports whether cString(s) matches the pattern. The fast paths
// look for NUL only where it matters (the literal holds none).
func (m likeMatcher) match(s string) bool {
	switch m.how {
	case likeExact:
		return strings.HasPrefix(s, m.lit) && (len(s) == len(m.lit) || s[len(m.lit)] == 0)
	case likePrefix:
		return strings.HasPrefix(s, m.lit)
	case likeSuffix:
		return strings.HasSuffix(cString(s), m.lit)
	case likeContains:
		i := strings.Index(s, m.lit)
		return i >= 0 && strings.IndexByte(s[:i], 0) < 0
	}
	return m.pat.match(cString(s))
}

// lower returns lower(args[0]) as lance_lower computes it.
func (ev *evaluator) lower(args []vec) vec { return mapStrings(args[0], strings.ToLower) }

// upper returns upper(args[0]) as lance_upper computes it.
func (ev *evaluator) upper(args []vec) vec { return mapStrings(args[0], strings.ToUpper) }

// mapStrings returns f of the text of each valid string of v.
func mapStrings(v vec, f func(string) string) vec {
	if v.cls != clsString {
		return v
	}
	out := make([]string, len(v.strs))
	for i, s := range v.strs {
		if has(v.valid, i) {
			out[i] = f(cString(s))
		}
	}
	v.strs = out
	return v
}

// length returns SQLite's length(args[0]) of a string.
func (ev *evaluator) length(args []vec) vec {
	v := args[0]
	if v.cls != clsString {
		return v
	}
	out := make([]int64, len(v.strs))
	for i, s := range v.strs {
		out[i] = sqliteLength(s)
	}
	return vec{cls: clsInt, konst: v.konst, ints: out, valid: v.valid}
}

// sqliteLength returns the characters that SQLite's length() counts in s:
// the bytes before the first NUL, except continuation bytes (10xxxxxx)
// that follow a non-ASCII byte.
func sqliteLength(s string) int64 {
	n := int64(0)
	for i := 0; i < len(s) && s[i] != 0; i++ {
		if c := s[i]; c < 0x80 || c >= 0xc0 || i == 0 || s[i-1] < 0x80 {
			n++
		}
	}
	return n
}

// startsWith returns starts_with(a, b) as lance_starts_with computes it.
func (ev *evaluator) startsWith(args []vec) vec {
	return ev.textPredicate(args[0], args[1], strings.HasPrefix)
}

// endsWith returns ends_with(a, b) as lance_ends_with computes it.
func (ev *evaluator) endsWith(args []vec) vec {
	return ev.textPredicate(args[0], args[1], strings.HasSuffix)
}

// textPredicate returns f of the texts of the strings a and b, NULL when
// either is NULL.
func (ev *evaluator) textPredicate(a, b vec, f func(string, string) bool) vec {
	if a.cls == clsNull || b.cls == clsNull {
		return vec{cls: clsNull}
	}
	n := ev.rows(a, b)
	hit := make([]uint64, words(n))
	as, bs := a.stride(), b.stride()
	for i := range n {
		hit[i/64] |= b2u(f(cString(a.strs[i*as]), cString(b.strs[i*bs]))) << (uint(i) % 64)
	}
	return ev.verdict(hit, ev.valid(n, a, b), false, a.konst && b.konst)
}

// coalesce returns the first non-NULL of args, which are of one class (or
// NULL).
func (ev *evaluator) coalesce(args []vec) vec {
	if len(args) == 1 {
		return args[0]
	}
	cls := clsNull
	takes := make([][]uint64, len(args))
	for i, a := range args {
		if a.cls != clsNull {
			cls = a.cls
		}
		takes[i] = ev.validBits(a)
	}
	return ev.pick(cls, takes, args)
}

// pick returns values of class cls whose row i is row i of vals[j] for the
// first j whose takes[j] has bit i set, and NULL when none has.
func (ev *evaluator) pick(cls class, takes [][]uint64, vals []vec) vec {
	out := vec{cls: cls}
	switch cls {
	case clsNull:
		return out
	case clsBool:
		out.tru, out.fal = make([]uint64, len(ev.ones)), make([]uint64, len(ev.ones))
	case clsInt:
		out.ints = make([]int64, ev.n)
	case clsFloat:
		out.floats = make([]float64, ev.n)
	case clsString:
		out.strs = make([]string, ev.n)
	}
	valid := make([]uint64, len(ev.ones))
	left := append([]uint64(nil), ev.ones...)
	for j, v := range vals {
		vv := ev.validBits(v)
		vt, vf := ev.bools(v)
		for w := range left {
			take := takes[j][w] & left[w]
			left[w] &^= take
			take &= vv[w]
			if cls == clsBool {
				out.tru[w] |= take & vt[w]
				out.fal[w] |= take & vf[w]
				continue
			}
			valid[w] |= take
			copyRows(out, v, w, take)
		}
	}
	if cls != clsBool {
		out.valid = valid
	}
	return out
}

// copyRows copies the rows of word w of src whose bits are set in take
// into dst, of the same class.
func copyRows(dst, src vec, w int, take uint64) {
	s := src.stride()
	for ; take != 0; take &= take - 1 {
		i := w*64 + bits.TrailingZeros64(take)
		switch dst.cls {
		case clsInt:
			dst.ints[i] = src.ints[i*s]
		case clsFloat:
			dst.floats[i] = src.floats[i*s]
		default:
			dst.strs[i] = src.strs[i*s]
		}
	}
}
