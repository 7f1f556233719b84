package conformance

import (
	"context"
	"slices"
	"strings"

	"github.com/lancens/lancens/store"
)

// suiteLocations is the root of the table locations the cases use: remote
// storage, where a catalog records paths without touching files.
const suiteLocations = "s3://conformance-bucket"

// remote returns the location the cases give table name.
func remote(name string) string { return suiteLocations + "/" + name }

// Scope returns a view of inner confined to the namespace prefix, so that
// the suite can run inside a catalog that holds other data: every
// identifier a case uses is read as relative to prefix (the root namespace
// of the case is prefix itself), identifiers in answers are made relative
// again, and table listings across the catalog keep only what is under
// prefix. Locations under the suite's own root are moved under
// locationRoot (when not empty), so that runs never share a location.
//
// A transaction identifier of one part is a transaction id and passes
// unchanged; one of several parts names a table and a version, and is
// scoped. Data operations need an inner DataTarget; otherwise they answer
// Unsupported (0).
func Scope(inner store.Catalog, prefix []string, locationRoot string) DataTarget {
	return &scoped{inner: inner, prefix: slices.Clone(prefix), locRoot: strings.TrimSuffix(locationRoot, "/")}
}

type scoped struct {
	inner   store.Catalog
	prefix  []string
	locRoot string
	// located, when set, gives tables the locations the server chooses
	// (ScopeLocatedByServer) instead of names under locRoot.
	located *located
}

func (s *scoped) in(id []string) []string {
	return append(slices.Clone(s.prefix), id...)
}

// out makes an identifier from inner relative to the prefix.
func (s *scoped) out(id []string) []string {
	if len(id) >= len(s.prefix) && slices.Equal(id[:len(s.prefix)], s.prefix) {
		return slices.Clone(id[len(s.prefix):])
	}
	return id
}

func (s *scoped) locIn(loc string) string {
	if s.locRoot != "" && strings.HasPrefix(loc, suiteLocations+"/") {
		return s.locRoot + strings.TrimPrefix(loc, suiteLocations)
	}
	return loc
}

func (s *scoped) locOut(loc string) string {
	if s.located != nil {
		return s.located.suiteLocation(loc)
	}
	if s.locRoot != "" && strings.HasPrefix(loc, s.locRoot+"/") {
		return suiteLocations + strings.TrimPrefix(loc, s.locRoot)
	}
	return loc
}

func (s *scoped) table(t *store.Table) *store.Table {
	if t == nil {
		return nil
	}
	c := *t
	c.ID = s.out(t.ID)
	c.Location = s.locOut(t.Location)
	return &c
}

// OnBranch implements store.BranchedData: the scoped view of the inner
// target's operations on branch, when the inner target offers them as a
// DataTarget (HTTPTarget does); otherwise its data operations answer
// Unsupported (0).
func (s *scoped) OnBranch(branch string) store.ManagedData {
	c := *s
	c.inner = withoutRows{s.inner}
	if b, ok := s.inner.(store.BranchedData); ok {
		if d, ok := b.OnBranch(branch).(DataTarget); ok {
			c.inner = d
		}
	}
	return &c
}

// withoutRows is a catalog that offers no data operations.
type withoutRows struct{ store.Catalog }

func (s *scoped) data() (DataTarget, error) {
	d, ok := s.inner.(DataTarget)
	if !ok {
		return nil, store.Errorf(store.CodeUnsupported, "the scoped target keeps no rows")
	}
	return d, nil
}

// CreateNamespace implements store.Namespaces.
func (s *scoped) CreateNamespace(ctx context.Context, id []string, mode store.CreateMode, props map[string]string) (*store.Namespace, error) {
	ns, err := s.inner.CreateNamespace(ctx, s.in(id), mode, props)
	if ns != nil {
		ns.ID = s.out(ns.ID)
	}
	return ns, err
}

// ListNamespaces implements store.Namespaces.
func (s *scoped) ListNamespaces(ctx context.Context, parent []string, page store.Page) ([]string, string, error) {
	return s.inner.ListNamespaces(ctx, s.in(parent), page)
}

// DescribeNamespace implements store.Namespaces.
func (s *scoped) DescribeNamespace(ctx context.Context, id []string) (*store.Namespace, error) {
	ns, err := s.inner.DescribeNamespace(ctx, s.in(id))
	if ns != nil {
		ns.ID = s.out(ns.ID)
	}
	return ns, err
}

// DropNamespace implements store.Namespaces.
func (s *scoped) DropNamespace(ctx context.Context, id []string, mode store.DropMode, behavior store.DropBehavior) (*store.Namespace, []string, error) {
	ns, txs, err := s.inner.DropNamespace(ctx, s.in(id), mode, behavior)
	if ns != nil {
		ns.ID = s.out(ns.ID)
	}
	return ns, txs, err
}

// NamespaceExists implements store.Namespaces.
func (s *scoped) NamespaceExists(ctx context.Context, id []string) error {
	return s.inner.NamespaceExists(ctx, s.in(id))
}

// ListTables implements store.Tables.
func (s *scoped) ListTables(ctx context.Context, ns []string, includeDeclared bool, page store.Page) ([]string, string, error) {
	return s.inner.ListTables(ctx, s.in(ns), includeDeclared, page)
}

// ListAllTables implements store.Tables: it reads the whole catalog's
// listing and answers, in one page, the tables under the prefix.
func (s *scoped) ListAllTables(ctx context.Context, includeDeclared bool, _ store.Page) ([][]string, string, error) {
	var out [][]string
	token := ""
	for {
		ids, next, err := s.inner.ListAllTables(ctx, includeDeclared, store.Page{Token: token})
		if err != nil {
			return nil, "", err
		}
		for _, id := range ids {
			if len(id) > len(s.prefix) && slices.Equal(id[:len(s.prefix)], s.prefix) {
				out = append(out, s.out(id))
			}
		}
		if next == "" {
			return out, "", nil
		}
		token = next
	}
}

// DeclareTable implements store.Tables.
func (s *scoped) DeclareTable(ctx context.Context, id []string, decl store.TableDeclaration) (*store.Table, string, error) {
	suite := decl.Location
	if s.located != nil && isSuiteLocation(suite) {
		decl.Location = "" // the server's choice
	} else {
		decl.Location = s.locIn(decl.Location)
	}
	t, tx, err := s.inner.DeclareTable(ctx, s.in(id), decl)
	if s.located != nil && isSuiteLocation(suite) && t != nil {
		s.located.remember(suite, t.Location)
	}
	return s.table(t), tx, err
}

// RegisterTable implements store.Tables.
func (s *scoped) RegisterTable(ctx context.Context, id []string, reg store.TableRegistration) (*store.Table, string, error) {
	if s.located != nil {
		loc, err := s.placeFor(ctx, reg.Location)
		if err != nil {
			return nil, "", err
		}
		reg.Location = loc
	} else {
		reg.Location = s.locIn(reg.Location)
	}
	t, tx, err := s.inner.RegisterTable(ctx, s.in(id), reg)
	return s.table(t), tx, err
}

// DescribeTable implements store.Tables.
func (s *scoped) DescribeTable(ctx context.Context, id []string) (*store.Table, error) {
	t, err := s.inner.DescribeTable(ctx, s.in(id))
	return s.table(t), err
}

// DropTable implements store.Tables.
func (s *scoped) DropTable(ctx context.Context, id []string) (*store.Table, string, error) {
	t, tx, err := s.inner.DropTable(ctx, s.in(id))
	return s.table(t), tx, err
}

// DeregisterTable implements store.Tables.
func (s *scoped) DeregisterTable(ctx context.Context, id []string) (*store.Table, string, error) {
	t, tx, err := s.inner.DeregisterTable(ctx, s.in(id))
	return s.table(t), tx, err
}

// RenameTable implements store.Tables; a nil newNamespace keeps the
// table's namespace.
func (s *scoped) RenameTable(ctx context.Context, id []string, newNamespace []string, newName string) (string, error) {
	if newNamespace != nil {
		newNamespace = s.in(newNamespace)
	}
	return s.inner.RenameTable(ctx, s.in(id), newNamespace, newName)
}

// CommitVersion implements store.Versions.
func (s *scoped) CommitVersion(ctx context.Context, id []string, c store.VersionCommit) (*store.TableVersion, string, error) {
	if s.located == nil {
		return s.inner.CommitVersion(ctx, s.in(id), c)
	}
	c, suite := s.stage(ctx, s.in(id), "", c)
	v, tx, err := s.inner.CommitVersion(ctx, s.in(id), c)
	return s.located.committed(v, suite), tx, err
}

// ListVersions implements store.Versions.
func (s *scoped) ListVersions(ctx context.Context, id []string, branch string, descending bool, page store.Page) ([]store.TableVersion, string, error) {
	vs, next, err := s.inner.ListVersions(ctx, s.in(id), branch, descending, page)
	if s.located != nil {
		for i := range vs {
			vs[i] = s.located.version(vs[i])
		}
	}
	return vs, next, err
}

// DescribeVersion implements store.Versions.
func (s *scoped) DescribeVersion(ctx context.Context, id []string, branch string, v *int64) (*store.TableVersion, error) {
	tv, err := s.inner.DescribeVersion(ctx, s.in(id), branch, v)
	if s.located != nil && tv != nil {
		out := s.located.version(*tv)
		tv = &out
	}
	return tv, err
}

// DeleteVersions implements store.Versions.
func (s *scoped) DeleteVersions(ctx context.Context, id []string, branch string, ranges []store.VersionRange) (int64, string, error) {
	return s.inner.DeleteVersions(ctx, s.in(id), branch, ranges)
}

// CommitBatch implements store.Batches. An operation without an
// identifier keeps none.
func (s *scoped) CommitBatch(ctx context.Context, ops []store.BatchOperation) ([]store.BatchResult, string, error) {
	scopedOps := make([]store.BatchOperation, len(ops))
	staged := make([]string, len(ops))
	declared := map[string]string{} // a table the batch declares → its location
	for i, op := range ops {
		if op.ID != nil {
			op.ID = s.in(op.ID)
		}
		if op.Declare != nil {
			d := *op.Declare
			if s.located != nil {
				loc, err := s.placeFor(ctx, d.Location)
				if err != nil {
					return nil, "", err
				}
				d.Location = loc
				declared[strings.Join(op.ID, "\x00")] = loc
			} else {
				d.Location = s.locIn(d.Location)
			}
			op.Declare = &d
		}
		if s.located != nil && op.CommitVersion != nil && op.ID != nil {
			c, suite := s.stage(ctx, op.ID, declared[strings.Join(op.ID, "\x00")], *op.CommitVersion)
			op.CommitVersion, staged[i] = &c, suite
		}
		scopedOps[i] = op
	}
	results, tx, err := s.inner.CommitBatch(ctx, scopedOps)
	for i := range results {
		results[i].Table = s.table(results[i].Table)
		if s.located != nil && i < len(staged) && staged[i] != "" {
			results[i].Version = s.located.committed(results[i].Version, staged[i])
		}
	}
	return results, tx, err
}

// ListTags implements store.Tags.
func (s *scoped) ListTags(ctx context.Context, id []string, page store.Page) ([]store.Tag, string, error) {
	return s.inner.ListTags(ctx, s.in(id), page)
}

// GetTag implements store.Tags.
func (s *scoped) GetTag(ctx context.Context, id []string, name string) (*store.Tag, error) {
	return s.inner.GetTag(ctx, s.in(id), name)
}

// CreateTag implements store.Tags.
func (s *scoped) CreateTag(ctx context.Context, id []string, name, branch string, version int64) (string, error) {
	return s.inner.CreateTag(ctx, s.in(id), name, branch, version)
}

// UpdateTag implements store.Tags.
func (s *scoped) UpdateTag(ctx context.Context, id []string, name, branch string, version int64) (string, error) {
	return s.inner.UpdateTag(ctx, s.in(id), name, branch, version)
}

// DeleteTag implements store.Tags.
func (s *scoped) DeleteTag(ctx context.Context, id []string, name string) (string, error) {
	return s.inner.DeleteTag(ctx, s.in(id), name)
}

// CreateBranch implements store.Branches.
func (s *scoped) CreateBranch(ctx context.Context, id []string, name, fromBranch string, fromVersion *int64) (string, error) {
	return s.inner.CreateBranch(ctx, s.in(id), name, fromBranch, fromVersion)
}

// ListBranches implements store.Branches.
func (s *scoped) ListBranches(ctx context.Context, id []string, page store.Page) ([]store.Branch, string, error) {
	return s.inner.ListBranches(ctx, s.in(id), page)
}

// DeleteBranch implements store.Branches.
func (s *scoped) DeleteBranch(ctx context.Context, id []string, name string) (string, error) {
	return s.inner.DeleteBranch(ctx, s.in(id), name)
}

// txID scopes a transaction identifier that names a table and a version.
func (s *scoped) txID(id []string) []string {
	if len(id) > 1 {
		return s.in(id)
	}
	return id
}

// DescribeTransaction implements store.Transactions.
func (s *scoped) DescribeTransaction(ctx context.Context, id []string) (*store.Transaction, error) {
	return s.inner.DescribeTransaction(ctx, s.txID(id))
}

// AlterTransaction implements store.Transactions.
func (s *scoped) AlterTransaction(ctx context.Context, id []string, actions []store.TransactionAction) (*store.Transaction, error) {
	return s.inner.AlterTransaction(ctx, s.txID(id), actions)
}

// CreateTable implements store.ManagedData.
func (s *scoped) CreateTable(ctx context.Context, id []string, nt store.NewTable) (*store.Table, store.WriteResult, error) {
	d, err := s.data()
	if err != nil {
		return nil, store.WriteResult{}, err
	}
	t, res, err := d.CreateTable(ctx, s.in(id), nt)
	return s.table(t), res, err
}

// Insert implements store.ManagedData.
func (s *scoped) Insert(ctx context.Context, id []string, mode store.InsertMode, data store.Data) (store.WriteResult, error) {
	d, err := s.data()
	if err != nil {
		return store.WriteResult{}, err
	}
	return d.Insert(ctx, s.in(id), mode, data)
}

// MergeInsert implements store.ManagedData.
func (s *scoped) MergeInsert(ctx context.Context, id []string, m store.Merge) (store.WriteResult, error) {
	d, err := s.data()
	if err != nil {
		return store.WriteResult{}, err
	}
	return d.MergeInsert(ctx, s.in(id), m)
}

// Update implements store.ManagedData.
func (s *scoped) Update(ctx context.Context, id []string, updates []store.ColumnUpdate, predicate string) (store.WriteResult, error) {
	d, err := s.data()
	if err != nil {
		return store.WriteResult{}, err
	}
	return d.Update(ctx, s.in(id), updates, predicate)
}

// Delete implements store.ManagedData.
func (s *scoped) Delete(ctx context.Context, id []string, predicate string) (store.WriteResult, error) {
	d, err := s.data()
	if err != nil {
		return store.WriteResult{}, err
	}
	return d.Delete(ctx, s.in(id), predicate)
}

// CountRows implements store.ManagedData.
func (s *scoped) CountRows(ctx context.Context, id []string, version *int64, predicate string) (int64, int64, error) {
	d, err := s.data()
	if err != nil {
		return 0, 0, err
	}
	return d.CountRows(ctx, s.in(id), version, predicate)
}

// Query implements store.ManagedData.
func (s *scoped) Query(ctx context.Context, id []string, q store.Query) (*store.Result, error) {
	d, err := s.data()
	if err != nil {
		return nil, err
	}
	return d.Query(ctx, s.in(id), q)
}

// ExplainQuery implements store.ManagedData.
func (s *scoped) ExplainQuery(ctx context.Context, id []string, q store.Query, analyze bool) (string, error) {
	d, err := s.data()
	if err != nil {
		return "", err
	}
	return d.ExplainQuery(ctx, s.in(id), q, analyze)
}

// Restore implements store.ManagedData.
func (s *scoped) Restore(ctx context.Context, id []string, version int64) (store.WriteResult, error) {
	d, err := s.data()
	if err != nil {
		return store.WriteResult{}, err
	}
	return d.Restore(ctx, s.in(id), version)
}

// Describe implements store.ManagedData.
func (s *scoped) Describe(ctx context.Context, id []string, version *int64) (*store.TableData, error) {
	d, err := s.data()
	if err != nil {
		return nil, err
	}
	return d.Describe(ctx, s.in(id), version)
}

// Stats implements store.ManagedData.
func (s *scoped) Stats(ctx context.Context, id []string) (*store.TableStats, error) {
	d, err := s.data()
	if err != nil {
		return nil, err
	}
	return d.Stats(ctx, s.in(id))
}

// AddColumns implements store.ManagedData.
func (s *scoped) AddColumns(ctx context.Context, id []string, cols []store.NewColumn) (store.WriteResult, error) {
	d, err := s.data()
	if err != nil {
		return store.WriteResult{}, err
	}
	return d.AddColumns(ctx, s.in(id), cols)
}

// QueueBackfill implements store.ManagedData.
func (s *scoped) QueueBackfill(ctx context.Context, id []string, column, where string) (string, error) {
	d, err := s.data()
	if err != nil {
		return "", err
	}
	return d.QueueBackfill(ctx, s.in(id), column, where)
}

// Backfill implements store.ManagedData.
func (s *scoped) Backfill(ctx context.Context, job store.BackfillColumn) (store.WriteResult, error) {
	d, err := s.data()
	if err != nil {
		return store.WriteResult{}, err
	}
	return d.Backfill(ctx, job)
}

// AlterColumns implements store.ManagedData.
func (s *scoped) AlterColumns(ctx context.Context, id []string, alts []store.ColumnAlteration) (store.WriteResult, error) {
	d, err := s.data()
	if err != nil {
		return store.WriteResult{}, err
	}
	return d.AlterColumns(ctx, s.in(id), alts)
}

// DropColumns implements store.ManagedData.
func (s *scoped) DropColumns(ctx context.Context, id []string, paths []string) (store.WriteResult, error) {
	d, err := s.data()
	if err != nil {
		return store.WriteResult{}, err
	}
	return d.DropColumns(ctx, s.in(id), paths)
}

// UpdateFieldMetadata implements store.ManagedData.
func (s *scoped) UpdateFieldMetadata(ctx context.Context, id []string, updates []store.FieldMetadataUpdate) (store.WriteResult, map[string]map[string]string, error) {
	d, err := s.data()
	if err != nil {
		return store.WriteResult{}, nil, err
	}
	return d.UpdateFieldMetadata(ctx, s.in(id), updates)
}

// UpdateSchemaMetadata implements store.ManagedData.
func (s *scoped) UpdateSchemaMetadata(ctx context.Context, id []string, set map[string]string) (store.WriteResult, map[string]string, error) {
	d, err := s.data()
	if err != nil {
		return store.WriteResult{}, nil, err
	}
	return d.UpdateSchemaMetadata(ctx, s.in(id), set)
}

// CreateIndex implements store.Indexes.
func (s *scoped) CreateIndex(ctx context.Context, id []string, spec store.IndexSpec) (string, error) {
	d, err := s.data()
	if err != nil {
		return "", err
	}
	return d.CreateIndex(ctx, s.in(id), spec)
}

// BuildIndex implements store.Indexes.
func (s *scoped) BuildIndex(ctx context.Context, job store.BuildIndex) error {
	d, err := s.data()
	if err != nil {
		return err
	}
	return d.BuildIndex(ctx, job)
}

// ListIndices implements store.Indexes.
func (s *scoped) ListIndices(ctx context.Context, id []string, version *int64, page store.Page) ([]store.IndexInfo, string, error) {
	d, err := s.data()
	if err != nil {
		return nil, "", err
	}
	return d.ListIndices(ctx, s.in(id), version, page)
}

// DescribeIndex implements store.Indexes.
func (s *scoped) DescribeIndex(ctx context.Context, id []string, name string, version *int64) (*store.IndexInfo, error) {
	d, err := s.data()
	if err != nil {
		return nil, err
	}
	return d.DescribeIndex(ctx, s.in(id), name, version)
}

// DropIndex implements store.Indexes.
func (s *scoped) DropIndex(ctx context.Context, id []string, name string) (string, error) {
	d, err := s.data()
	if err != nil {
		return "", err
	}
	return d.DropIndex(ctx, s.in(id), name)
}

// PrewarmIndex implements store.Indexes.
func (s *scoped) PrewarmIndex(ctx context.Context, id []string, name string) error {
	d, err := s.data()
	if err != nil {
		return err
	}
	return d.PrewarmIndex(ctx, s.in(id), name)
}
