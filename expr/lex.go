package expr

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
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

// lexer reads tokens from a source one at a time, as the parser asks for
// them: the parser holds at most two tokens of lookahead, so parsing
// costs memory in proportion to the tree it builds (itself bounded by
// maxDepth in depth), not to the length of the source. A source of
// millions of tokens that goes wrong at its second ("1 1 1 …") or nests
// past the limit ("((((…") fails after reading that far.
type lexer struct {
	src  string
	off  int   // byte offset of the next character
	pos  int   // its 1-based character position
	prev token // the token read last
	err  error // the error that ended the tokens, if any
}

func newLexer(src string) *lexer { return &lexer{src: src, pos: 1} }

// peekRune returns the character k characters ahead (0: the next one) and
// whether there is one. Bytes that are not UTF-8 read as U+FFFD, one each.
func (l *lexer) peekRune(k int) (rune, bool) {
	off := l.off
	for ; k > 0 && off < len(l.src); k-- {
		_, n := utf8.DecodeRuneInString(l.src[off:])
		off += n
	}
	if off >= len(l.src) {
		return 0, false
	}
	r, _ := utf8.DecodeRuneInString(l.src[off:])
	return r, true
}

// advance moves past n characters.
func (l *lexer) advance(n int) {
	for ; n > 0 && l.off < len(l.src); n-- {
		_, w := utf8.DecodeRuneInString(l.src[l.off:])
		l.off += w
		l.pos++
	}
}

// next returns the next token: tEOF at the end of the source, again and
// again. It returns a syntax error for an unterminated literal or a
// character that starts no token, and then only tEOF.
func (l *lexer) next() (token, error) {
	if l.err != nil {
		return token{tEOF, "", l.pos}, nil
	}
	t, err := l.read()
	if err != nil {
		l.err = err
		return token{tEOF, "", l.pos}, err
	}
	l.prev = t
	return t, nil
}

func (l *lexer) read() (token, error) {
	for {
		r, ok := l.peekRune(0)
		if !ok {
			return token{tEOF, "", l.pos}, nil
		}
		if !unicode.IsSpace(r) {
			break
		}
		l.advance(1)
	}
	r, _ := l.peekRune(0)
	start, at := l.off, l.pos
	switch {
	case r == '_' || unicode.IsLetter(r):
		for {
			c, ok := l.peekRune(0)
			if !ok || (c != '_' && !unicode.IsLetter(c) && !unicode.IsDigit(c)) {
				break
			}
			l.advance(1)
		}
		return token{tIdent, l.src[start:l.off], at}, nil
	case r == '`' || r == '"':
		text, ok := l.quoted(r)
		if !ok {
			return token{}, syntaxErr(at, "unterminated quoted identifier")
		}
		return token{tQuoted, text, at}, nil
	case r == '\'':
		text, ok := l.quoted(r)
		if !ok {
			return token{}, syntaxErr(at, "unterminated string literal")
		}
		return token{tString, text, at}, nil
	case isDigit(r) || (r == '.' && l.digitAt(1) && !afterOperand(l.prev)):
		n := numberLen(l.src[l.off:])
		l.advance(n)
		return token{tNumber, l.src[start:l.off], at}, nil
	}
	if r2, ok := l.peekRune(1); ok && r < utf8.RuneSelf && r2 < utf8.RuneSelf {
		if pair := string([]rune{r, r2}); slices.Contains(twoCharOps, pair) {
			l.advance(2)
			return token{tOp, pair, at}, nil
		}
	}
	if strings.ContainsRune(oneCharOps, r) {
		l.advance(1)
		return token{tOp, string(r), at}, nil
	}
	return token{}, syntaxErr(at, "unexpected character %q", r)
}

// digitAt reports whether the character k ahead is a digit.
func (l *lexer) digitAt(k int) bool {
	r, ok := l.peekRune(k)
	return ok && isDigit(r)
}

// quoted reads a literal or identifier opened by q, the next character,
// where a doubled q stands for one q. It returns the unescaped text and
// whether the closing quote was found.
func (l *lexer) quoted(q rune) (string, bool) {
	l.advance(1)
	var b strings.Builder
	for {
		r, ok := l.peekRune(0)
		if !ok {
			return "", false
		}
		l.advance(1)
		if r != q {
			b.WriteRune(r)
			continue
		}
		if r2, ok := l.peekRune(0); ok && r2 == q {
			b.WriteRune(q)
			l.advance(1)
			continue
		}
		return b.String(), true
	}
}

// numberLen returns the length in bytes (all ASCII, so in characters too)
// of the numeric literal at the start of s: digits, an optional fraction
// and an optional exponent.
func numberLen(s string) int {
	i := digitsLen(s, 0)
	if i < len(s) && s[i] == '.' {
		i = digitsLen(s, i+1)
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if j < len(s) && isDigit(rune(s[j])) {
			i = digitsLen(s, j)
		}
	}
	return i
}

func digitsLen(s string, i int) int {
	for i < len(s) && isDigit(rune(s[i])) {
		i++
	}
	return i
}

func isDigit(r rune) bool { return r >= '0' && r <= '9' }

// afterOperand reports whether t, the token before, ends an operand, in
// which case a following '.' separates path segments rather than starting
// a number.
func afterOperand(t token) bool {
	return t.kind == tIdent || t.kind == tQuoted || t.is(")") || t.is("]")
}
