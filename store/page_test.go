package store

import (
	"strings"
	"testing"
)

func TestValidateName(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"a", true},
		{"日本 語+%24", true},
		{"...", true},
		{".a", true},
		{"", false},
		{strings.Repeat("x", 1025), false},
		{"a\x01b", false},
		{"a\x7fb", false},
		{"\xff", false},
		{"a\xe2\x82", false},
		{".", false},
		{"..", false},
	} {
		err := ValidateName("namespace", tc.name)
		if tc.ok != (err == nil) || (err != nil && ErrorCode(err) != CodeInvalidInput) {
			t.Errorf("ValidateName(%q) = %v, want ok: %v", tc.name, err, tc.ok)
		}
	}
}
