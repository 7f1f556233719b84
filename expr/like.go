package expr

import (
	"unicode"
	"unicode/utf8"
)

// likeMatch reports whether s matches the SQL LIKE pattern p, where % is
// any run of characters, _ any one character and esc makes the next
// character literal. fold compares with Unicode simple case folding.
func likeMatch(s, p string, esc rune, fold bool) bool {
	return newLikePattern(p, esc, fold).match(s)
}

// likePattern is a compiled LIKE pattern.
type likePattern struct {
	toks []likeTok
	fold bool
}

// newLikePattern compiles the pattern p with escape character esc; fold
// makes it match with Unicode simple case folding.
func newLikePattern(p string, esc rune, fold bool) likePattern {
	return likePattern{toks: compileLike([]rune(p), esc), fold: fold}
}

// match reports whether s matches the pattern. Invalid UTF-8 in s counts
// as one U+FFFD character per byte, as converting s to runes would.
func (lp likePattern) match(s string) bool {
	pat := lp.toks
	// Greedy matching that backtracks only to the most recent %, which is
	// enough for patterns without other repetition: O(len(s)·len(p)).
	si, pi := 0, 0
	starP, starS := -1, 0
	for si < len(s) {
		r, w := utf8.DecodeRuneInString(s[si:])
		switch {
		case pi < len(pat) && pat[pi].kind == likeAny:
			starP, starS = pi, si
			pi++
		case pi < len(pat) && (pat[pi].kind == likeOne || lp.eq(pat[pi].r, r)):
			si += w
			pi++
		case starP >= 0:
			_, sw := utf8.DecodeRuneInString(s[starS:])
			starS += sw
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

// eq reports whether the pattern character p matches the character r.
func (lp likePattern) eq(p, r rune) bool {
	return p == r || (lp.fold && foldEqual(p, r))
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
