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

// DeleteFromTable answers Unsupported (0).
func (s *Server) DeleteFromTable(c echo.Context, _ gen.Id, _ gen.DeleteFromTableParams) error {
	return unsupported("DeleteFromTable")
}

// AlterTableDropColumns answers Unsupported (0).
func (s *Server) AlterTableDropColumns(c echo.Context, _ gen.Id, _ gen.AlterTableDropColumnsParams) error {
	return unsupported("AlterTableDropColumns")
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

// UpdateTable answers Unsupported (0).
func (s *Server) UpdateTable(c echo.Context, _ gen.Id, _ gen.UpdateTableParams) error {
	return unsupported("UpdateTable")
}

// UpdateFieldMetadata answers Unsupported (0).
func (s *Server) UpdateFieldMetadata(c echo.Context, _ gen.Id, _ gen.UpdateFieldMetadataParams) error {
	return unsupported("UpdateFieldMetadata")
}
