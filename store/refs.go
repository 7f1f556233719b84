package store

import (
	"context"
	"time"
)

// Tag names a version of a table.
type Tag struct {
	Name    string
	Branch  string // "" is main
	Version int64
	// ManifestSize is the size of the tagged version's manifest, 0 when
	// unknown.
	ManifestSize int64
}

// Tags names table versions.
type Tags interface {
	// ListTags returns the tags of table id sorted by name, one page at a
	// time. Returns TableNotFound (4).
	ListTags(ctx context.Context, id []string, page Page) ([]Tag, string, error)

	// GetTag returns one tag. Returns TableNotFound (4), TableTagNotFound (8).
	GetTag(ctx context.Context, id []string, name string) (*Tag, error)

	// CreateTag points a new tag at a version of a branch. Returns
	// TableNotFound (4), TableTagAlreadyExists (9), TableBranchNotFound (22),
	// TableVersionNotFound (11).
	CreateTag(ctx context.Context, id []string, name, branch string, version int64) (string, error)

	// UpdateTag re-points an existing tag. Returns TableNotFound (4),
	// TableTagNotFound (8), TableBranchNotFound (22), TableVersionNotFound (11).
	UpdateTag(ctx context.Context, id []string, name, branch string, version int64) (string, error)

	// DeleteTag removes a tag. Returns TableNotFound (4), TableTagNotFound (8).
	DeleteTag(ctx context.Context, id []string, name string) (string, error)
}

// Branch is a line of versions forked from another branch at a version.
type Branch struct {
	Name          string
	ParentBranch  string // "" is main
	ParentVersion int64
	CreatedAt     time.Time
	// ManifestSize is the size of the fork version's manifest, 0 when unknown.
	ManifestSize int64
	Metadata     map[string]string
}

// Branches manages table branches.
type Branches interface {
	// CreateBranch forks branch name from fromBranch at fromVersion (nil:
	// its latest version). Returns TableNotFound (4),
	// TableBranchAlreadyExists (23), InvalidInput (13) when the source
	// branch or version does not exist.
	CreateBranch(ctx context.Context, id []string, name, fromBranch string, fromVersion *int64) (string, error)

	// ListBranches returns the branches of table id (main excluded) sorted by
	// name, one page at a time. Returns TableNotFound (4).
	ListBranches(ctx context.Context, id []string, page Page) ([]Branch, string, error)

	// DeleteBranch removes a branch with its versions and tags. Returns
	// TableNotFound (4), TableBranchNotFound (22), InvalidInput (13) when
	// other branches fork from it.
	DeleteBranch(ctx context.Context, id []string, name string) (string, error)
}

// TransactionStatus is the state of a transaction.
type TransactionStatus string

// Transaction statuses.
const (
	TxQueued    TransactionStatus = "Queued"
	TxRunning   TransactionStatus = "Running"
	TxSucceeded TransactionStatus = "Succeeded"
	TxFailed    TransactionStatus = "Failed"
	TxCanceled  TransactionStatus = "Canceled"
)

// ParseTransactionStatus reads a status case-insensitively. It returns
// InvalidInput (13) for an unknown one.
func ParseTransactionStatus(s string) (TransactionStatus, error) {
	for _, st := range []TransactionStatus{TxQueued, TxRunning, TxSucceeded, TxFailed, TxCanceled} {
		if normalizeEnum(s) == normalizeEnum(string(st)) {
			return st, nil
		}
	}
	return "", Errorf(CodeInvalidInput, "unknown transaction status %q", s)
}

// Transaction is the record of a catalog or data operation.
type Transaction struct {
	ID         string
	Status     TransactionStatus
	Properties map[string]string
	// Table is the identifier the table the transaction was about has now
	// (after renames); nil when it was about no single table, when that
	// table is gone, or when the backend does not know.
	Table []string
}

// PropertyMode says what setting or unsetting a transaction property does
// when the key already exists (set) or is missing (unset).
type PropertyMode int

// Property modes.
const (
	PropertyOverwrite PropertyMode = iota // set: replace the value
	PropertyFail                          // fail the whole alteration
	PropertySkip                          // leave it and go on
)

// ParsePropertyMode reads Overwrite, Fail or Skip; empty is def. It returns
// InvalidInput (13) for anything else.
func ParsePropertyMode(s string, def PropertyMode) (PropertyMode, error) {
	switch normalizeEnum(s) {
	case "":
		return def, nil
	case "overwrite":
		return PropertyOverwrite, nil
	case "fail":
		return PropertyFail, nil
	case "skip":
		return PropertySkip, nil
	}
	return 0, Errorf(CodeInvalidInput, "unknown property mode %q", s)
}

// TransactionAction is one change to a transaction: exactly one field set.
type TransactionAction struct {
	SetStatus   *TransactionStatus
	SetProperty *PropertyChange
	Unset       *PropertyChange
}

// PropertyChange sets (Value) or unsets a property.
type PropertyChange struct {
	Key   string
	Value string
	Mode  PropertyMode
}

// Transactions reads and alters transaction records.
type Transactions interface {
	// DescribeTransaction returns transaction id: a transaction id lancens
	// returned, or a table identifier followed by a version number (the
	// commit of that version on main). Returns TransactionNotFound (10).
	DescribeTransaction(ctx context.Context, id []string) (*Transaction, error)

	// AlterTransaction applies actions atomically and returns the result.
	// Returns TransactionNotFound (10), ConcurrentModification (14) when a
	// Fail-mode set meets an existing key, InvalidInput (13) when a
	// Fail-mode unset meets a missing key.
	AlterTransaction(ctx context.Context, id []string, actions []TransactionAction) (*Transaction, error)
}

// String returns the mode's name as the API spells it.
func (m PropertyMode) String() string {
	switch m {
	case PropertyFail:
		return "Fail"
	case PropertySkip:
		return "Skip"
	}
	return "Overwrite"
}
