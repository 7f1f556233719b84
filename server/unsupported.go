package server

import (
	"github.com/labstack/echo/v4"

	"github.com/lancens/lancens/gen"
)

// The operations below are routed and validated but not offered yet; each
// answers Unsupported (0) naming itself.

// CreateMaterializedView answers Unsupported (0).
func (s *Server) CreateMaterializedView(c echo.Context, _ gen.Id, _ gen.CreateMaterializedViewParams) error {
	return unsupported("CreateMaterializedView")
}

// RefreshMaterializedView answers Unsupported (0).
func (s *Server) RefreshMaterializedView(c echo.Context, _ gen.Id, _ gen.RefreshMaterializedViewParams) error {
	return unsupported("RefreshMaterializedView")
}

// ListTables answers Unsupported (0).
func (s *Server) ListTables(c echo.Context, _ gen.Id, _ gen.ListTablesParams) error {
	return unsupported("ListTables")
}

// ListAllTables answers Unsupported (0).
func (s *Server) ListAllTables(c echo.Context, _ gen.ListAllTablesParams) error {
	return unsupported("ListAllTables")
}

// BatchCommitTables answers Unsupported (0).
func (s *Server) BatchCommitTables(c echo.Context, _ gen.BatchCommitTablesParams) error {
	return unsupported("BatchCommitTables")
}

// BatchCreateTableVersions answers Unsupported (0).
func (s *Server) BatchCreateTableVersions(c echo.Context, _ gen.BatchCreateTableVersionsParams) error {
	return unsupported("BatchCreateTableVersions")
}

// AlterTableAddColumns answers Unsupported (0).
func (s *Server) AlterTableAddColumns(c echo.Context, _ gen.Id, _ gen.AlterTableAddColumnsParams) error {
	return unsupported("AlterTableAddColumns")
}

// AlterTableAlterColumns answers Unsupported (0).
func (s *Server) AlterTableAlterColumns(c echo.Context, _ gen.Id, _ gen.AlterTableAlterColumnsParams) error {
	return unsupported("AlterTableAlterColumns")
}

// AnalyzeTableQueryPlan answers Unsupported (0).
func (s *Server) AnalyzeTableQueryPlan(c echo.Context, _ gen.Id, _ gen.AnalyzeTableQueryPlanParams) error {
	return unsupported("AnalyzeTableQueryPlan")
}

// AlterTableBackfillColumns answers Unsupported (0).
func (s *Server) AlterTableBackfillColumns(c echo.Context, _ gen.Id, _ gen.AlterTableBackfillColumnsParams) error {
	return unsupported("AlterTableBackfillColumns")
}

// CreateTableBranch answers Unsupported (0).
func (s *Server) CreateTableBranch(c echo.Context, _ gen.Id, _ gen.CreateTableBranchParams) error {
	return unsupported("CreateTableBranch")
}

// DeleteTableBranch answers Unsupported (0).
func (s *Server) DeleteTableBranch(c echo.Context, _ gen.Id, _ gen.DeleteTableBranchParams) error {
	return unsupported("DeleteTableBranch")
}

// ListTableBranches answers Unsupported (0).
func (s *Server) ListTableBranches(c echo.Context, _ gen.Id, _ gen.ListTableBranchesParams) error {
	return unsupported("ListTableBranches")
}

// CountTableRows answers Unsupported (0).
func (s *Server) CountTableRows(c echo.Context, _ gen.Id, _ gen.CountTableRowsParams) error {
	return unsupported("CountTableRows")
}

// CreateTable answers Unsupported (0).
func (s *Server) CreateTable(c echo.Context, _ gen.Id, _ gen.CreateTableParams) error {
	return unsupported("CreateTable")
}

// CreateTableIndex answers Unsupported (0).
func (s *Server) CreateTableIndex(c echo.Context, _ gen.Id, _ gen.CreateTableIndexParams) error {
	return unsupported("CreateTableIndex")
}

// CreateTableScalarIndex answers Unsupported (0).
func (s *Server) CreateTableScalarIndex(c echo.Context, _ gen.Id, _ gen.CreateTableScalarIndexParams) error {
	return unsupported("CreateTableScalarIndex")
}

// DeclareTable answers Unsupported (0).
func (s *Server) DeclareTable(c echo.Context, _ gen.Id, _ gen.DeclareTableParams) error {
	return unsupported("DeclareTable")
}

// DeleteFromTable answers Unsupported (0).
func (s *Server) DeleteFromTable(c echo.Context, _ gen.Id, _ gen.DeleteFromTableParams) error {
	return unsupported("DeleteFromTable")
}

// DeregisterTable answers Unsupported (0).
func (s *Server) DeregisterTable(c echo.Context, _ gen.Id, _ gen.DeregisterTableParams) error {
	return unsupported("DeregisterTable")
}

// DescribeTable answers Unsupported (0).
func (s *Server) DescribeTable(c echo.Context, _ gen.Id, _ gen.DescribeTableParams) error {
	return unsupported("DescribeTable")
}

// DropTable answers Unsupported (0).
func (s *Server) DropTable(c echo.Context, _ gen.Id, _ gen.DropTableParams) error {
	return unsupported("DropTable")
}

// AlterTableDropColumns answers Unsupported (0).
func (s *Server) AlterTableDropColumns(c echo.Context, _ gen.Id, _ gen.AlterTableDropColumnsParams) error {
	return unsupported("AlterTableDropColumns")
}

// TableExists answers Unsupported (0).
func (s *Server) TableExists(c echo.Context, _ gen.Id, _ gen.TableExistsParams) error {
	return unsupported("TableExists")
}

// ExplainTableQueryPlan answers Unsupported (0).
func (s *Server) ExplainTableQueryPlan(c echo.Context, _ gen.Id, _ gen.ExplainTableQueryPlanParams) error {
	return unsupported("ExplainTableQueryPlan")
}

// ListTableIndices answers Unsupported (0).
func (s *Server) ListTableIndices(c echo.Context, _ gen.Id, _ gen.ListTableIndicesParams) error {
	return unsupported("ListTableIndices")
}

// DropTableIndex answers Unsupported (0).
func (s *Server) DropTableIndex(c echo.Context, _ gen.Id, _ string, _ gen.DropTableIndexParams) error {
	return unsupported("DropTableIndex")
}

// DescribeTableIndexStats answers Unsupported (0).
func (s *Server) DescribeTableIndexStats(c echo.Context, _ gen.Id, _ string, _ gen.DescribeTableIndexStatsParams) error {
	return unsupported("DescribeTableIndexStats")
}

// InsertIntoTable answers Unsupported (0).
func (s *Server) InsertIntoTable(c echo.Context, _ gen.Id, _ gen.InsertIntoTableParams) error {
	return unsupported("InsertIntoTable")
}

// MergeInsertIntoTable answers Unsupported (0).
func (s *Server) MergeInsertIntoTable(c echo.Context, _ gen.Id, _ gen.MergeInsertIntoTableParams) error {
	return unsupported("MergeInsertIntoTable")
}

// QueryTable answers Unsupported (0).
func (s *Server) QueryTable(c echo.Context, _ gen.Id, _ gen.QueryTableParams) error {
	return unsupported("QueryTable")
}

// RegisterTable answers Unsupported (0).
func (s *Server) RegisterTable(c echo.Context, _ gen.Id, _ gen.RegisterTableParams) error {
	return unsupported("RegisterTable")
}

// RenameTable answers Unsupported (0).
func (s *Server) RenameTable(c echo.Context, _ gen.Id, _ gen.RenameTableParams) error {
	return unsupported("RenameTable")
}

// RestoreTable answers Unsupported (0).
func (s *Server) RestoreTable(c echo.Context, _ gen.Id, _ gen.RestoreTableParams) error {
	return unsupported("RestoreTable")
}

// UpdateTableSchemaMetadata answers Unsupported (0).
func (s *Server) UpdateTableSchemaMetadata(c echo.Context, _ gen.Id, _ gen.UpdateTableSchemaMetadataParams) error {
	return unsupported("UpdateTableSchemaMetadata")
}

// GetTableStats answers Unsupported (0).
func (s *Server) GetTableStats(c echo.Context, _ gen.Id, _ gen.GetTableStatsParams) error {
	return unsupported("GetTableStats")
}

// CreateTableTag answers Unsupported (0).
func (s *Server) CreateTableTag(c echo.Context, _ gen.Id, _ gen.CreateTableTagParams) error {
	return unsupported("CreateTableTag")
}

// DeleteTableTag answers Unsupported (0).
func (s *Server) DeleteTableTag(c echo.Context, _ gen.Id, _ gen.DeleteTableTagParams) error {
	return unsupported("DeleteTableTag")
}

// ListTableTags answers Unsupported (0).
func (s *Server) ListTableTags(c echo.Context, _ gen.Id, _ gen.ListTableTagsParams) error {
	return unsupported("ListTableTags")
}

// UpdateTableTag answers Unsupported (0).
func (s *Server) UpdateTableTag(c echo.Context, _ gen.Id, _ gen.UpdateTableTagParams) error {
	return unsupported("UpdateTableTag")
}

// GetTableTagVersion answers Unsupported (0).
func (s *Server) GetTableTagVersion(c echo.Context, _ gen.Id, _ gen.GetTableTagVersionParams) error {
	return unsupported("GetTableTagVersion")
}

// UpdateTable answers Unsupported (0).
func (s *Server) UpdateTable(c echo.Context, _ gen.Id, _ gen.UpdateTableParams) error {
	return unsupported("UpdateTable")
}

// UpdateFieldMetadata answers Unsupported (0).
func (s *Server) UpdateFieldMetadata(c echo.Context, _ gen.Id, _ gen.UpdateFieldMetadataParams) error {
	return unsupported("UpdateFieldMetadata")
}

// CreateTableVersion answers Unsupported (0).
func (s *Server) CreateTableVersion(c echo.Context, _ gen.Id, _ gen.CreateTableVersionParams) error {
	return unsupported("CreateTableVersion")
}

// BatchDeleteTableVersions answers Unsupported (0).
func (s *Server) BatchDeleteTableVersions(c echo.Context, _ gen.Id, _ gen.BatchDeleteTableVersionsParams) error {
	return unsupported("BatchDeleteTableVersions")
}

// DescribeTableVersion answers Unsupported (0).
func (s *Server) DescribeTableVersion(c echo.Context, _ gen.Id, _ gen.DescribeTableVersionParams) error {
	return unsupported("DescribeTableVersion")
}

// ListTableVersions answers Unsupported (0).
func (s *Server) ListTableVersions(c echo.Context, _ gen.Id, _ gen.ListTableVersionsParams) error {
	return unsupported("ListTableVersions")
}

// AlterTransaction answers Unsupported (0).
func (s *Server) AlterTransaction(c echo.Context, _ gen.Id, _ gen.AlterTransactionParams) error {
	return unsupported("AlterTransaction")
}

// DescribeTransaction answers Unsupported (0).
func (s *Server) DescribeTransaction(c echo.Context, _ gen.Id, _ gen.DescribeTransactionParams) error {
	return unsupported("DescribeTransaction")
}
