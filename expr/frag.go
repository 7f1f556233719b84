package expr

import (
	"bytes"
	"strings"
)

// frag is a compiled fragment: SQL text, its arguments in placeholder order
// and its type. k is set when the fragment is a constant, so that
// conversions can be done at compile time.
type frag struct {
	sql  string
	args []any
	typ  Type
	k    *konst
}

// param is a placeholder in build with its bound value.
type param struct{ v any }

// build concatenates parts into a fragment of type t. A string part is SQL
// text of this package, a frag part inserts the fragment's SQL and
// arguments, and a param part a placeholder bound to its value.
func build(t Type, parts ...any) frag {
	var b strings.Builder
	var args []any
	for _, p := range parts {
		switch p := p.(type) {
		case string:
			b.WriteString(p)
		case frag:
			b.WriteString(p.sql)
			args = append(args, p.args...)
		case param:
			b.WriteByte('?')
			args = append(args, p.v)
		}
	}
	return frag{sql: b.String(), args: args, typ: t}
}

// constant returns the fragment of a constant: NULL or a placeholder.
func constant(t Type, k konst) frag {
	if k.v == nil {
		return frag{sql: "NULL", typ: t, k: &konst{}}
	}
	f := build(t, param{k.v})
	f.k = &k
	return f
}

// isNull reports whether f is the NULL constant.
func (f frag) isNull() bool { return f.k != nil && f.k.v == nil }

// sameValue reports whether two storage values are equal.
func sameValue(a, b any) bool {
	if ab, ok := a.([]byte); ok {
		bb, ok := b.([]byte)
		return ok && bytes.Equal(ab, bb)
	}
	return a == b
}

// callSQL returns name(args...) of type t, where name is a fixed function
// name.
func callSQL(t Type, name string, args ...frag) frag {
	parts := []any{name, "("}
	for i, a := range args {
		if i > 0 {
			parts = append(parts, ", ")
		}
		parts = append(parts, a)
	}
	return build(t, append(parts, ")")...)
}
