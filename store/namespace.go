package store

import (
	"context"
	"strings"
)

// Namespace is a node of the catalog tree. The root namespace has an empty ID.
type Namespace struct {
	ID         []string
	Properties map[string]string
}

// CreateMode says what CreateNamespace, CreateTable and RegisterTable do when
// the object already exists.
type CreateMode int

// Create modes.
const (
	ModeCreate    CreateMode = iota // fail with an AlreadyExists error
	ModeExistOk                     // keep the existing object and succeed
	ModeOverwrite                   // replace the existing object
)

// DropMode says what DropNamespace does when the namespace is missing.
type DropMode int

// Drop modes.
const (
	DropFail DropMode = iota // fail with NamespaceNotFound
	DropSkip                 // succeed without doing anything
)

// DropBehavior says what DropNamespace does with a namespace that has children.
type DropBehavior int

// Drop behaviours.
const (
	DropRestrict DropBehavior = iota // refuse with NamespaceNotEmpty
	DropCascade                      // drop every child namespace and table first
)

// normalizeEnum folds the spellings clients use for enum values (PascalCase,
// snake_case, upper case) to one lower-case form without underscores, so
// "ExistOk", "exist_ok" and "EXIST_OK" compare equal.
func normalizeEnum(s string) string {
	s = strings.TrimSpace(s)
	return strings.ToLower(strings.ReplaceAll(s, "_", ""))
}

// ParseCreateMode reads a create mode; an empty string is ModeCreate. It
// returns an InvalidInput error for any other unknown value.
func ParseCreateMode(s string) (CreateMode, error) {
	switch normalizeEnum(s) {
	case "", "create":
		return ModeCreate, nil
	case "existok":
		return ModeExistOk, nil
	case "overwrite":
		return ModeOverwrite, nil
	}
	return 0, Errorf(CodeInvalidInput, "unknown mode %q: expected Create, ExistOk or Overwrite", s)
}

// ParseDropMode reads a namespace drop mode; an empty string is DropFail. It
// returns an InvalidInput error for any other unknown value.
func ParseDropMode(s string) (DropMode, error) {
	switch normalizeEnum(s) {
	case "", "fail":
		return DropFail, nil
	case "skip":
		return DropSkip, nil
	}
	return 0, Errorf(CodeInvalidInput, "unknown mode %q: expected Fail or Skip", s)
}

// ParseDropBehavior reads a namespace drop behaviour; an empty string is
// DropRestrict. It returns an InvalidInput error for any other unknown value.
func ParseDropBehavior(s string) (DropBehavior, error) {
	switch normalizeEnum(s) {
	case "", "restrict":
		return DropRestrict, nil
	case "cascade":
		return DropCascade, nil
	}
	return 0, Errorf(CodeInvalidInput, "unknown behavior %q: expected Restrict or Cascade", s)
}

// Page asks for one page of a listing: the opaque token returned with the
// previous page ("" for the first) and the largest number of items wanted
// (0 or less: the server's default page size).
type Page struct {
	Token string
	Limit int
}

// Namespaces is the namespace part of the catalog.
type Namespaces interface {
	// CreateNamespace creates the namespace id with the given properties and
	// returns it as stored. Returns NamespaceNotFound (1) if the parent is
	// missing, NamespaceAlreadyExists (2) if id exists and mode is ModeCreate
	// or id is the root, InvalidInput (13) for an invalid name.
	CreateNamespace(ctx context.Context, id []string, mode CreateMode, properties map[string]string) (*Namespace, error)

	// ListNamespaces returns the names of the direct children of parent,
	// sorted, one page at a time, and the token of the next page ("" when
	// the listing is complete). Returns NamespaceNotFound (1) if parent is
	// missing, InvalidInput (13) for a malformed page token.
	ListNamespaces(ctx context.Context, parent []string, page Page) (names []string, next string, err error)

	// DescribeNamespace returns the namespace id. Returns NamespaceNotFound (1)
	// if it is missing.
	DescribeNamespace(ctx context.Context, id []string) (*Namespace, error)

	// DropNamespace removes the namespace id and returns it as it was (nil
	// when it was missing and mode is DropSkip) with the ids of the
	// transactions deleting the data of the tables a cascade dropped.
	// Returns NamespaceNotFound (1) if it is missing and mode is DropFail,
	// NamespaceNotEmpty (3) if it has child namespaces or tables and behavior
	// is DropRestrict, InvalidInput (13) for the root.
	DropNamespace(ctx context.Context, id []string, mode DropMode, behavior DropBehavior) (*Namespace, []string, error)

	// NamespaceExists returns nil if the namespace id exists and
	// NamespaceNotFound (1) otherwise.
	NamespaceExists(ctx context.Context, id []string) error
}

// String returns the mode's name as the API spells it.
func (m CreateMode) String() string {
	switch m {
	case ModeExistOk:
		return "ExistOk"
	case ModeOverwrite:
		return "Overwrite"
	}
	return "Create"
}

// String returns the mode's name as the API spells it.
func (m DropMode) String() string {
	if m == DropSkip {
		return "Skip"
	}
	return "Fail"
}

// String returns the behaviour's name as the API spells it.
func (b DropBehavior) String() string {
	if b == DropCascade {
		return "Cascade"
	}
	return "Restrict"
}
