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

// CreateTableIndex answers Unsupported (0).
func (s *Server) CreateTableIndex(c echo.Context, _ gen.Id, _ gen.CreateTableIndexParams) error {
	return unsupported("CreateTableIndex")
}

// CreateTableScalarIndex answers Unsupported (0).
func (s *Server) CreateTableScalarIndex(c echo.Context, _ gen.Id, _ gen.CreateTableScalarIndexParams) error {
	return unsupported("CreateTableScalarIndex")
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
