package expr

import "bytes"

// frag is a compiled fragment: its SQL node and its type. k is set when
// the fragment is a constant, so that conversions can be done at compile
// time.
type frag struct {
	n   *sqlNode
	typ Type
	k   *konst
}

// constant returns the fragment of a constant: NULL or a value.
func constant(t Type, k konst) frag {
	if k.v == nil {
		return frag{n: constNode(nil), typ: t, k: &konst{}}
	}
	return frag{n: constNode(k.v), typ: t, k: &k}
}

// arg returns a placeholder fragment bound to v, an argument of a function
// that the compiler passes.
func arg(v any) frag { return frag{n: constNode(v)} }

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

// nodes returns the SQL nodes of fs.
func nodes(fs []frag) []*sqlNode {
	out := make([]*sqlNode, len(fs))
	for i, f := range fs {
		out[i] = f.n
	}
	return out
}

// callSQL returns name(args...) of type t, where name is a fixed function
// name.
func callSQL(t Type, name string, args ...frag) frag {
	return frag{n: callNode(name, nodes(args)...), typ: t}
}
