package expr

import (
	"database/sql/driver"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"modernc.org/libc"
)

// runFunc computes a function of compiled SQL from its arguments' values
// on the rows of mask.
type runFunc func(m *machine, args []vec, mask []uint64) (vec, error)

// runFuncs are the functions compiled SQL calls: SQLite's own, as SQLite
// computes them, and the lance_* functions of sqlFuncs, through their Go
// implementations (vectorised where they are common in filters).
var runFuncs map[string]runFunc

func init() {
	runFuncs = map[string]runFunc{
		"length":            perRow(lengthValue),
		"abs":               absFunc,
		"nullif":            perRow(nullifValue),
		"concat":            perRow(concatValue),
		"trim":              perRow(trimValue(true, true)),
		"ltrim":             perRow(trimValue(true, false)),
		"rtrim":             perRow(trimValue(false, true)),
		"replace":           perRow(replaceValue),
		"round":             perRow(roundValue),
		"floor":             perRow(math1(math.Floor, true)),
		"ceil":              perRow(math1(math.Ceil, true)),
		"sqrt":              perRow(math1(math.Sqrt, false)),
		"power":             perRow(math2(sqlPow)),
		"mod":               perRow(math2(math.Mod)),
		"json":              perRow(func(args []value) (value, error) { return args[0], nil }),
		"json_array":        perRow(jsonArrayValue),
		"json_array_length": perRow(jsonArrayLength),
		"lance_like":        likeRun(false),
		"lance_ilike":       likeRun(true),
		"lance_lower":       mapTextFunc(strings.ToLower),
		"lance_upper":       mapTextFunc(strings.ToUpper),
		"lance_starts_with": textPredicateFunc(strings.HasPrefix),
		"lance_ends_with":   textPredicateFunc(strings.HasSuffix),
	}
	for _, f := range sqlFuncs {
		if _, ok := runFuncs[f.name]; !ok {
			runFuncs[f.name] = goFunc(f.fn)
		}
	}
}

// call returns the value of a function call on the rows of mask.
// coalesce evaluates its arguments lazily; json_array embeds the JSON of
// its json() arguments as is. It returns a code-13 error when the function
// fails on a row.
func (m *machine) call(n *sqlNode, mask []uint64) (vec, error) {
	if n.text == "coalesce" {
		return m.coalesce(n, mask)
	}
	args := make([]vec, len(n.args))
	for i, a := range n.args {
		var err error
		if args[i], err = m.eval(a, mask); err != nil {
			return vec{}, err
		}
		if n.text == "json_array" && a.kind == sqlCall && a.text == "json" {
			args[i] = m.jsonText(args[i])
		}
	}
	f, ok := runFuncs[n.text]
	if !ok {
		return vec{}, errEval("unknown function " + n.text)
	}
	return f(m, args, mask)
}

// jsonText marks text values as JSON to embed (a blob of the same bytes,
// which json_array writes raw; a real blob never reaches json_array).
func (m *machine) jsonText(v vec) vec {
	if v.cls == clsText {
		v.cls = clsBlob
	}
	return v
}

// perRow makes a runFunc of a function of one row's values.
func perRow(f func(args []value) (value, error)) runFunc {
	return func(m *machine, args []vec, mask []uint64) (vec, error) {
		n, mask, ok := m.span(mask, args...)
		if !ok {
			return nullVec, nil
		}
		b := newBuilder(n)
		vals := make([]value, len(args))
		err := forEach(n, mask, func(i int) error {
			for j, a := range args {
				vals[j] = a.at(i)
			}
			r, err := f(vals)
			b.put(i, r)
			return err
		})
		if err != nil {
			return vec{}, err
		}
		out := b.vec()
		out.konst = n == 1 && m.n != 1
		return out, nil
	}
}

// goFunc makes a runFunc of a lance_* function: called on each row with
// the arguments SQLite passes (text up to its first NUL byte, as
// modernc.org/sqlite passes it), its result converted as SQLite stores it.
func goFunc(f func([]driver.Value) (driver.Value, error)) runFunc {
	return perRow(func(args []value) (value, error) {
		dargs := make([]driver.Value, len(args))
		for i, a := range args {
			dargs[i] = driverValue(a)
		}
		r, err := f(dargs)
		if err != nil {
			return nullValue, errEval(err.Error())
		}
		return fromDriver(r), nil
	})
}

// driverValue returns x as SQLite passes it to a Go function.
func driverValue(x value) driver.Value {
	switch x.cls {
	case clsInt:
		return x.i
	case clsFloat:
		return x.f
	case clsText:
		return cString(x.s)
	case clsBlob:
		return []byte(x.s)
	}
	return nil
}

// fromDriver returns the value SQLite makes of a Go function's result.
func fromDriver(r driver.Value) value {
	switch r := r.(type) {
	case int64:
		return intValue(r)
	case float64:
		return floatValue(r)
	case bool:
		return intValue(int64(b2u(r)))
	case string:
		return textValue(r)
	case []byte:
		return value{cls: clsBlob, s: string(r)}
	}
	return nullValue
}

// cString returns s up to its first NUL byte: the text that SQLite passes
// to Go functions.
func cString(s string) string {
	if i := strings.IndexByte(s, 0); i >= 0 {
		return s[:i]
	}
	return s
}

// lengthValue is SQLite's length(): characters of text before the first
// NUL, bytes of a blob, characters of a number's text.
func lengthValue(args []value) (value, error) {
	x := args[0]
	switch x.cls {
	case clsNull:
		return x, nil
	case clsBlob:
		return intValue(int64(len(x.s))), nil
	}
	return intValue(sqliteLength(x.text())), nil
}

// sqliteLength returns the characters that SQLite's length() counts in s:
// bytes before the first NUL, where a non-ASCII byte takes the
// continuation bytes (10xxxxxx) after it along.
func sqliteLength(s string) int64 {
	n := int64(0)
	for i := 0; i < len(s) && s[i] != 0; {
		c := s[i]
		i++
		n++
		if c >= 0x80 {
			for i < len(s) && s[i]&0xc0 == 0x80 {
				i++
			}
		}
	}
	return n
}

// absFunc is SQLite's abs(): an INTEGER stays one (the smallest fails
// with an integer overflow), anything else becomes a REAL.
func absFunc(m *machine, args []vec, mask []uint64) (vec, error) {
	x := args[0]
	if x.cls != clsInt || x.over != nil {
		return perRow(absValue)(m, args, mask)
	}
	out := vec{cls: clsInt, konst: x.konst, ints: make([]int64, len(x.ints)), valid: x.valid}
	for i, v := range x.ints {
		if v == math.MinInt64 && has(x.valid, i) && (x.konst || has(mask, i)) {
			return vec{}, errEval("integer overflow")
		}
		if v < 0 {
			v = -v
		}
		out.ints[i] = v
	}
	return out, nil
}

func absValue(args []value) (value, error) {
	x := args[0]
	switch x.cls {
	case clsNull:
		return x, nil
	case clsInt:
		if x.i == math.MinInt64 {
			return nullValue, errEval("integer overflow")
		}
		if x.i < 0 {
			x.i = -x.i
		}
		return x, nil
	}
	return floatValue(math.Abs(x.asFloat64())), nil
}

// nullifValue is nullif(a, b): NULL when a equals b (two NULLs are
// equal), else a.
func nullifValue(args []value) (value, error) {
	a, b := args[0], args[1]
	if a.cls == clsNull || b.cls == clsNull {
		return a, nil
	}
	if compareValues(a, b) == 0 {
		return nullValue, nil
	}
	return a, nil
}

// concatValue is concat(): the textCol of the non-NULL arguments, joined.
func concatValue(args []value) (value, error) {
	var b strings.Builder
	for _, a := range args {
		if a.cls != clsNull {
			b.WriteString(a.text())
		}
	}
	return textValue(b.String()), nil
}

// trimValue returns SQLite's trim (left and right), ltrim or rtrim: the
// characters of the second argument up to its first NUL (a space by
// default) removed from the ends of the first, compared as UTF-8 byte
// sequences.
func trimValue(left, right bool) func([]value) (value, error) {
	return func(args []value) (value, error) {
		x := args[0]
		if x.cls == clsNull {
			return x, nil
		}
		set := []string{" "}
		if len(args) == 2 {
			if args[1].cls == clsNull {
				return nullValue, nil
			}
			set = utf8Chars(cString(args[1].text()))
		}
		s := x.text()
		if left {
			for len(s) > 0 {
				k := matchChar(set, func(c string) bool { return strings.HasPrefix(s, c) })
				if k < 0 {
					break
				}
				s = s[len(set[k]):]
			}
		}
		if right {
			for len(s) > 0 {
				k := matchChar(set, func(c string) bool { return strings.HasSuffix(s, c) })
				if k < 0 {
					break
				}
				s = s[:len(s)-len(set[k])]
			}
		}
		return textValue(s), nil
	}
}

// utf8Chars splits s into characters as SQLite's trim does: a byte and
// the continuation bytes after it when it is 0xc0 or above.
func utf8Chars(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		j := i + 1
		if s[i] >= 0xc0 {
			for j < len(s) && s[j]&0xc0 == 0x80 {
				j++
			}
		}
		out = append(out, s[i:j])
		i = j
	}
	return out
}

// matchChar returns the index of the first of set that matches (an empty
// character never does), or -1.
func matchChar(set []string, match func(string) bool) int {
	for k, c := range set {
		if c != "" && match(c) {
			return k
		}
	}
	return -1
}

// replaceValue is SQLite's replace(x, y, z): every occurrence of y in x,
// left to right, replaced by z; x unchanged when y is empty (or starts
// with a NUL byte).
func replaceValue(args []value) (value, error) {
	x, y, z := args[0], args[1], args[2]
	if x.cls == clsNull || y.cls == clsNull {
		return nullValue, nil
	}
	pat := y.text()
	if pat == "" || pat[0] == 0 {
		return textValue(x.text()), nil
	}
	if z.cls == clsNull {
		return nullValue, nil
	}
	return textValue(strings.ReplaceAll(x.text(), pat, z.text())), nil
}

// roundValue is SQLite's round(x[, digits]).
func roundValue(args []value) (value, error) {
	digits := int64(0)
	if len(args) == 2 {
		if args[1].cls == clsNull {
			return nullValue, nil
		}
		digits = args[1].asInt64()
	}
	if args[0].cls == clsNull {
		return nullValue, nil
	}
	return floatValue(sqlRound(args[0].asFloat64(), digits)), nil
}

// math1 returns one of SQLite's math functions of one number; with
// keepInt an INTEGER argument is its own result (ceil and floor).
func math1(f func(float64) float64, keepInt bool) func([]value) (value, error) {
	return func(args []value) (value, error) {
		x := args[0]
		switch {
		case x.cls == clsInt && keepInt:
			return x, nil
		case x.cls != clsInt && x.cls != clsFloat:
			return nullValue, nil
		}
		return floatValue(f(x.asFloat64())), nil
	}
}

// math2 returns one of SQLite's math functions of two numbers.
func math2(f func(x, y float64) float64) func([]value) (value, error) {
	return func(args []value) (value, error) {
		for _, a := range args {
			if a.cls != clsInt && a.cls != clsFloat {
				return nullValue, nil
			}
		}
		return floatValue(f(args[0].asFloat64(), args[1].asFloat64())), nil
	}
}

// sqlPow returns x^y as SQLite's power() computes it: with the C
// library's pow, which for SQLite in Go is modernc.org/libc's port of
// musl's (correctly rounded in all but rare cases, unlike math.Pow).
func sqlPow(x, y float64) float64 {
	powLib.Lock()
	defer powLib.Unlock()
	if powLib.tls == nil {
		powLib.tls = libc.NewTLS()
	}
	return libc.Xpow(powLib.tls, x, y)
}

// powLib is the thread state that libc's pow needs (it may set errno).
var powLib struct {
	sync.Mutex
	tls *libc.TLS
}

// jsonArrayValue is json_array(): numbers as SQLite writes them, text as
// JSON strings, JSON (marked as a blob by jsonText) as is, NULL as null.
func jsonArrayValue(args []value) (value, error) {
	var b strings.Builder
	b.WriteByte('[')
	for i, a := range args {
		if i > 0 {
			b.WriteByte(',')
		}
		switch a.cls {
		case clsNull:
			b.WriteString("null")
		case clsInt:
			b.WriteString(strconv.FormatInt(a.i, 10))
		case clsFloat:
			b.WriteString(sqlJSONReal(a.f))
		case clsBlob:
			b.WriteString(a.s)
		default:
			writeJSONString(&b, a.s)
		}
	}
	b.WriteByte(']')
	return textValue(b.String()), nil
}

// writeJSONString writes s as a JSON string: quotes, backslashes and
// control characters escaped, other bytes as they are.
func writeJSONString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte("0123456789abcdef"[c>>4])
			b.WriteByte("0123456789abcdef"[c&15])
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
}

// jsonArrayLength is json_array_length(): the elements of a JSON array, 0
// for other JSON; malformed JSON fails.
func jsonArrayLength(args []value) (value, error) {
	x := args[0]
	if x.cls == clsNull {
		return x, nil
	}
	dec := json.NewDecoder(strings.NewReader(x.text()))
	tok, err := dec.Token()
	if err != nil {
		return nullValue, errEval("malformed JSON")
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return intValue(0), nil
	}
	n := int64(0)
	for dec.More() {
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nullValue, errEval("malformed JSON")
		}
		n++
	}
	return intValue(n), nil
}

// textArg returns the text of row i of a TEXT vec as a Go function gets it;
// ok is false for NULL.
func textArg(v *vec, i int) (string, bool) {
	if v.isNull(i) {
		return "", false
	}
	if v.cls == clsText {
		return cString(v.txt.at(v.idx(i))), true
	}
	x := v.at(i)
	return cString(x.text()), true
}

// likeRun is lance_like (fold unset) or lance_ilike: vectorised for a
// constant pattern and escape over text.
func likeRun(fold bool) runFunc {
	slow := goFunc(likeSQLFunc(fold))
	return func(m *machine, args []vec, mask []uint64) (vec, error) {
		x, p, e := args[0], args[1], args[2]
		if !p.konst || !e.konst || x.cls != clsText || p.cls != clsText || e.cls != clsText || x.konst {
			return slow(m, args, mask)
		}
		esc, _ := utf8.DecodeRuneInString(cString(e.txt.at(0)))
		lm := newLikeMatcher(cString(p.txt.at(0)), esc, fold)
		hit := make([]uint64, words(m.n))
		for i := range m.n {
			hit[i/64] |= b2u(lm.match(x.txt.at(i))) << (uint(i) % 64)
		}
		return m.verdict(hit, m.validAll(m.n, x), false, m.n), nil
	}
}

// likeSQLFunc returns the Go function of lance_like or lance_ilike.
func likeSQLFunc(fold bool) func([]driver.Value) (driver.Value, error) {
	name := "lance_like"
	if fold {
		name = "lance_ilike"
	}
	for _, f := range sqlFuncs {
		if f.name == name {
			return f.fn
		}
	}
	return nil
}

// mapTextFunc is lance_lower or lance_upper: f of the text of each row.
func mapTextFunc(f func(string) string) runFunc {
	return func(m *machine, args []vec, mask []uint64) (vec, error) {
		x := args[0]
		n, mask, ok := m.span(mask, x)
		if !ok {
			return nullVec, nil
		}
		out := vec{cls: clsText, konst: x.konst, txt: textCol{strs: make([]string, n)}, valid: make([]uint64, words(n))}
		forEach(n, mask, func(i int) error {
			if s, ok := textArg(&x, i); ok {
				out.txt.strs[i] = f(s)
				set(out.valid, i)
			}
			return nil
		})
		return out, nil
	}
}

// textPredicateFunc is lance_starts_with or lance_ends_with.
func textPredicateFunc(f func(s, p string) bool) runFunc {
	return func(m *machine, args []vec, mask []uint64) (vec, error) {
		a, b := args[0], args[1]
		n, mask, ok := m.span(mask, a, b)
		if !ok {
			return nullVec, nil
		}
		hit := make([]uint64, words(n))
		valid := make([]uint64, words(n))
		forEach(n, mask, func(i int) error {
			s, ok1 := textArg(&a, i)
			p, ok2 := textArg(&b, i)
			if ok1 && ok2 {
				set(valid, i)
				if f(s, p) {
					set(hit, i)
				}
			}
			return nil
		})
		return m.verdict(hit, valid, false, n), nil
	}
}
