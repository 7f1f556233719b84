package store

import (
	"slices"
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
