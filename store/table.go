package store

import (
	"context"
	"strings"
	"time"
)

// TableKind says where a table's rows live.
type TableKind int

// Table kinds.
const (
	// External tables keep their data in Lance files at their location,
	// written by Lance clients or by lancens's engine; lancens holds the
	// catalog entry and the version records. Every table lancens makes is
	// one.
	External TableKind = iota
	// Managed tables keep their rows inside the SQLite file of an earlier
	// lancens (up to f365447) until they are converted into Lance datasets
	// (store/sqlite/legacy).
	Managed
)

// Table is a catalog entry.
type Table struct {
	ID   []string
	UUID string
	Kind TableKind
	// Location is the table's root: a local path or a URI.
	Location string
	// Owned is true when lancens chose the location inside its warehouse,
	// and so deletes the data when the table is dropped.
	Owned          bool
	Properties     map[string]string
	StorageOptions map[string]string
	// ManagedVersioning is true when Lance clients must commit and resolve
	// versions through the version operations of this catalog.
	ManagedVersioning bool
	// Declared is true while a declared table has no data: no committed
	// version and no rows.
	Declared  bool
	CreatedAt time.Time
}

// Namespace returns the identifier of the table's namespace.
func (t *Table) Namespace() []string { return t.ID[:len(t.ID)-1] }

// Name returns the table's own name.
func (t *Table) Name() string { return t.ID[len(t.ID)-1] }

// TableDeclaration is what DeclareTable records.
type TableDeclaration struct {
	Location   string
	Owned      bool
	Properties map[string]string
	// StorageOptions are recorded with the table (a table created through
	// the remote API keeps the ones its create named).
	StorageOptions map[string]string
	// View, when set, records the table as a materialized view with the
	// definition View, in the transaction that declares it (the engine's
	// CreateView; the API's declare never sets it).
	View *ViewRecord
}

// TableRegistration is what RegisterTable records.
type TableRegistration struct {
	Location   string
	Mode       CreateMode // ModeCreate or ModeOverwrite
	Properties map[string]string
}

// Tables is the table part of the catalog.
type Tables interface {
	// ListTables returns the names of the tables directly in namespace ns,
	// sorted, one page at a time. includeDeclared also lists declared tables
	// without data. Returns NamespaceNotFound (1).
	ListTables(ctx context.Context, ns []string, includeDeclared bool, page Page) (names []string, next string, err error)

	// ListAllTables returns the identifiers of every table in the catalog,
	// sorted by identifier, one page at a time.
	ListAllTables(ctx context.Context, includeDeclared bool, page Page) (ids [][]string, next string, err error)

	// DeclareTable reserves table id at a location, with no data yet.
	// Returns NamespaceNotFound (1), TableAlreadyExists (5).
	DeclareTable(ctx context.Context, id []string, decl TableDeclaration) (*Table, string, error)

	// RegisterTable catalogs existing Lance data at a location. Returns
	// NamespaceNotFound (1), TableAlreadyExists (5) in ModeCreate.
	RegisterTable(ctx context.Context, id []string, reg TableRegistration) (*Table, string, error)

	// DescribeTable returns table id. Returns NamespaceNotFound (1) or
	// TableNotFound (4).
	DescribeTable(ctx context.Context, id []string) (*Table, error)

	// DropTable removes table id from the catalog and, when lancens owns its
	// data, queues the data for deletion. It returns the table as it was and
	// the id of the transaction recording the drop. Returns
	// NamespaceNotFound (1) or TableNotFound (4).
	DropTable(ctx context.Context, id []string) (*Table, string, error)

	// DeregisterTable removes table id from the catalog and keeps its data.
	// Returns NamespaceNotFound (1) or TableNotFound (4).
	DeregisterTable(ctx context.Context, id []string) (*Table, string, error)

	// RenameTable moves table id to newNamespace (nil: its own) under
	// newName. Returns TableNotFound (4), NamespaceNotFound (1) for the
	// target namespace, TableAlreadyExists (5).
	RenameTable(ctx context.Context, id []string, newNamespace []string, newName string) (string, error)
}

// MainBranch is the name of the branch every table starts with. Requests
// name it "main" or leave the branch out.
const MainBranch = "main"

// NormalizeBranch maps the spellings of the main branch ("", "main") to ""
// and checks other branch names. It returns InvalidInput (13) for a name
// containing "..", a control character or a leading or trailing "/".
func NormalizeBranch(name string) (string, error) {
	if name == "" || name == MainBranch {
		return "", nil
	}
	if err := ValidateName("branch", name); err != nil {
		return "", err
	}
	if strings.Contains(name, "..") || strings.HasPrefix(name, "/") || strings.HasSuffix(name, "/") {
		return "", Errorf(CodeInvalidInput, "invalid branch name %q", name)
	}
	return name, nil
}

// BranchName returns the name of branch b as the API shows it.
func BranchName(b string) string {
	if b == "" {
		return MainBranch
	}
	return b
}

// TableVersion is the record of one committed version.
type TableVersion struct {
	Version      int64
	ManifestPath string
	ManifestSize *int64
	ETag         *string
	Timestamp    time.Time
	Metadata     map[string]string
}

// VersionCommit asks to record one version of a table.
type VersionCommit struct {
	Branch  string
	Version int64
	// StagedPath is where the client wrote the manifest.
	StagedPath string
	// ManifestPath is the path recorded for readers: the final name of the
	// manifest under the naming scheme, or the staged path.
	ManifestPath string
	ManifestSize *int64
	ETag         *string
	Metadata     map[string]string
	// ViewSourceVersion, when set, is the version of the source table a
	// refresh of a materialized view computed this version from: the
	// catalog records it, with the version, as the view's source version
	// and the commit's time as its refresh time. Only an engine's refresh
	// sets it; the API's commits never do.
	ViewSourceVersion *int64
	// Location, when set, is where the commit coordinator found the table
	// and published the manifest: the commit is refused with
	// ConcurrentModification (14) if the table lies elsewhere now (it was
	// dropped and declared again since).
	Location string
}

// VersionRange selects versions Start ≤ v < End; End −1 (any negative) means
// through the latest version.
type VersionRange struct {
	Start, End int64
}

// VersionFinder is the read a commit coordinator makes under the lock of a
// table's location, before it publishes a manifest: whether the table
// still lies there, and whether the version is recorded.
type VersionFinder interface {
	// FindVersion returns table id and its version v on branch ("" for
	// main), nil when v is not recorded, from one consistent read.
	// Returns TableNotFound (4), TableBranchNotFound (22).
	FindVersion(ctx context.Context, id []string, branch string, v int64) (*Table, *TableVersion, error)
}

// Versions is the commit coordinator: the version records of external tables.
type Versions interface {
	// CommitVersion records version c.Version of table id. The chain is
	// strict: it must be the latest version on the branch plus one (1 on an
	// empty main branch; the fork version on an empty branch). Re-sending
	// the same commit returns the stored record. Returns TableNotFound (4),
	// TableBranchNotFound (22), ConcurrentModification (14) when the version
	// exists or is not next.
	CommitVersion(ctx context.Context, id []string, c VersionCommit) (*TableVersion, string, error)

	// ListVersions returns the versions of a branch in ascending or
	// descending order, one page at a time. Returns TableNotFound (4),
	// TableBranchNotFound (22).
	ListVersions(ctx context.Context, id []string, branch string, descending bool, page Page) ([]TableVersion, string, error)

	// DescribeVersion returns version v of a branch, or the latest when v is
	// nil. Returns TableNotFound (4), TableBranchNotFound (22),
	// TableVersionNotFound (11).
	DescribeVersion(ctx context.Context, id []string, branch string, v *int64) (*TableVersion, error)

	// DeleteVersions deletes the records of the versions in the ranges and
	// returns how many existed. Returns TableNotFound (4), TableBranchNotFound (22).
	DeleteVersions(ctx context.Context, id []string, branch string, ranges []VersionRange) (int64, string, error)
}

// BatchOperation is one operation of an atomic batch commit: exactly one of
// its fields is set.
type BatchOperation struct {
	ID             []string
	Declare        *TableDeclaration
	CommitVersion  *VersionCommit
	DeleteVersions *BatchDelete
	Deregister     bool
}

// BatchDelete is a version-range deletion inside a batch.
type BatchDelete struct {
	Branch string
	Ranges []VersionRange
}

// BatchResult is the result of one BatchOperation; the field matching the
// operation is set.
type BatchResult struct {
	Table        *Table        // Declare, Deregister
	Version      *TableVersion // CommitVersion
	DeletedCount int64         // DeleteVersions
}

// Batches commits several catalog operations atomically.
type Batches interface {
	// CommitBatch applies ops in order in one transaction: later operations
	// see earlier ones, and either all apply or none does. It returns one
	// result per operation, in order, and the batch's transaction id. Errors
	// are those of the individual operations; InvalidInput (13) for a
	// malformed batch.
	CommitBatch(ctx context.Context, ops []BatchOperation) ([]BatchResult, string, error)
}
