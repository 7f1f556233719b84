package conformance

import (
	"context"

	"github.com/lancens/lancens/store"
)

// AlternateData returns a DataTarget whose every call, of the catalog and
// of the data plane, goes to the next of targets in turn, so that each
// case checks that a write acknowledged by one server is seen by the next
// call on another. When every target implements
// store.BranchedData, so does the result, with the calls on a branch
// alternating too.
func AlternateData(targets ...DataTarget) DataTarget {
	cats := make([]store.Catalog, len(targets))
	branched := true
	for i, t := range targets {
		cats[i] = t
		_, ok := t.(store.BranchedData)
		branched = branched && ok
	}
	a := &alternatingData{alternating: &alternating{targets: cats}}
	if branched {
		return alternatingBranched{a}
	}
	return a
}

type alternatingData struct {
	*alternating
}

// alternatingBranched is an alternatingData whose targets all implement
// store.BranchedData.
type alternatingBranched struct {
	*alternatingData
}

// onBranch is a target whose data calls act on one branch.
type onBranch struct {
	store.Catalog
	store.ManagedData
	store.Indexes
}

// OnBranch implements store.BranchedData: the calls on branch go to each
// target's branch in turn.
func (a alternatingBranched) OnBranch(branch string) store.ManagedData {
	cats := make([]store.Catalog, len(a.targets))
	for i, t := range a.targets {
		cats[i] = onBranch{Catalog: t, ManagedData: t.(store.BranchedData).OnBranch(branch), Indexes: t.(store.Indexes)}
	}
	return &alternatingData{alternating: &alternating{targets: cats}}
}

func (a *alternatingData) data() DataTarget { return a.pick().(DataTarget) }

// CreateTable implements store.ManagedData.
func (a *alternatingData) CreateTable(ctx context.Context, id []string, t store.NewTable) (*store.Table, store.WriteResult, error) {
	return a.data().CreateTable(ctx, id, t)
}

// Insert implements store.ManagedData.
func (a *alternatingData) Insert(ctx context.Context, id []string, mode store.InsertMode, d store.Data) (store.WriteResult, error) {
	return a.data().Insert(ctx, id, mode, d)
}

// MergeInsert implements store.ManagedData.
func (a *alternatingData) MergeInsert(ctx context.Context, id []string, m store.Merge) (store.WriteResult, error) {
	return a.data().MergeInsert(ctx, id, m)
}

// Update implements store.ManagedData.
func (a *alternatingData) Update(ctx context.Context, id []string, updates []store.ColumnUpdate, predicate string) (store.WriteResult, error) {
	return a.data().Update(ctx, id, updates, predicate)
}

// Delete implements store.ManagedData.
func (a *alternatingData) Delete(ctx context.Context, id []string, predicate string) (store.WriteResult, error) {
	return a.data().Delete(ctx, id, predicate)
}

// CountRows implements store.ManagedData.
func (a *alternatingData) CountRows(ctx context.Context, id []string, version *int64, predicate string) (int64, int64, error) {
	return a.data().CountRows(ctx, id, version, predicate)
}

// Query implements store.ManagedData.
func (a *alternatingData) Query(ctx context.Context, id []string, q store.Query) (*store.Result, error) {
	return a.data().Query(ctx, id, q)
}

// ExplainQuery implements store.ManagedData.
func (a *alternatingData) ExplainQuery(ctx context.Context, id []string, q store.Query, analyze bool) (string, error) {
	return a.data().ExplainQuery(ctx, id, q, analyze)
}

// Restore implements store.ManagedData.
func (a *alternatingData) Restore(ctx context.Context, id []string, version int64) (store.WriteResult, error) {
	return a.data().Restore(ctx, id, version)
}

// Describe implements store.ManagedData.
func (a *alternatingData) Describe(ctx context.Context, id []string, version *int64) (*store.TableData, error) {
	return a.data().Describe(ctx, id, version)
}

// Stats implements store.ManagedData.
func (a *alternatingData) Stats(ctx context.Context, id []string) (*store.TableStats, error) {
	return a.data().Stats(ctx, id)
}

// AddColumns implements store.ManagedData.
func (a *alternatingData) AddColumns(ctx context.Context, id []string, cols []store.NewColumn) (store.WriteResult, error) {
	return a.data().AddColumns(ctx, id, cols)
}

// QueueBackfill implements store.ManagedData.
func (a *alternatingData) QueueBackfill(ctx context.Context, id []string, column, where string) (string, error) {
	return a.data().QueueBackfill(ctx, id, column, where)
}

// Backfill implements store.ManagedData.
func (a *alternatingData) Backfill(ctx context.Context, job store.BackfillColumn) (store.WriteResult, error) {
	return a.data().Backfill(ctx, job)
}

// AlterColumns implements store.ManagedData.
func (a *alternatingData) AlterColumns(ctx context.Context, id []string, alts []store.ColumnAlteration) (store.WriteResult, error) {
	return a.data().AlterColumns(ctx, id, alts)
}

// DropColumns implements store.ManagedData.
func (a *alternatingData) DropColumns(ctx context.Context, id []string, paths []string) (store.WriteResult, error) {
	return a.data().DropColumns(ctx, id, paths)
}

// UpdateFieldMetadata implements store.ManagedData.
func (a *alternatingData) UpdateFieldMetadata(ctx context.Context, id []string, updates []store.FieldMetadataUpdate) (store.WriteResult, map[string]map[string]string, error) {
	return a.data().UpdateFieldMetadata(ctx, id, updates)
}

// UpdateSchemaMetadata implements store.ManagedData.
func (a *alternatingData) UpdateSchemaMetadata(ctx context.Context, id []string, set map[string]string) (store.WriteResult, map[string]string, error) {
	return a.data().UpdateSchemaMetadata(ctx, id, set)
}

// CreateIndex implements store.Indexes.
func (a *alternatingData) CreateIndex(ctx context.Context, id []string, spec store.IndexSpec) (string, error) {
	return a.data().CreateIndex(ctx, id, spec)
}

// BuildIndex implements store.Indexes.
func (a *alternatingData) BuildIndex(ctx context.Context, job store.BuildIndex) error {
	return a.data().BuildIndex(ctx, job)
}

// ListIndices implements store.Indexes.
func (a *alternatingData) ListIndices(ctx context.Context, id []string, version *int64, page store.Page) ([]store.IndexInfo, string, error) {
	return a.data().ListIndices(ctx, id, version, page)
}

// DescribeIndex implements store.Indexes.
func (a *alternatingData) DescribeIndex(ctx context.Context, id []string, name string, version *int64) (*store.IndexInfo, error) {
	return a.data().DescribeIndex(ctx, id, name, version)
}

// DropIndex implements store.Indexes.
func (a *alternatingData) DropIndex(ctx context.Context, id []string, name string) (string, error) {
	return a.data().DropIndex(ctx, id, name)
}

// PrewarmIndex implements store.Indexes.
func (a *alternatingData) PrewarmIndex(ctx context.Context, id []string, name string) error {
	return a.data().PrewarmIndex(ctx, id, name)
}
