package store

import (
	"encoding/base64"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// DefaultPageSize is the page size used when a listing gives no limit, and
// MaxPageSize the largest page returned whatever the limit asked for.
const (
	DefaultPageSize = 1000
	MaxPageSize     = 10000
)

// Page tokens. A listing resumes after the last item of the previous page:
// given a token, a page holds only the items that sort strictly after the
// item the token names. Names sort by the bytes of their UTF-8 encoding
// (code point order): SQLite's BINARY collation, PostgreSQL's COLLATE "C".
//
//   - Listings of names (ListNamespaces, ListTables): the token is a name, in
//     plain text. A backend returns the last name of a full page as the next
//     token, and reads any token it is given the same way, as the name to
//     start after, whether or not an object has that name: clients make
//     their own tokens (the LanceDB SDK sends the last name it has, and
//     tableNames({startAfter}) sends startAfter). NameAfter checks a token.
//   - ListAllTables: identifiers sort name by name (a shorter identifier
//     before the longer ones it begins), and the token is
//     TablePageToken(last identifier). The HTTP layer reads any other string
//     as an identifier written with the request's delimiter, and passes the
//     store a TablePageToken of it.
//   - Other listings (versions, tags, branches, indexes): the token is
//     EncodePageToken(key), the key being what the listing sorts by (a name,
//     a version number); DecodePageToken refuses other strings.

const pageTokenPrefix = "v1:"

// PageSize returns the number of items to put on a page for a requested
// limit: DefaultPageSize for 0 or less, at most MaxPageSize.
func PageSize(limit int) int {
	switch {
	case limit <= 0:
		return DefaultPageSize
	case limit > MaxPageSize:
		return MaxPageSize
	}
	return limit
}

// CutNames trims a listing of names fetched with one extra row to size and
// returns the token for the next page, its last name, when that extra row
// was there (see NameAfter); "" when the listing ends here.
func CutNames(names []string, size int) ([]string, string) {
	if len(names) <= size {
		return names, ""
	}
	return names[:size], names[size-1]
}

// CutPage trims a listing fetched with one extra row to size and returns the
// token for the next page, made with EncodePageToken from the key of its
// last item, when that extra row was there; "" when the listing ends here.
func CutPage[T any](items []T, size int, key func(T) string) ([]T, string) {
	if len(items) <= size {
		return items, ""
	}
	items = items[:size]
	return items, EncodePageToken(key(items[size-1]))
}

// NameAfter returns the name a listing of names resumes after for token
// (the token itself; "" starts at the beginning). It returns an
// InvalidInput error for a token that could not be a name: not valid UTF-8,
// or holding a control character.
func NameAfter(token string) (string, error) {
	if err := ValidateText("page_token", token); err != nil {
		return "", err
	}
	return token, nil
}

// EncodePageToken returns the opaque token that resumes a listing after key.
func EncodePageToken(key string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(pageTokenPrefix + key))
}

// DecodePageToken returns the key a token resumes after ("" for an empty
// token). It returns an InvalidInput error for a token this server did not
// issue.
func DecodePageToken(token string) (string, error) {
	if token == "" {
		return "", nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || !strings.HasPrefix(string(raw), pageTokenPrefix) {
		return "", Errorf(CodeInvalidInput, "invalid page_token %q", token)
	}
	return strings.TrimPrefix(string(raw), pageTokenPrefix), nil
}

// idSeparator joins the names of an identifier inside a ListAllTables
// token; names hold no control characters, so it splits back unambiguously.
const idSeparator = "\x00"

// TablePageToken returns the ListAllTables token that resumes after the
// table id.
func TablePageToken(id []string) string {
	return EncodePageToken(strings.Join(id, idSeparator))
}

// DecodeTablePageToken returns the identifier a ListAllTables token resumes
// after (nil for an empty token). It returns an InvalidInput error for a
// string TablePageToken did not make.
func DecodeTablePageToken(token string) ([]string, error) {
	key, err := DecodePageToken(token)
	if err != nil || token == "" {
		return nil, err
	}
	id := strings.Split(key, idSeparator)
	for _, name := range id {
		if ValidateName("table", name) != nil {
			return nil, Errorf(CodeInvalidInput, "invalid page_token %q", token)
		}
	}
	return id, nil
}

// ValidateName checks one element of an identifier: it must be non-empty,
// valid UTF-8 (JSON answers could not carry it otherwise), free of control
// characters (C0, DEL and C1), and not "." or ".." (which URL paths cannot
// carry: clients resolve them away). It returns an InvalidInput error
// otherwise.
func ValidateName(kind, name string) error {
	if name == "" {
		return Errorf(CodeInvalidInput, "%s name must not be empty", kind)
	}
	if len(name) > 1024 {
		return Errorf(CodeInvalidInput, "%s name is longer than 1024 bytes", kind)
	}
	if name == "." || name == ".." {
		return Errorf(CodeInvalidInput, "%s name must not be %q", kind, name)
	}
	return ValidateText(kind+" name", name)
}

// ValidateNewName checks the name of an object being created or renamed
// (a namespace, a table): ValidateName, and more, because two names that
// look alike must not name two objects: it must be in Unicode
// Normalization Form C (a composed "é", not "e" and a combining accent:
// lancens refuses other forms rather than rewrite what the client sent)
// and hold no invisible formatting character — bidirectional controls
// (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069), zero-width
// characters (U+200B–U+200D, U+2060) and the byte order mark (U+FEFF).
// Existing names are looked up as they are. Returns InvalidInput (13).
func ValidateNewName(kind, name string) error {
	if err := ValidateName(kind, name); err != nil {
		return err
	}
	if !norm.NFC.IsNormalString(name) {
		return Errorf(CodeInvalidInput, "%s name %q is not in Unicode normal form C: send its characters composed (NFC)", kind, name)
	}
	for _, r := range name {
		if invisibleFormat(r) {
			return Errorf(CodeInvalidInput, "%s name %q contains the invisible character U+%04X", kind, name, r)
		}
	}
	return nil
}

// invisibleFormat reports whether r is a character ValidateNewName
// refuses: a bidirectional control, a zero-width character or the byte
// order mark.
func invisibleFormat(r rune) bool {
	switch r {
	case '\u200B', '\u200C', '\u200D', '\u2060', '\uFEFF':
		return true
	}
	return unicode.Is(unicode.Bidi_Control, r)
}

// ValidateText checks that s is valid UTF-8 without control characters
// (C0, DEL and C1), as names and other identifiers must be. what says what s
// is in the message. It returns an InvalidInput error otherwise.
func ValidateText(what, s string) error {
	if !utf8.ValidString(s) {
		return Errorf(CodeInvalidInput, "%s %q is not valid UTF-8", what, s)
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return Errorf(CodeInvalidInput, "%s %q contains a control character", what, s)
		}
	}
	return nil
}
