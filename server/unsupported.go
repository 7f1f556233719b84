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
