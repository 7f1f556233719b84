package server

import (
	"context"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/lancens/lancens/store"
)

// managedOperations are the operations on the rows, schemas and indexes of
// managed tables. A server whose store keeps no managed tables refuses
// them before reading the request (see refuseManaged).
var managedOperations = map[string]bool{
	"CreateTable": true, "InsertIntoTable": true, "MergeInsertIntoTable": true, "UpdateTable": true,
	"DeleteFromTable": true, "QueryTable": true, "CountTableRows": true, "ExplainTableQueryPlan": true,
	"AnalyzeTableQueryPlan": true, "RestoreTable": true, "GetTableStats": true,
	"AlterTableAddColumns": true, "AlterTableAlterColumns": true, "AlterTableDropColumns": true,
	"AlterTableBackfillColumns": true, "UpdateTableSchemaMetadata": true, "UpdateFieldMetadata": true,
	"CreateTableIndex": true, "CreateTableScalarIndex": true, "ListTableIndices": true,
	"DescribeTableIndexStats": true, "DropTableIndex": true,
	"CreateMaterializedView": true, "RefreshMaterializedView": true,
}

// errNoManagedTables is the answer of a catalog-only store to operation op:
// Unsupported (0, HTTP 406) saying what would serve it.
func errNoManagedTables(op string) error {
	return store.Errorf(store.CodeUnsupported, "%s works on managed tables (rows kept by lancens), which need the embedded SQLite store "+
		"(lancens serve --db with a file path); this server's catalog is on PostgreSQL and keeps external tables only, "+
		"whose data Lance clients write at the table's location", op)
}

// refuseManaged answers the managed-table operations Unsupported (0)
// before their request bodies are read. It is in the chain only when the
// store keeps no managed tables.
func (s *Server) refuseManaged(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if op := s.ops.lookup(c); op != nil && managedOperations[op.id] {
			return errNoManagedTables(op.id)
		}
		return next(c)
	}
}

// catalogOnly makes a store.Backend a store.ManagedBackend whose
// managed-table calls all answer Unsupported (0): the job runner and the
// handlers then need no second kind of store.
type catalogOnly struct{ store.Backend }

func (catalogOnly) CreateTable(context.Context, []string, store.NewTable) (*store.Table, store.WriteResult, error) {
	return nil, store.WriteResult{}, errNoManagedTables("CreateTable")
}

func (catalogOnly) Insert(context.Context, []string, store.InsertMode, store.Data) (store.WriteResult, error) {
	return store.WriteResult{}, errNoManagedTables("InsertIntoTable")
}

func (catalogOnly) MergeInsert(context.Context, []string, store.Merge) (store.WriteResult, error) {
	return store.WriteResult{}, errNoManagedTables("MergeInsertIntoTable")
}

func (catalogOnly) Update(context.Context, []string, []store.ColumnUpdate, string) (store.WriteResult, error) {
	return store.WriteResult{}, errNoManagedTables("UpdateTable")
}

func (catalogOnly) Delete(context.Context, []string, string) (store.WriteResult, error) {
	return store.WriteResult{}, errNoManagedTables("DeleteFromTable")
}

func (catalogOnly) CountRows(context.Context, []string, *int64, string) (int64, int64, error) {
	return 0, 0, errNoManagedTables("CountTableRows")
}

func (catalogOnly) Query(context.Context, []string, store.Query) (*store.Result, error) {
	return nil, errNoManagedTables("QueryTable")
}

func (catalogOnly) ExplainQuery(context.Context, []string, store.Query, bool) (string, error) {
	return "", errNoManagedTables("ExplainTableQueryPlan")
}

func (catalogOnly) Restore(context.Context, []string, int64) (store.WriteResult, error) {
	return store.WriteResult{}, errNoManagedTables("RestoreTable")
}

func (catalogOnly) Describe(context.Context, []string, *int64) (*store.TableData, error) {
	return nil, errNoManagedTables("DescribeTable")
}

func (catalogOnly) Stats(context.Context, []string) (*store.TableStats, error) {
	return nil, errNoManagedTables("GetTableStats")
}

func (catalogOnly) AddColumns(context.Context, []string, []store.NewColumn) (store.WriteResult, error) {
	return store.WriteResult{}, errNoManagedTables("AlterTableAddColumns")
}

func (catalogOnly) QueueBackfill(context.Context, []string, string, string) (string, error) {
	return "", errNoManagedTables("AlterTableBackfillColumns")
}

func (catalogOnly) Backfill(context.Context, store.BackfillColumn) (store.WriteResult, error) {
	return store.WriteResult{}, errNoManagedTables("AlterTableBackfillColumns")
}

func (catalogOnly) AlterColumns(context.Context, []string, []store.ColumnAlteration) (store.WriteResult, error) {
	return store.WriteResult{}, errNoManagedTables("AlterTableAlterColumns")
}

func (catalogOnly) DropColumns(context.Context, []string, []string) (store.WriteResult, error) {
	return store.WriteResult{}, errNoManagedTables("AlterTableDropColumns")
}

func (catalogOnly) UpdateFieldMetadata(context.Context, []string, []store.FieldMetadataUpdate) (store.WriteResult, map[string]map[string]string, error) {
	return store.WriteResult{}, nil, errNoManagedTables("UpdateFieldMetadata")
}

func (catalogOnly) UpdateSchemaMetadata(context.Context, []string, map[string]string) (store.WriteResult, map[string]string, error) {
	return store.WriteResult{}, nil, errNoManagedTables("UpdateTableSchemaMetadata")
}

func (catalogOnly) CreateIndex(context.Context, []string, store.IndexSpec) (string, error) {
	return "", errNoManagedTables("CreateTableIndex")
}

func (catalogOnly) BuildIndex(context.Context, store.BuildIndex) error {
	return errNoManagedTables("CreateTableIndex")
}

func (catalogOnly) ListIndices(context.Context, []string, *int64, store.Page) ([]store.IndexInfo, string, error) {
	return nil, "", errNoManagedTables("ListTableIndices")
}

func (catalogOnly) DescribeIndex(context.Context, []string, string, *int64) (*store.IndexInfo, error) {
	return nil, errNoManagedTables("DescribeTableIndexStats")
}

func (catalogOnly) DropIndex(context.Context, []string, string) (string, error) {
	return "", errNoManagedTables("DropTableIndex")
}

func (catalogOnly) PrewarmIndex(context.Context, []string, string) error {
	return errNoManagedTables("PrewarmIndex")
}

func (c catalogOnly) OnBranch(string) store.ManagedData { return c }

func (catalogOnly) CreateView(context.Context, []string, store.ViewDefinition, bool) (*store.Table, store.WriteResult, string, error) {
	return nil, store.WriteResult{}, "", errNoManagedTables("CreateMaterializedView")
}

func (catalogOnly) QueueRefresh(context.Context, []string, *int64) (string, error) {
	return "", errNoManagedTables("RefreshMaterializedView")
}

func (catalogOnly) RefreshView(context.Context, store.RefreshView) (store.WriteResult, error) {
	return store.WriteResult{}, errNoManagedTables("RefreshMaterializedView")
}

func (catalogOnly) CleanupVersions(context.Context, []string, time.Time) (store.CleanupResult, string, error) {
	return store.CleanupResult{}, "", errNoManagedTables("OptimizeTable")
}

// QueueCleanups has nothing to queue: a catalog-only store keeps no rows.
func (catalogOnly) QueueCleanups(context.Context, time.Time) (int, error) { return 0, nil }

func (catalogOnly) RunCleanup(context.Context, store.CleanupVersions) (store.CleanupResult, error) {
	return store.CleanupResult{}, errNoManagedTables("OptimizeTable")
}

func (catalogOnly) Optimize(context.Context, []string, time.Time) (store.CleanupResult, string, error) {
	return store.CleanupResult{}, "", errNoManagedTables("OptimizeTable")
}
