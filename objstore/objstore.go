// Package objstore is lancens' one way to read and write objects where table
// data lives: a bucket on S3 (or any S3-compatible store) and a directory on
// the local disk behind the same small interface. It offers what a commit
// coordinator needs from storage and nothing more: reading small objects,
// publishing an object under a new key only if that key is free
// (put-if-absent), conditional deletes, and deleting everything under a
// prefix. S3Bucket.Blobs also serves the Lance packages' blob.Store (range
// reads, multipart writes, put-if-absent, listing) on the same bucket.
//
// Open returns the Store for a location by its URI scheme (s3://, or a
// local path or file:// URI) and checks that lancens can commit there;
// callers see only the Store and Bucket interfaces. A new kind of store
// is one entry in openers.
package objstore

import (
	"context"
	"errors"
	"fmt"
)

// Info describes a stored object.
type Info struct {
	Size int64
	// ETag identifies this content of the object: it changes whenever the
	// object is written again. Conditional operations compare it.
	ETag string
	// PublishedFrom is the key Publish copied the object from, on a store
	// that keeps it with the object (S3, as the user metadata
	// MetaPublishedFrom); "" for an object written any other way, and
	// always on local disk, where Publish links the file and keeps no mark.
	PublishedFrom string
}

// MetaPublishedFrom is the user metadata (x-amz-meta-lancens-published-from)
// in which Publish marks an object on S3 with the key it came from: a
// writer that is not lancens never sets it.
const MetaPublishedFrom = "lancens-published-from"

// Bucket is a flat space of objects named by keys: "/"-separated paths
// without a leading "/".
type Bucket interface {
	// Stat returns the size and entity tag of the object at key. It
	// returns an error wrapping ErrNotFound when there is none.
	Stat(ctx context.Context, key string) (Info, error)

	// Get returns the content of the object at key, which must be at most
	// limit bytes. It returns an error wrapping ErrNotFound when there is
	// none, and one wrapping ErrTooLarge when it is bigger.
	Get(ctx context.Context, key string, limit int64) ([]byte, Info, error)

	// Publish puts the content of the object at src under dst, durably
	// (as the store defines it: a Dir made by NewDirNoSync leaves it in
	// the operating system's cache); src stays. Without ifMatch it succeeds only if no object exists at
	// dst; with it, only if the object at dst has that entity tag, which it
	// then replaces. Otherwise it changes nothing and returns an error
	// wrapping ErrPrecondition. It returns an error wrapping ErrNotFound
	// when src does not exist, and ErrTooLarge when src is bigger than
	// limit.
	Publish(ctx context.Context, src, dst, ifMatch string, limit int64) (Info, error)

	// Delete removes the object at key; with ifMatch, only if its entity
	// tag is that (otherwise it returns an error wrapping
	// ErrPrecondition). A missing object is not an error.
	Delete(ctx context.Context, key, ifMatch string) error

	// DeletePrefix removes every object whose key starts with prefix,
	// which must end in "/". Nothing under it is not an error.
	DeletePrefix(ctx context.Context, prefix string) error
}

var (
	// ErrNotFound reports a missing object.
	ErrNotFound = errors.New("object not found")
	// ErrPrecondition reports a conditional write or delete whose
	// condition did not hold: the key was taken, or held other content.
	ErrPrecondition = errors.New("precondition failed")
	// ErrTooLarge reports an object bigger than the caller accepts.
	ErrTooLarge = errors.New("object too large")
)

// Error is a failure of an operation on one object, with the store's own
// error as its cause.
type Error struct {
	Op, Key string
	Err     error
}

func (e *Error) Error() string { return fmt.Sprintf("%s %q: %v", e.Op, e.Key, e.Err) }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

func opError(op, key string, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Op: op, Key: key, Err: err}
}
