package store

import (
	"slices"
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

func TestNameAfter(t *testing.T) {
	for _, tc := range []struct {
		token string
		ok    bool
	}{
		{"", true},
		{"a", true},
		{"not one of ours", true},
		{"djE6YQ", true}, // what EncodePageToken("a") makes: a name all the same
		{"日本+%24", true},
		{"a\x01", false},
		{"\xff", false},
	} {
		got, err := NameAfter(tc.token)
		if tc.ok != (err == nil) || (err != nil && ErrorCode(err) != CodeInvalidInput) || (err == nil && got != tc.token) {
			t.Errorf("NameAfter(%q) = %q, %v; want ok: %v", tc.token, got, err, tc.ok)
		}
	}
}

func TestTablePageTokens(t *testing.T) {
	for _, id := range [][]string{{"t"}, {"ns", "t"}, {"a$b", "c d", "ü+"}} {
		got, err := DecodeTablePageToken(TablePageToken(id))
		if err != nil || !slices.Equal(got, id) {
			t.Errorf("round trip of %q = %q, %v", id, got, err)
		}
	}
	if got, err := DecodeTablePageToken(""); err != nil || got != nil {
		t.Errorf(`DecodeTablePageToken("") = %q, %v`, got, err)
	}
	for _, bad := range []string{"ns$t", "t", EncodePageToken(""), EncodePageToken("a\x00\x00b"), EncodePageToken("a\x01")} {
		if _, err := DecodeTablePageToken(bad); ErrorCode(err) != CodeInvalidInput {
			t.Errorf("DecodeTablePageToken(%q) = %v, want InvalidInput", bad, err)
		}
	}
}

func TestCutPage(t *testing.T) {
	for _, tc := range []struct {
		name      string
		items     []string
		size      int
		wantItems []string
		wantLast  string // "" when no next page
	}{
		{"empty", nil, 2, nil, ""},
		{"short", []string{"a"}, 2, []string{"a"}, ""},
		{"exactly full", []string{"a", "b"}, 2, []string{"a", "b"}, ""},
		{"one extra row", []string{"a", "b", "c"}, 2, []string{"a", "b"}, "b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			names, next := CutNames(tc.items, tc.size)
			if !slices.Equal(names, tc.wantItems) || next != tc.wantLast {
				t.Errorf("CutNames = %q, %q; want %q, %q", names, next, tc.wantItems, tc.wantLast)
			}
			items, token := CutPage(tc.items, tc.size, func(s string) string { return s })
			if !slices.Equal(items, tc.wantItems) {
				t.Errorf("CutPage items = %q, want %q", items, tc.wantItems)
			}
			if tc.wantLast == "" {
				if token != "" {
					t.Errorf("CutPage token = %q, want none", token)
				}
				return
			}
			if key, err := DecodePageToken(token); err != nil || key != tc.wantLast {
				t.Errorf("CutPage token decodes to %q, %v; want %q", key, err, tc.wantLast)
			}
		})
	}
}
