package objstore_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lancens/lancens/internal/testkit/s3test"
	"github.com/lancens/lancens/objstore"
)

// TestOpen: Open finds the store by the location's scheme and checks that
// lancens can commit there; it refuses schemes it has no store for, and
// options on the local disk.
func TestOpen(t *testing.T) {
	g := s3test.Start(t)
	g.CreateBucket(t, "lance")
	dir := t.TempDir()
	for _, tc := range []struct {
		name     string
		uri      string
		opts     objstore.Options
		scheme   string // "": Open fails
		errNames string // in the error of a failure
	}{
		{name: "S3", uri: "s3://lance/wh", opts: g.Options(), scheme: objstore.SchemeS3},
		{name: "S3SchemeInCapitals", uri: "S3://lance/wh", opts: g.Options(), scheme: objstore.SchemeS3},
		{name: "S3MissingBucket", uri: "s3://missing/wh", opts: g.Options(), errNames: "missing"},
		{name: "S3NoBucket", uri: "s3:///wh", opts: g.Options(), errNames: "bucket"},
		{name: "Path", uri: filepath.Join(dir, "a", "b"), scheme: objstore.SchemeFile},
		{name: "FileURI", uri: "file://" + filepath.Join(dir, "c"), scheme: objstore.SchemeFile},
		{name: "FileWithHost", uri: "file://elsewhere" + dir, errNames: "host"},
		{name: "PathWithOptions", uri: dir, opts: objstore.Options{"aws_region": "x"}, errNames: "storage options"},
		{name: "PathOnAFile", uri: filepath.Join(dir, "plain"), errNames: "not a directory"},
		{name: "UnknownScheme", uri: "gs://bucket/wh", errNames: "s3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(filepath.Join(dir, "plain"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			st, err := objstore.Open(t.Context(), tc.uri, tc.opts)
			if tc.scheme == "" {
				if err == nil || !strings.Contains(err.Error(), tc.errNames) {
					t.Fatalf("Open(%q) = %v, want an error naming %q", tc.uri, err, tc.errNames)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if st.Scheme() != tc.scheme {
				t.Fatalf("Open(%q) is a store of %s, want %s", tc.uri, st.Scheme(), tc.scheme)
			}
		})
	}
}

// TestStores: each store reaches its buckets through the Bucket interface
// and says whether a bucket is there.
func TestStores(t *testing.T) {
	g := s3test.Start(t)
	g.CreateBucket(t, "lance")
	s3, err := objstore.Open(t.Context(), "s3://lance/wh", g.Options())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		name            string
		st              objstore.Store
		bucket, missing string
	}{
		{"S3", s3, "lance", "missing"},
		{"Local", objstore.Local(), dir, filepath.Join(dir, "missing")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			if err := tc.st.Reachable(ctx, tc.bucket); err != nil {
				t.Fatalf("Reachable(%q) = %v", tc.bucket, err)
			}
			if err := tc.st.Reachable(ctx, tc.missing); err == nil {
				t.Fatalf("Reachable(%q) = nil for a missing bucket", tc.missing)
			}
			b := tc.st.Bucket(tc.bucket)
			if err := os.WriteFile(filepath.Join(dir, "staged"), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			if tc.name == "S3" {
				g.Put(t, "lance", "staged", []byte("x"))
			}
			if _, err := b.Publish(ctx, "staged", "t/final", "", 10); err != nil {
				t.Fatal(err)
			}
			if _, err := b.Publish(ctx, "staged", "t/final", "", 10); !errors.Is(err, objstore.ErrPrecondition) {
				t.Fatalf("a second publication = %v, want ErrPrecondition", err)
			}
			if err := b.DeletePrefix(ctx, "t/"); err != nil {
				t.Fatal(err)
			}
			if _, err := b.Stat(ctx, "t/final"); !errors.Is(err, objstore.ErrNotFound) {
				t.Fatalf("after DeletePrefix, Stat = %v", err)
			}
		})
	}
}
