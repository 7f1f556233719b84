package expr

import "unicode"

// likeMatch reports whether s matches the SQL LIKE pattern p, where % is
// any run of characters, _ any one character and esc makes the next
// character literal. fold compares with Unicode simple case folding.
func likeMatch(s, p string, esc rune, fold bool) bool {
	str, pat := []rune(s), compileLike([]rune(p), esc)
	eq := func(a, b rune) bool { return a == b }
	if fold {
		eq = foldEqual
	}
	// Greedy matching that backtracks only to the most recent %, which is
	// enough for patterns without other repetition: O(len(s)·len(p)).
	si, pi := 0, 0
	starP, starS := -1, 0
	for si < len(str) {
		switch {
		case pi < len(pat) && pat[pi].kind == likeAny:
			starP, starS = pi, si
			pi++
		case pi < len(pat) && (pat[pi].kind == likeOne || eq(pat[pi].r, str[si])):
			si++
			pi++
		case starP >= 0:
			starS++
			si, pi = starS, starP+1
		default:
			return false
		}
	}
	for pi < len(pat) && pat[pi].kind == likeAny {
		pi++
	}
	return pi == len(pat)
}

type likeKind int

const (
	likeLit likeKind = iota // the character r
	likeOne                 // _
	likeAny                 // %
)

type likeTok struct {
	kind likeKind
	r    rune
}

// compileLike splits a pattern into tokens; an escape character before any
// character (or at the very end) stands for that character literally.
func compileLike(p []rune, esc rune) []likeTok {
	out := make([]likeTok, 0, len(p))
	for i := 0; i < len(p); i++ {
		switch r := p[i]; {
		case r == esc && i+1 < len(p):
			i++
			out = append(out, likeTok{likeLit, p[i]})
		case r == '%':
			if len(out) == 0 || out[len(out)-1].kind != likeAny {
				out = append(out, likeTok{kind: likeAny})
			}
		case r == '_':
			out = append(out, likeTok{kind: likeOne})
		default:
			out = append(out, likeTok{likeLit, r})
		}
	}
	return out
}

// foldEqual reports whether a and b are equal under simple case folding.
func foldEqual(a, b rune) bool {
	if a == b {
		return true
	}
	for r := unicode.SimpleFold(a); r != a; r = unicode.SimpleFold(r) {
		if r == b {
			return true
		}
	}
	return false
}
