package conformance

import (
	"context"
	"sync/atomic"

	"github.com/lancens/lancens/store"
)

// alternating is a store.Catalog that sends each call to the next of its
// targets in turn: run against several servers on one shared catalog,
// every case then checks that a change made through one is seen at once
// through the others.
type alternating struct {
	targets []store.Catalog
	next    atomic.Uint64
}

func (a *alternating) pick() store.Catalog {
	return a.targets[(a.next.Add(1)-1)%uint64(len(a.targets))]
}

// CreateNamespace implements store.Catalog.
func (a *alternating) CreateNamespace(ctx context.Context, id []string, mode store.CreateMode, properties map[string]string) (*store.Namespace, error) {
	return a.pick().CreateNamespace(ctx, id, mode, properties)
}

// ListNamespaces implements store.Catalog.
func (a *alternating) ListNamespaces(ctx context.Context, parent []string, page store.Page) (names []string, next string, err error) {
	return a.pick().ListNamespaces(ctx, parent, page)
}

// DescribeNamespace implements store.Catalog.
func (a *alternating) DescribeNamespace(ctx context.Context, id []string) (*store.Namespace, error) {
	return a.pick().DescribeNamespace(ctx, id)
}

// DropNamespace implements store.Catalog.
func (a *alternating) DropNamespace(ctx context.Context, id []string, mode store.DropMode, behavior store.DropBehavior) (*store.Namespace, []string, error) {
	return a.pick().DropNamespace(ctx, id, mode, behavior)
}

// NamespaceExists implements store.Catalog.
func (a *alternating) NamespaceExists(ctx context.Context, id []string) error {
	return a.pick().NamespaceExists(ctx, id)
}

// ListTables implements store.Catalog.
func (a *alternating) ListTables(ctx context.Context, ns []string, includeDeclared bool, page store.Page) (names []string, next string, err error) {
	return a.pick().ListTables(ctx, ns, includeDeclared, page)
}

// ListAllTables implements store.Catalog.
func (a *alternating) ListAllTables(ctx context.Context, includeDeclared bool, page store.Page) (ids [][]string, next string, err error) {
	return a.pick().ListAllTables(ctx, includeDeclared, page)
}

// DeclareTable implements store.Catalog.
func (a *alternating) DeclareTable(ctx context.Context, id []string, decl store.TableDeclaration) (*store.Table, string, error) {
	return a.pick().DeclareTable(ctx, id, decl)
}

// RegisterTable implements store.Catalog.
func (a *alternating) RegisterTable(ctx context.Context, id []string, reg store.TableRegistration) (*store.Table, string, error) {
	return a.pick().RegisterTable(ctx, id, reg)
}

// DescribeTable implements store.Catalog.
func (a *alternating) DescribeTable(ctx context.Context, id []string) (*store.Table, error) {
	return a.pick().DescribeTable(ctx, id)
}

// DropTable implements store.Catalog.
func (a *alternating) DropTable(ctx context.Context, id []string) (*store.Table, string, error) {
	return a.pick().DropTable(ctx, id)
}

// DeregisterTable implements store.Catalog.
func (a *alternating) DeregisterTable(ctx context.Context, id []string) (*store.Table, string, error) {
	return a.pick().DeregisterTable(ctx, id)
}

// RenameTable implements store.Catalog.
func (a *alternating) RenameTable(ctx context.Context, id []string, newNamespace []string, newName string) (string, error) {
	return a.pick().RenameTable(ctx, id, newNamespace, newName)
}

// CommitVersion implements store.Catalog.
func (a *alternating) CommitVersion(ctx context.Context, id []string, c store.VersionCommit) (*store.TableVersion, string, error) {
	return a.pick().CommitVersion(ctx, id, c)
}

// ListVersions implements store.Catalog.
func (a *alternating) ListVersions(ctx context.Context, id []string, branch string, descending bool, page store.Page) ([]store.TableVersion, string, error) {
	return a.pick().ListVersions(ctx, id, branch, descending, page)
}

// DescribeVersion implements store.Catalog.
func (a *alternating) DescribeVersion(ctx context.Context, id []string, branch string, v *int64) (*store.TableVersion, error) {
	return a.pick().DescribeVersion(ctx, id, branch, v)
}

// DeleteVersions implements store.Catalog.
func (a *alternating) DeleteVersions(ctx context.Context, id []string, branch string, ranges []store.VersionRange) (int64, string, error) {
	return a.pick().DeleteVersions(ctx, id, branch, ranges)
}

// CommitBatch implements store.Catalog.
func (a *alternating) CommitBatch(ctx context.Context, ops []store.BatchOperation) ([]store.BatchResult, string, error) {
	return a.pick().CommitBatch(ctx, ops)
}

// ListTags implements store.Catalog.
func (a *alternating) ListTags(ctx context.Context, id []string, page store.Page) ([]store.Tag, string, error) {
	return a.pick().ListTags(ctx, id, page)
}

// GetTag implements store.Catalog.
func (a *alternating) GetTag(ctx context.Context, id []string, name string) (*store.Tag, error) {
	return a.pick().GetTag(ctx, id, name)
}

// CreateTag implements store.Catalog.
func (a *alternating) CreateTag(ctx context.Context, id []string, name, branch string, version int64) (string, error) {
	return a.pick().CreateTag(ctx, id, name, branch, version)
}

// UpdateTag implements store.Catalog.
func (a *alternating) UpdateTag(ctx context.Context, id []string, name, branch string, version int64) (string, error) {
	return a.pick().UpdateTag(ctx, id, name, branch, version)
}

// DeleteTag implements store.Catalog.
func (a *alternating) DeleteTag(ctx context.Context, id []string, name string) (string, error) {
	return a.pick().DeleteTag(ctx, id, name)
}

// CreateBranch implements store.Catalog.
func (a *alternating) CreateBranch(ctx context.Context, id []string, name, fromBranch string, fromVersion *int64) (string, error) {
	return a.pick().CreateBranch(ctx, id, name, fromBranch, fromVersion)
}

// ListBranches implements store.Catalog.
func (a *alternating) ListBranches(ctx context.Context, id []string, page store.Page) ([]store.Branch, string, error) {
	return a.pick().ListBranches(ctx, id, page)
}

// DeleteBranch implements store.Catalog.
func (a *alternating) DeleteBranch(ctx context.Context, id []string, name string) (string, error) {
	return a.pick().DeleteBranch(ctx, id, name)
}

// DescribeTransaction implements store.Catalog.
func (a *alternating) DescribeTransaction(ctx context.Context, id []string) (*store.Transaction, error) {
	return a.pick().DescribeTransaction(ctx, id)
}

// AlterTransaction implements store.Catalog.
func (a *alternating) AlterTransaction(ctx context.Context, id []string, actions []store.TransactionAction) (*store.Transaction, error) {
	return a.pick().AlterTransaction(ctx, id, actions)
}
