package store

import (
	"slices"
	"strings"
	"testing"
)

func TestLocationKey(t *testing.T) {
	for _, tc := range []struct{ loc, want string }{
		{"/data/t", "file:///data/t/"},
		{"/data/t/", "file:///data/t/"},
		{"/data//x/../t", "file:///data/t/"},
		{"file:///data/t", "file:///data/t/"},
		{"file://localhost/data/t", "file:///data/t/"},
		{"S3://bucket/a/b", "s3://bucket/a/b/"},
		{"s3://bucket", "s3://bucket/"},
		{"rel/t", "relative:///rel/t/"},
		{"/", "file:///"},
	} {
		if got := LocationKey(tc.loc); got != tc.want {
			t.Errorf("LocationKey(%q) = %q, want %q", tc.loc, got, tc.want)
		}
	}
}

func TestLocationKeyAncestorsAndRange(t *testing.T) {
	key := LocationKey("s3://b/x/y/z")
	if got, want := LocationKeyAncestors(key), []string{"s3://b/", "s3://b/x/", "s3://b/x/y/"}; !slices.Equal(got, want) {
		t.Fatalf("ancestors of %q = %q, want %q", key, got, want)
	}
	end := LocationKeyRangeEnd(key)
	for _, inside := range []string{key, key + "w/", key + "~/"} {
		if !(inside >= key && inside < end) {
			t.Errorf("%q is not in [%q, %q)", inside, key, end)
		}
	}
	for _, outside := range []string{"s3://b/x/y/z0/", "s3://b/x/y/za/", "s3://b/x/y/"} {
		if outside >= key && outside < end {
			t.Errorf("%q is in [%q, %q) but not inside %q", outside, key, end, key)
		}
	}
}

// TestClashMessage: an answer that may reach a caller who cannot see the
// other table names neither the table nor its location; the record of a
// drop names both.
func TestClashMessage(t *testing.T) {
	for _, tc := range []struct{ name, location, other string }{
		{"Same", "/wh/a/t.lance", "/wh/a/t.lance"},
		{"Inside", "/wh/secret/t.lance/sub", "/wh/secret/t.lance"},
		{"Contains", "/wh", "/wh/secret/t.lance"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hidden := ClashMessage(tc.location, tc.other, "")
			// Beyond the caller's own location, nothing of the other's.
			if rest := strings.Replace(hidden, tc.location, "", 1); strings.Contains(rest, tc.other) || strings.Contains(rest, "beta$t") {
				t.Errorf("hidden message names the other table: %q", hidden)
			}
			named := ClashMessage(tc.location, tc.other, "beta$t")
			if !strings.Contains(named, "beta$t") {
				t.Errorf("named message leaves the table out: %q", named)
			}
		})
	}
}
