package main

import "testing"

// TestCutLast checks the split of a table's location into the LanceDB
// database holding it and the table's directory: an s3:// URL keeps its
// double slash (path.Dir would clean it to s3:/, which Lance rejects).
func TestCutLast(t *testing.T) {
	for _, tc := range []struct {
		in, before, after string
		found             bool
	}{
		{"s3://lance/wh/facts-0a1b.lance", "s3://lance/wh", "facts-0a1b.lance", true},
		{"s3://lance/facts.lance", "s3://lance", "facts.lance", true},
		{"/tmp/wh/ns/t-1.lance", "/tmp/wh/ns", "t-1.lance", true},
		{"facts.lance", "facts.lance", "", false},
	} {
		before, after, found := cutLast(tc.in, "/")
		if before != tc.before || after != tc.after || found != tc.found {
			t.Errorf("cutLast(%q) = %q, %q, %v; want %q, %q, %v", tc.in, before, after, found, tc.before, tc.after, tc.found)
		}
	}
}
