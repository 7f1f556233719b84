package expr

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/lancens/lancens/store"
)

// render prints an expression tree as an S-expression.
func render(e Expr) string {
	if e == nil {
		return "_"
	}
	args := func(op string, es ...Expr) string {
		parts := []string{op}
		for _, x := range es {
			parts = append(parts, render(x))
		}
		return "(" + strings.Join(parts, " ") + ")"
	}
	switch e := e.(type) {
	case *literal:
		if e.val.v == nil {
			return "NULL"
		}
		return fmt.Sprintf("%v:%v", e.val.v, e.typ)
	case *field:
		return strings.Join(e.path, "|")
	case *unary:
		return args(e.op, e.x)
	case *binary:
		return args(e.op, e.l, e.r)
	case *logical:
		return args(map[bool]string{true: "AND", false: "OR"}[e.and], e.terms...)
	case *isNull:
		return args(fmt.Sprintf("ISNULL not=%v", e.not), e.x)
	case *isBool:
		return args(fmt.Sprintf("IS%v not=%v", e.value, e.not), e.x)
	case *inList:
		return args(fmt.Sprintf("IN not=%v", e.not), append([]Expr{e.x}, e.list...)...)
	case *between:
		return args(fmt.Sprintf("BETWEEN not=%v", e.not), e.x, e.lo, e.hi)
	case *like:
		return args(fmt.Sprintf("LIKE fold=%v not=%v", e.fold, e.not), e.x, e.pattern, e.esc)
	case *cast:
		return args("CAST "+e.to.String()+fmt.Sprint(e.to.Unit), e.x)
	case *call:
		return args(e.name, e.args...)
	case *caseExpr:
		return args("CASE", e.children()...)
	case *array:
		return args("ARRAY", e.elems...)
	}
	return "?"
}

// parseCases are sources and their trees as render prints them.
var parseCases = []struct{ src, want string }{
	{"a = 1", "(= a 1:integer)"},
	{"a == 1", "(= a 1:integer)"},
	{"a != 1", "(<> a 1:integer)"},
	{"a OR b AND c", "(OR a (AND b c))"},
	{"a OR b OR c", "(OR a b c)"},
	{"(a OR b) AND c", "(AND (OR a b) c)"},
	{"NOT a = 1 AND b", "(AND (NOT (= a 1:integer)) b)"},
	{"NOT NOT a", "(NOT (NOT a))"},
	{"1 + 2 * 3", "(+ 1:integer (* 2:integer 3:integer))"},
	{"1 - 2 - 3", "(- (- 1:integer 2:integer) 3:integer)"},
	{"a || b = 'x'", "(= (|| a b) x:string)"},
	{"-a * b", "(* (- a) b)"},
	{"-1", "-1:integer"},
	{"- 1.5", "-1.5:float"},
	{"-9223372036854775808", "-9223372036854775808:integer"},
	{".5", "0.5:float"},
	{"1e3", "1000:float"},
	{"1.5E-1", "0.15:float"},
	{"'it''s'", "it's:string"},
	{"TRUE AND false", "(AND 1:boolean 0:boolean)"},
	{"null", "NULL"},
	{"a.b.c", "a|b|c"},
	{"`a.b`.c", "a.b|c"},
	{"`a``b`", "a`b"},
	{`"My Col" = 1`, "(= My Col 1:integer)"},
	{`"a""b"`, `a"b`},
	{"CamelCase", "CamelCase"},
	{"_rowid", "_rowid"},
	{"a.`end`", "a|end"},
	{"a IS NULL", "(ISNULL not=false a)"},
	{"a IS NOT NULL", "(ISNULL not=true a)"},
	{"a IS TRUE", "(IStrue not=false a)"},
	{"a IS NOT FALSE", "(ISfalse not=true a)"},
	{"a IS DISTINCT FROM b", "(IS DISTINCT FROM a b)"},
	{"a IS NOT DISTINCT FROM b", "(IS NOT DISTINCT FROM a b)"},
	{"a IN (1, 2)", "(IN not=false a 1:integer 2:integer)"},
	{"a NOT IN (1)", "(IN not=true a 1:integer)"},
	{"a BETWEEN 1 AND 2 AND b", "(AND (BETWEEN not=false a 1:integer 2:integer) b)"},
	{"a NOT BETWEEN 1 + 1 AND 2", "(BETWEEN not=true a (+ 1:integer 1:integer) 2:integer)"},
	{"a LIKE 'x%'", "(LIKE fold=false not=false a x%:string _)"},
	{"a NOT ILIKE 'x' ESCAPE '!'", "(LIKE fold=true not=true a x:string !:string)"},
	{"CAST(a AS BIGINT)", "(CAST integer0 a)"},
	{"CAST(a AS DOUBLE PRECISION)", "(CAST float0 a)"},
	{"CAST(a AS VARCHAR(10))", "(CAST string0 a)"},
	{"CAST(a AS DECIMAL(10, 2))", "(CAST decimal(10,2)0 a)"},
	{"CAST(a AS DECIMAL(5))", "(CAST decimal(5,0)0 a)"},
	{"CAST(a AS DECIMAL)", "(CAST decimal(38,10)0 a)"},
	{"CAST(a AS TIMESTAMP)", "(CAST timestamp3 a)"},
	{"CAST(a AS TIMESTAMP(3))", "(CAST timestamp1 a)"},
	{"CAST(a AS TIMESTAMP(6))", "(CAST timestamp2 a)"},
	{"CAST(a AS TIMESTAMP(0))", "(CAST timestamp0 a)"},
	{"a::int + 1", "(+ (CAST integer0 a) 1:integer)"},
	{"-1::text", "(CAST string0 -1:integer)"},
	{"LOWER(a)", "(lower a)"},
	{"f()", "(f)"},
	{"substring(a FROM 2 FOR 3)", "(substring a 2:integer 3:integer)"},
	{"substring(a FROM 2)", "(substring a 2:integer)"},
	{"substr(a, 2)", "(substr a 2:integer)"},
	{"[1, a]", "(ARRAY 1:integer a)"},
	{"make_array()", "(ARRAY)"},
	{"CASE WHEN a THEN 1 ELSE 2 END", "(CASE a 1:integer 2:integer)"},
	{"CASE a WHEN 1 THEN 2 END", "(CASE a 1:integer 2:integer)"},
	{"DATE '2024-02-29'", "19782:date32"},
	{"TIMESTAMP '1970-01-01 00:00:01.5'", "1500000000:timestamp"},
	{"TIMESTAMP '1970-01-01T01:00:00+01:00'", "0:timestamp"},
	{"TIMESTAMP '1000-01-01'", "-30610224000000000:timestamp"},
	{"TIME '01:00'", "3600000000000:time"},
	{"date = 1", "(= date 1:integer)"},
	{"date.x", "date|x"},
	{"  a\t=\n1  ", "(= a 1:integer)"},
}

func TestParse(t *testing.T) {
	for _, tt := range parseCases {
		e, err := Parse(tt.src)
		if err != nil {
			t.Errorf("%q: %v", tt.src, err)
			continue
		}
		if got := render(e); got != tt.want {
			t.Errorf("%q: got %s, want %s", tt.src, got, tt.want)
		}
	}
}

// parseErrorCases are sources that do not parse and their error messages.
var parseErrorCases = []struct {
	src string
	msg string
}{
	{"", "syntax error at position 1: unexpected end of input"},
	{"a = (1 + 2))", "syntax error at position 12: unexpected ')'"},
	{"a = ", "syntax error at position 5: unexpected end of input"},
	{"a = 'x", "syntax error at position 5: unterminated string literal"},
	{"`a", "syntax error at position 1: unterminated quoted identifier"},
	{"a # b", "syntax error at position 3: unexpected character '#'"},
	{"é = ü ?", "syntax error at position 7: unexpected character '?'"},
	{"9223372036854775808", "syntax error at position 1: integer 9223372036854775808 out of range"},
	{"1e999", "syntax error at position 1: number 1e999 out of range"},
	{"a IN ()", "syntax error at position 3: IN list is empty"},
	{"a BETWEEN 1", "syntax error at position 12: expected AND, found end of input"},
	{"CAST(a AS blob2)", "syntax error at position 11: unknown type 'blob2'"},
	{"CAST(a AS DECIMAL(2, 3))", "syntax error at position 18: invalid parameters for type DECIMAL"},
	{"CAST(a AS TIMESTAMP(10))", "syntax error at position 20: invalid parameters for type TIMESTAMP"},
	{"CAST(a, b)", "syntax error at position 7: expected AS, found ','"},
	{"DATE '2024-02-30'", "syntax error at position 6: invalid DATE literal"},
	{"TIMESTAMP 'yesterday'", "syntax error at position 11: invalid TIMESTAMP literal"},
	{"CASE END", "syntax error at position 6: unexpected 'END'"},
	{"CASE a END", "syntax error at position 8: CASE needs at least one WHEN"},
	{"a IS 1", "syntax error at position 6: unexpected number 1"},
	{"and = 1", "syntax error at position 1: unexpected 'and'"},
	{"f(1,)", "syntax error at position 5: unexpected ')'"},
	{"a.", "syntax error at position 3: unexpected end of input"},
	{"a.'x'", "syntax error at position 3: unexpected string literal"},
	{"a b", "syntax error at position 3: unexpected 'b'"},
}

func TestParseErrors(t *testing.T) {
	for _, tt := range parseErrorCases {
		_, err := Parse(tt.src)
		if store.ErrorCode(err) != store.CodeInvalidInput {
			t.Errorf("%q: got %v, want code 13", tt.src, err)
			continue
		}
		if err.Error() != tt.msg {
			t.Errorf("%q: got %q, want %q", tt.src, err.Error(), tt.msg)
		}
	}
}

func TestParseDepth(t *testing.T) {
	tests := []struct {
		name string
		src  func(n int) string
	}{
		{"parentheses", func(n int) string { return strings.Repeat("(", n) + "a" + strings.Repeat(")", n) }},
		{"not", func(n int) string { return strings.Repeat("NOT ", n) + "a" }},
		{"minus", func(n int) string { return strings.Repeat("- ", n) + "a" }},
		{"sum", func(n int) string { return "a" + strings.Repeat(" + a", n) }},
		{"calls", func(n int) string { return strings.Repeat("abs(", n) + "a" + strings.Repeat(")", n) }},
		{"casts", func(n int) string { return "a" + strings.Repeat("::int", n) }},
		{"arrays", func(n int) string { return strings.Repeat("[", n) + "a" + strings.Repeat("]", n) }},
	}
	for _, tt := range tests {
		if _, err := Parse(tt.src(maxDepth - 2)); err != nil {
			t.Errorf("%s at depth %d: %v", tt.name, maxDepth-2, err)
		}
		_, err := Parse(tt.src(10000))
		if store.ErrorCode(err) != store.CodeInvalidInput || !strings.Contains(err.Error(), "nested too deeply") {
			t.Errorf("%s at depth 10000: got %v", tt.name, err)
		}
	}
	// Long flat chains are not deep.
	if _, err := Parse("a" + strings.Repeat(" OR a", 10000)); err != nil {
		t.Errorf("long OR chain: %v", err)
	}
}

// fieldPaths returns the distinct field paths that e references, in order
// of first appearance (nil for a nil e).
func fieldPaths(e Expr) [][]string {
	var out [][]string
	seen := map[string]bool{}
	var walk func(Expr)
	walk = func(e Expr) {
		if f, ok := e.(*field); ok {
			key := fmt.Sprintf("%q", f.path)
			if !seen[key] {
				seen[key] = true
				out = append(out, append([]string(nil), f.path...))
			}
		}
		for _, c := range e.children() {
			walk(c)
		}
	}
	if e != nil {
		walk(e)
	}
	return out
}

// TestFieldPaths checks the paths the parser makes of dotted and quoted
// names.
func TestFieldPaths(t *testing.T) {
	e, err := Parse("a.b = 1 AND c IN (a.b, `a.b`, d) OR lower(c) LIKE e.f || 'x'")
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprintf("%q", fieldPaths(e))
	want := `[["a" "b"] ["c"] ["a.b"] ["d"] ["e" "f"]]`
	if got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

// TestParseReadsAsItGoes parses sources of millions of tokens that go
// wrong early: each fails at once with the position of its fault, having
// allocated a small fraction of its length. Before the lexer streamed
// tokens into the parser, it tokenised the whole source first: a 30 MB
// filter of parentheses held 15M tokens, about 2 GiB.
func TestParseReadsAsItGoes(t *testing.T) {
	const n = 3_000_000
	for _, tc := range []struct {
		name, src string
		pos       int // of the error
	}{
		{"parentheses", strings.Repeat("(", n), maxDepth + 1},
		{"ones", strings.Repeat("1 ", n), 3},
		{"bad_character_at_the_end", "a = 1" + strings.Repeat(" ", n) + "#", n + 6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := Parse(tc.src)
			runtime.ReadMemStats(&after)
			if store.ErrorCode(err) != store.CodeInvalidInput || !strings.Contains(err.Error(), fmt.Sprintf("position %d:", tc.pos)) {
				t.Fatalf("got %v, want a syntax error at position %d", err, tc.pos)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
				t.Fatalf("parsing a %d-byte source allocated %d bytes", len(tc.src), alloc)
			}
		})
	}
}
