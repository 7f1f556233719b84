package expr

import (
	"strings"
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
