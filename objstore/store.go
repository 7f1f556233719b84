package objstore

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"slices"
	"strings"
)

// Store is one object store: the buckets of an S3 endpoint, or the local
// disk. Open returns the store of a URI's scheme.
type Store interface {
	// Scheme returns the URI scheme of the store's locations
	// (scheme://bucket/key): SchemeS3, or SchemeFile for the local disk.
	Scheme() string
	// Bucket returns the bucket named name: the host of a location URI;
	// on the local disk, the directory name (an absolute path), whose
	// keys are the paths below it.
	Bucket(name string) Bucket
	// Reachable returns nil when the bucket named name can be used now
	// (nothing is written: cheap enough for a readiness probe), and an
	// error saying why not otherwise.
	Reachable(ctx context.Context, name string) error
}

// The schemes of the stores lancens has.
const (
	SchemeS3   = "s3"
	SchemeFile = "file"
)

// opener opens the store of one scheme for the location u (a URI of the
// scheme; for the local disk, the absolute path in u.Path) and checks
// that lancens can commit there.
type opener func(ctx context.Context, u *url.URL, opts Options) (Store, error)

// openers are the stores by scheme: the next scheme (gs, az) is one entry.
var openers = map[string]opener{
	SchemeS3:   openS3,
	SchemeFile: openLocal,
}

// Schemes returns the URI schemes Open serves, sorted.
func Schemes() []string { return slices.Sorted(maps.Keys(openers)) }

// Open returns the store that holds uri, configured by opts (Lance's
// storage options), and checks that lancens can commit at uri: on object
// storage, that the store answers, the bucket exists, the credentials
// may write under the URI's prefix and the store honours the conditional
// requests manifest publishing relies on (S3Bucket.Check); on the local
// disk (a path or a file:// URI, which takes no options), that the
// directory exists or can be made, and is one. Returns an error naming
// the scheme, option or location at fault.
func Open(ctx context.Context, uri string, opts Options) (Store, error) {
	u, err := parseLocation(uri)
	if err != nil {
		return nil, err
	}
	open, ok := openers[u.Scheme]
	if !ok {
		var have []string
		for _, s := range Schemes() {
			have = append(have, s+"://")
		}
		return nil, fmt.Errorf("%q: no object store for the scheme %s:// (lancens has %s)", uri, u.Scheme, strings.Join(have, ", "))
	}
	return open(ctx, u, opts)
}

// parseLocation reads a location: a URI with a scheme, or a local path
// (made a file URL with an absolute path).
func parseLocation(s string) (*url.URL, error) {
	if !strings.Contains(s, "://") {
		return &url.URL{Scheme: SchemeFile, Path: s}, nil
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("malformed location %q: %w", s, err)
	}
	u.Scheme = strings.ToLower(u.Scheme)
	if u.Scheme != SchemeFile && u.Host == "" {
		return nil, fmt.Errorf("location %q names no bucket, as in %s://bucket/prefix", s, u.Scheme)
	}
	return u, nil
}

// s3Store is the Store of an S3 endpoint.
type s3Store struct{ c *S3 }

func (s s3Store) Scheme() string            { return SchemeS3 }
func (s s3Store) Bucket(name string) Bucket { return s.c.Bucket(name) }
func (s s3Store) Reachable(ctx context.Context, name string) error {
	return s.c.Bucket(name).Reachable(ctx)
}

func openS3(ctx context.Context, u *url.URL, opts Options) (Store, error) {
	c, err := NewS3(ctx, opts)
	if err != nil {
		return nil, err
	}
	if err := c.Bucket(u.Host).Check(ctx, strings.Trim(u.Path, "/")); err != nil {
		return nil, err
	}
	return s3Store{c}, nil
}

// Local returns the Store of the local disk.
func Local() Store { return localStore{} }

type localStore struct{}

func (localStore) Scheme() string            { return SchemeFile }
func (localStore) Bucket(name string) Bucket { return NewDir(name) }

// Reachable returns nil when the directory name exists.
func (localStore) Reachable(_ context.Context, name string) error {
	fi, err := os.Stat(name)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", name)
	}
	return nil
}

func openLocal(_ context.Context, u *url.URL, opts Options) (Store, error) {
	if len(opts) > 0 {
		return nil, errors.New("storage options apply to object stores, not to the local disk")
	}
	if u.Host != "" && u.Host != "localhost" {
		return nil, fmt.Errorf("file location %q names a host: only this machine's disk is reachable", u)
	}
	if err := os.MkdirAll(u.Path, 0o755); err != nil {
		return nil, err
	}
	if err := (localStore{}).Reachable(context.Background(), u.Path); err != nil {
		return nil, err
	}
	return Local(), nil
}
