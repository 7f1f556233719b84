package server

import (
	"slices"
	"testing"
)

func TestSplitID(t *testing.T) {
	for _, tc := range []struct {
		value, delim string
		want         []string
	}{
		{"$", "$", []string{}},
		{"a", "$", []string{"a"}},
		{"a$b$c", "$", []string{"a", "b", "c"}},
		{"$$a$$b$", "$", []string{"a", "b"}},
		{"a::b", "::", []string{"a", "b"}},
		{"::", "::", []string{}},
		{"a$b", "::", []string{"a$b"}},
		{"a/b", "/", []string{"a", "b"}},
		{"", "$", []string{}},
	} {
		if got := splitID(tc.value, tc.delim); !slices.Equal(got, tc.want) {
			t.Errorf("splitID(%q, %q) = %q, want %q", tc.value, tc.delim, got, tc.want)
		}
	}
}
