package store

import (
	"encoding/base64"
	"strings"
	"unicode"
	"unicode/utf8"
)

// DefaultPageSize is the page size used when a listing gives no limit, and
// MaxPageSize the largest page returned whatever the limit asked for.
const (
	DefaultPageSize = 1000
	MaxPageSize     = 10000
)

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
