package store

import (
	"encoding/base64"
	"strings"
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
// characters, and not "." or ".." (which URL paths cannot carry: clients
// resolve them away). It returns an InvalidInput error otherwise.
func ValidateName(kind, name string) error {
	if name == "" {
		return Errorf(CodeInvalidInput, "%s name must not be empty", kind)
	}
	if len(name) > 1024 {
		return Errorf(CodeInvalidInput, "%s name is longer than 1024 bytes", kind)
	}
	if !utf8.ValidString(name) {
		return Errorf(CodeInvalidInput, "%s name %q is not valid UTF-8", kind, name)
	}
	if name == "." || name == ".." {
		return Errorf(CodeInvalidInput, "%s name must not be %q", kind, name)
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f {
			return Errorf(CodeInvalidInput, "%s name %q contains a control character", kind, name)
		}
	}
	return nil
}
