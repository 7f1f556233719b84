package conformance

import (
	"context"
	"errors"

	"github.com/lancens/lancens/client"
	"github.com/lancens/lancens/store"
)

// ClientTarget runs the suite through the HTTP client: each store method is
// answered by the matching API call. The client's errors carry their Lance
// codes; the target returns them as *store.Error, as a store would (see
// storeError).
type ClientTarget struct {
	C *client.Client
}

var _ store.Catalog = ClientTarget{}

// storeError returns err as the suite reads errors: an error the client
// got from the server (or made before sending) becomes a *store.Error with
// its Lance code, whose message names the HTTP status, and whose cause is
// the client's error. Other errors pass unchanged.
func storeError(err error) error {
	var ce *client.Error
	if errors.As(err, &ce) {
		return &store.Error{Code: store.Code(ce.Code()), Message: ce.Error(), Cause: err}
	}
	return err
}

// wrap1 and wrap2 pass on the results of a client call with its error made
// a store error (see storeError).
func wrap1[A any](a A, err error) (A, error) { return a, storeError(err) }

func wrap2[A, B any](a A, b B, err error) (A, B, error) { return a, b, storeError(err) }

// CreateNamespace implements store.Namespaces over HTTP.
func (a ClientTarget) CreateNamespace(ctx context.Context, id []string, mode store.CreateMode, properties map[string]string) (*store.Namespace, error) {
	props, err := a.C.CreateNamespace(ctx, id, &client.CreateNamespaceOptions{Mode: client.Mode(mode.String()), Properties: properties})
	if err != nil {
		return nil, storeError(err)
	}
	return &store.Namespace{ID: id, Properties: props}, nil
}

// ListNamespaces implements store.Namespaces over HTTP.
func (a ClientTarget) ListNamespaces(ctx context.Context, parent []string, page store.Page) ([]string, string, error) {
	return wrap2(a.C.ListNamespacesPage(ctx, parent, page.Token, page.Limit))
}

// DescribeNamespace implements store.Namespaces over HTTP.
func (a ClientTarget) DescribeNamespace(ctx context.Context, id []string) (*store.Namespace, error) {
	props, err := a.C.DescribeNamespace(ctx, id)
	if err != nil {
		return nil, storeError(err)
	}
	return &store.Namespace{ID: id, Properties: props}, nil
}

// DropNamespace implements store.Namespaces over HTTP.
func (a ClientTarget) DropNamespace(ctx context.Context, id []string, mode store.DropMode, behavior store.DropBehavior) (*store.Namespace, []string, error) {
	dropped, err := a.C.DropNamespace(ctx, id, &client.DropNamespaceOptions{Mode: client.Mode(mode.String()), Behavior: client.Behavior(behavior.String())})
	if err != nil || dropped == nil {
		return nil, nil, storeError(err)
	}
	return &store.Namespace{ID: id, Properties: dropped.Properties}, dropped.TransactionIDs, nil
}

// NamespaceExists implements store.Namespaces over HTTP.
func (a ClientTarget) NamespaceExists(ctx context.Context, id []string) error {
	ok, err := a.C.NamespaceExists(ctx, id)
	if err != nil {
		return storeError(err)
	}
	if !ok {
		return store.Errorf(store.CodeNamespaceNotFound, "namespace %q not found", id)
	}
	return nil
}

// ListTables implements store.Tables over HTTP.
func (a ClientTarget) ListTables(ctx context.Context, ns []string, includeDeclared bool, page store.Page) ([]string, string, error) {
	return wrap2(a.C.ListTablesPage(ctx, ns, page.Token, page.Limit, includeDeclared))
}

// ListAllTables implements store.Tables over HTTP.
func (a ClientTarget) ListAllTables(ctx context.Context, includeDeclared bool, page store.Page) ([][]string, string, error) {
	return wrap2(a.C.ListAllTablesPage(ctx, page.Token, page.Limit, includeDeclared))
}

func tableFromInfo(id []string, info *client.TableInfo, declared bool) *store.Table {
	return &store.Table{ID: id, Location: info.Location, Properties: info.Properties, StorageOptions: info.StorageOptions,
		ManagedVersioning: info.ManagedVersioning, Declared: declared}
}

// DeclareTable implements store.Tables over HTTP. The server chooses
// ownership; only the location is sent.
func (a ClientTarget) DeclareTable(ctx context.Context, id []string, decl store.TableDeclaration) (*store.Table, string, error) {
	info, err := a.C.DeclareTable(ctx, id, &client.DeclareTableOptions{Location: decl.Location, Properties: decl.Properties})
	if err != nil {
		return nil, "", storeError(err)
	}
	return tableFromInfo(id, info, true), info.TransactionID, nil
}

// RegisterTable implements store.Tables over HTTP.
func (a ClientTarget) RegisterTable(ctx context.Context, id []string, reg store.TableRegistration) (*store.Table, string, error) {
	info, err := a.C.RegisterTable(ctx, id, reg.Location, &client.RegisterTableOptions{Mode: client.Mode(reg.Mode.String()), Properties: reg.Properties})
	if err != nil {
		return nil, "", storeError(err)
	}
	return tableFromInfo(id, info, false), info.TransactionID, nil
}

// DescribeTable implements store.Tables over HTTP.
func (a ClientTarget) DescribeTable(ctx context.Context, id []string) (*store.Table, error) {
	d, err := a.C.DescribeTable(ctx, id, &client.DescribeTableOptions{CheckDeclared: true})
	if err != nil {
		return nil, storeError(err)
	}
	return &store.Table{ID: id, Location: d.Location, Properties: d.Properties, StorageOptions: d.StorageOptions,
		ManagedVersioning: d.ManagedVersioning, Declared: d.IsOnlyDeclared != nil && *d.IsOnlyDeclared}, nil
}

func tableFromDropped(d *client.DroppedTable) *store.Table {
	return &store.Table{ID: d.ID, Location: d.Location, Properties: d.Properties}
}

// DropTable implements store.Tables over HTTP.
func (a ClientTarget) DropTable(ctx context.Context, id []string) (*store.Table, string, error) {
	d, err := a.C.DropTable(ctx, id)
	if err != nil {
		return nil, "", storeError(err)
	}
	return tableFromDropped(d), d.TransactionID, nil
}

// DeregisterTable implements store.Tables over HTTP.
func (a ClientTarget) DeregisterTable(ctx context.Context, id []string) (*store.Table, string, error) {
	d, err := a.C.DeregisterTable(ctx, id)
	if err != nil {
		return nil, "", storeError(err)
	}
	return tableFromDropped(d), d.TransactionID, nil
}

// RenameTable implements store.Tables over HTTP.
func (a ClientTarget) RenameTable(ctx context.Context, id []string, newNamespace []string, newName string) (string, error) {
	return wrap1(a.C.RenameTable(ctx, id, newNamespace, newName))
}

func storeVersion(v *client.TableVersion) *store.TableVersion {
	return &store.TableVersion{Version: v.Version, ManifestPath: v.ManifestPath, ManifestSize: v.ManifestSize, ETag: v.ETag,
		Timestamp: v.Timestamp, Metadata: v.Metadata}
}

func clientCommit(c store.VersionCommit) client.VersionCommit {
	return client.VersionCommit{Version: c.Version, ManifestPath: c.StagedPath, ManifestSize: c.ManifestSize, ETag: c.ETag,
		Metadata: c.Metadata, Branch: c.Branch}
}

// CommitVersion implements store.Versions over HTTP. The server derives the
// recorded manifest path; the commit's StagedPath is sent.
func (a ClientTarget) CommitVersion(ctx context.Context, id []string, c store.VersionCommit) (*store.TableVersion, string, error) {
	v, txID, err := a.C.CreateTableVersion(ctx, id, clientCommit(c))
	if err != nil {
		return nil, "", storeError(err)
	}
	return storeVersion(v), txID, nil
}

// ListVersions implements store.Versions over HTTP.
func (a ClientTarget) ListVersions(ctx context.Context, id []string, branch string, descending bool, page store.Page) ([]store.TableVersion, string, error) {
	vs, next, err := a.C.ListTableVersionsPage(ctx, id, &client.ListVersionsOptions{Branch: branch, Descending: descending, PageToken: page.Token, Limit: page.Limit})
	if err != nil {
		return nil, "", storeError(err)
	}
	out := make([]store.TableVersion, len(vs))
	for i := range vs {
		out[i] = *storeVersion(&vs[i])
	}
	return out, next, nil
}

// DescribeVersion implements store.Versions over HTTP.
func (a ClientTarget) DescribeVersion(ctx context.Context, id []string, branch string, v *int64) (*store.TableVersion, error) {
	out, err := a.C.DescribeTableVersion(ctx, id, branch, v)
	if err != nil {
		return nil, storeError(err)
	}
	return storeVersion(out), nil
}

func clientRanges(ranges []store.VersionRange) []client.VersionRange {
	out := make([]client.VersionRange, len(ranges))
	for i, r := range ranges {
		out[i] = client.VersionRange{Start: r.Start, End: r.End}
	}
	return out
}

// DeleteVersions implements store.Versions over HTTP.
func (a ClientTarget) DeleteVersions(ctx context.Context, id []string, branch string, ranges []store.VersionRange) (int64, string, error) {
	return wrap2(a.C.DeleteTableVersions(ctx, id, branch, clientRanges(ranges)...))
}

// CommitBatch implements store.Batches over HTTP.
func (a ClientTarget) CommitBatch(ctx context.Context, ops []store.BatchOperation) ([]store.BatchResult, string, error) {
	cops := make([]client.BatchOp, len(ops))
	for i, op := range ops {
		cops[i] = client.BatchOp{ID: op.ID, Deregister: op.Deregister}
		if op.Declare != nil {
			cops[i].Declare = &client.DeclareTableOptions{Location: op.Declare.Location, Properties: op.Declare.Properties}
		}
		if op.CommitVersion != nil {
			c := clientCommit(*op.CommitVersion)
			cops[i].CommitVersion = &c
		}
		if op.DeleteVersions != nil {
			cops[i].DeleteVersions = &client.BatchDelete{Branch: op.DeleteVersions.Branch, Ranges: clientRanges(op.DeleteVersions.Ranges)}
		}
	}
	results, txID, err := a.C.BatchCommit(ctx, cops...)
	if err != nil {
		return nil, "", storeError(err)
	}
	out := make([]store.BatchResult, len(results))
	for i, r := range results {
		out[i].DeletedCount = r.DeletedCount
		switch {
		case r.Declared != nil:
			out[i].Table = tableFromInfo(ops[i].ID, r.Declared, true)
		case r.Deregistered != nil:
			out[i].Table = tableFromDropped(r.Deregistered)
		case r.Version != nil:
			out[i].Version = storeVersion(r.Version)
		}
	}
	return out, txID, nil
}

// ListTags implements store.Tags over HTTP.
func (a ClientTarget) ListTags(ctx context.Context, id []string, page store.Page) ([]store.Tag, string, error) {
	tags, next, err := a.C.ListTableTagsPage(ctx, id, page.Token, page.Limit)
	if err != nil {
		return nil, "", storeError(err)
	}
	out := make([]store.Tag, len(tags))
	for i, g := range tags {
		out[i] = store.Tag{Name: g.Name, Branch: g.Branch, Version: g.Version, ManifestSize: g.ManifestSize}
	}
	return out, next, nil
}

// GetTag implements store.Tags over HTTP.
func (a ClientTarget) GetTag(ctx context.Context, id []string, name string) (*store.Tag, error) {
	g, err := a.C.GetTableTag(ctx, id, name)
	if err != nil {
		return nil, storeError(err)
	}
	return &store.Tag{Name: name, Branch: g.Branch, Version: g.Version}, nil
}

// CreateTag implements store.Tags over HTTP.
func (a ClientTarget) CreateTag(ctx context.Context, id []string, name, branch string, version int64) (string, error) {
	return wrap1(a.C.CreateTableTag(ctx, id, name, version, branch))
}

// UpdateTag implements store.Tags over HTTP.
func (a ClientTarget) UpdateTag(ctx context.Context, id []string, name, branch string, version int64) (string, error) {
	return wrap1(a.C.UpdateTableTag(ctx, id, name, version, branch))
}

// DeleteTag implements store.Tags over HTTP.
func (a ClientTarget) DeleteTag(ctx context.Context, id []string, name string) (string, error) {
	return wrap1(a.C.DeleteTableTag(ctx, id, name))
}

// CreateBranch implements store.Branches over HTTP.
func (a ClientTarget) CreateBranch(ctx context.Context, id []string, name, fromBranch string, fromVersion *int64) (string, error) {
	return wrap1(a.C.CreateTableBranch(ctx, id, name, fromBranch, fromVersion))
}

// ListBranches implements store.Branches over HTTP.
func (a ClientTarget) ListBranches(ctx context.Context, id []string, page store.Page) ([]store.Branch, string, error) {
	bs, next, err := a.C.ListTableBranchesPage(ctx, id, page.Token, page.Limit)
	if err != nil {
		return nil, "", storeError(err)
	}
	out := make([]store.Branch, len(bs))
	for i, b := range bs {
		out[i] = store.Branch{Name: b.Name, ParentBranch: b.ParentBranch, ParentVersion: b.ParentVersion, CreatedAt: b.CreatedAt,
			ManifestSize: b.ManifestSize, Metadata: b.Metadata}
	}
	return out, next, nil
}

// DeleteBranch implements store.Branches over HTTP.
func (a ClientTarget) DeleteBranch(ctx context.Context, id []string, name string) (string, error) {
	return wrap1(a.C.DeleteTableBranch(ctx, id, name))
}

// DescribeTransaction implements store.Transactions over HTTP.
func (a ClientTarget) DescribeTransaction(ctx context.Context, id []string) (*store.Transaction, error) {
	t, err := a.C.DescribeTransaction(ctx, id)
	if err != nil {
		return nil, storeError(err)
	}
	return &store.Transaction{Status: store.TransactionStatus(t.Status), Properties: t.Properties}, nil
}

// AlterTransaction implements store.Transactions over HTTP.
func (a ClientTarget) AlterTransaction(ctx context.Context, id []string, actions []store.TransactionAction) (*store.Transaction, error) {
	cas := make([]client.TransactionAction, len(actions))
	for i, act := range actions {
		if act.SetStatus != nil {
			cas[i].SetStatus = client.TransactionStatus(*act.SetStatus)
		}
		if p := act.SetProperty; p != nil {
			cas[i].SetProperty = &client.PropertyAction{Key: p.Key, Value: p.Value, Mode: client.Mode(p.Mode.String())}
		}
		if p := act.Unset; p != nil {
			cas[i].UnsetProperty = &client.PropertyAction{Key: p.Key, Mode: client.Mode(p.Mode.String())}
		}
	}
	t, err := a.C.AlterTransaction(ctx, id, cas...)
	if err != nil {
		return nil, storeError(err)
	}
	return &store.Transaction{Status: store.TransactionStatus(t.Status), Properties: t.Properties}, nil
}
