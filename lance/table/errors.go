package table

import (
	"errors"
	"fmt"
)

// The errors of this package wrap one of these sentinels; match them with
// errors.Is. Callers that answer with Lance error codes map them: NotFound
// to TableNotFound/TableVersionNotFound/TableTagNotFound (by what was
// asked), Corrupt and Unsupported to InvalidTableState, Invalid to
// InvalidInput, Conflict to ConcurrentModification.
var (
	// ErrNotFound reports a dataset, version, tag or branch that does not
	// exist.
	ErrNotFound = errors.New("not found")
	// ErrCorrupt reports a metadata file (manifest, transaction, deletion
	// file, reference) that is malformed or inconsistent.
	ErrCorrupt = errors.New("corrupt dataset file")
	// ErrUnsupported reports a dataset that uses a feature this package
	// does not implement (an unknown feature flag, a file kind it cannot
	// read, a base path it cannot reach): Lance's rule is to refuse it
	// rather than misread or damage it.
	ErrUnsupported = errors.New("unsupported dataset feature")
	// ErrInvalid reports an operation asked with bad arguments (a missing
	// field, a row offset beyond its fragment, a bad tag name).
	ErrInvalid = errors.New("invalid argument")
	// ErrVersionExists is what a Committer returns when the version it was
	// asked to publish already exists: another writer committed it first.
	ErrVersionExists = errors.New("version already exists")
	// ErrConflict reports a commit that lost a race against a concurrent
	// one and could not be rebased on it; the error is a *ConflictError.
	ErrConflict = errors.New("commit conflict")
	// ErrExists reports a tag or branch that already exists.
	ErrExists = errors.New("already exists")
)

// ConflictError is the error of a commit whose transaction conflicts with
// one committed concurrently (after the commit's read version). It wraps
// ErrConflict.
type ConflictError struct {
	// Version is the concurrent version the transaction conflicts with.
	Version uint64
	// Operation and Other name the two transactions' operations.
	Operation, Other string
	// Retryable says the caller may redo its operation on the new version
	// (re-reading what it depends on) and commit again; when false the
	// concurrent change invalidated what the operation meant to do (a
	// restore, an overwrite) and retrying may do something else.
	Retryable bool
}

func (e *ConflictError) Error() string {
	kind := "retryable"
	if !e.Retryable {
		kind = "incompatible"
	}
	return fmt.Sprintf("commit conflict (%s): %s conflicts with the %s committed as version %d", kind, e.Operation, e.Other, e.Version)
}

// Unwrap makes a ConflictError match ErrConflict.
func (e *ConflictError) Unwrap() error { return ErrConflict }

func corruptf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

func unsupportedf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUnsupported, fmt.Sprintf(format, args...))
}
