package expr

import (
	"slices"
	"strings"
	"unicode"
)

// tokKind classifies tokens.
type tokKind int

const (
	tEOF    tokKind = iota
	tIdent          // bare identifier or keyword
	tQuoted         // `quoted` or "quoted" identifier: never a keyword
	tNumber         // numeric literal, as written
	tString         // 'string' literal, unescaped
	tOp             // operator or punctuation
)

// token is one lexeme. pos is its 1-based character position in the source.
type token struct {
	kind tokKind
	text string
	pos  int
}

// describe returns how an error message names t.
func (t token) describe() string {
	switch t.kind {
	case tEOF:
		return "end of input"
	case tString:
		return "string literal"
	case tNumber:
		return "number " + t.text
	case tQuoted:
		return "quoted identifier"
	}
	return "'" + t.text + "'"
}

// is reports whether t is the operator op or the keyword op (any case).
func (t token) is(op string) bool {
	switch t.kind {
	case tOp:
		return t.text == op
	case tIdent:
		return strings.EqualFold(t.text, op)
	}
	return false
}

// twoCharOps are the operators of two characters; single characters are
// listed in oneCharOps.
var twoCharOps = []string{"==", "!=", "<>", "<=", ">=", "||", "::"}

const oneCharOps = "(),.[]+-*/%=<>"

// lex splits src into tokens ending with a tEOF token. It returns a syntax
// error for an unterminated literal or a character that starts no token.
func lex(src string) ([]token, error) {
	rs := []rune(src)
	var toks []token
	for i := 0; i < len(rs); {
		r := rs[i]
		start := i
		switch {
		case unicode.IsSpace(r):
			i++
			continue
		case r == '_' || unicode.IsLetter(r):
			for i < len(rs) && (rs[i] == '_' || unicode.IsLetter(rs[i]) || unicode.IsDigit(rs[i])) {
				i++
			}
			toks = append(toks, token{tIdent, string(rs[start:i]), start + 1})
			continue
		case r == '`' || r == '"':
			text, n, ok := quoted(rs[i:], r)
			if !ok {
				return nil, syntaxErr(start+1, "unterminated quoted identifier")
			}
			toks = append(toks, token{tQuoted, text, start + 1})
			i += n
			continue
		case r == '\'':
			text, n, ok := quoted(rs[i:], r)
			if !ok {
				return nil, syntaxErr(start+1, "unterminated string literal")
			}
			toks = append(toks, token{tString, text, start + 1})
			i += n
			continue
		case isDigit(r) || (r == '.' && i+1 < len(rs) && isDigit(rs[i+1]) && !afterOperand(toks)):
			n := numberLen(rs[i:])
			toks = append(toks, token{tNumber, string(rs[i : i+n]), start + 1})
			i += n
			continue
		}
		if i+1 < len(rs) {
			pair := string(rs[i : i+2])
			if slices.Contains(twoCharOps, pair) {
				toks = append(toks, token{tOp, pair, start + 1})
				i += 2
				continue
			}
		}
		if strings.ContainsRune(oneCharOps, r) {
			toks = append(toks, token{tOp, string(r), start + 1})
			i++
			continue
		}
		return nil, syntaxErr(start+1, "unexpected character %q", r)
	}
	return append(toks, token{tEOF, "", len(rs) + 1}), nil
}

// quoted reads a literal or identifier opened by q at rs[0], where a doubled
// q stands for one q. It returns the unescaped text, the number of runes
// consumed and whether the closing quote was found.
func quoted(rs []rune, q rune) (string, int, bool) {
	var b strings.Builder
	for i := 1; i < len(rs); i++ {
		if rs[i] != q {
			b.WriteRune(rs[i])
			continue
		}
		if i+1 < len(rs) && rs[i+1] == q {
			b.WriteRune(q)
			i++
			continue
		}
		return b.String(), i + 1, true
	}
	return "", 0, false
}

// numberLen returns the length of the numeric literal at the start of rs:
// digits, an optional fraction and an optional exponent.
func numberLen(rs []rune) int {
	i := digitsLen(rs, 0)
	if i < len(rs) && rs[i] == '.' {
		i = digitsLen(rs, i+1)
	}
	if i < len(rs) && (rs[i] == 'e' || rs[i] == 'E') {
		j := i + 1
		if j < len(rs) && (rs[j] == '+' || rs[j] == '-') {
			j++
		}
		if j < len(rs) && isDigit(rs[j]) {
			i = digitsLen(rs, j)
		}
	}
	return i
}

func digitsLen(rs []rune, i int) int {
	for i < len(rs) && isDigit(rs[i]) {
		i++
	}
	return i
}

func isDigit(r rune) bool { return r >= '0' && r <= '9' }

// afterOperand reports whether the last token ends an operand, in which case
// a following '.' separates path segments rather than starting a number.
func afterOperand(toks []token) bool {
	if len(toks) == 0 {
		return false
	}
	t := toks[len(toks)-1]
	return t.kind == tIdent || t.kind == tQuoted || t.is(")") || t.is("]")
}
