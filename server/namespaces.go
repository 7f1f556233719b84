package server

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/lancens/lancens/auth"
	"github.com/lancens/lancens/gen"
	"github.com/lancens/lancens/store"
)

// CreateNamespace handles POST /v1/namespace/{id}/create.
func (s *Server) CreateNamespace(c echo.Context, _ gen.Id, p gen.CreateNamespaceParams) error {
	var req gen.CreateNamespaceRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	id, err := resolveID(c, p.Delimiter, req.Id)
	if err != nil {
		return err
	}
	mode, err := store.ParseCreateMode(deref(req.Mode))
	if err != nil {
		return err
	}
	ns, err := s.store.CreateNamespace(c.Request().Context(), id, mode, deref(req.Properties))
	if err != nil {
		return err
	}
	return ok(c, gen.CreateNamespaceResponse{Properties: &ns.Properties})
}

// ListNamespaces handles GET /v1/namespace/{id}/list.
func (s *Server) ListNamespaces(c echo.Context, _ gen.Id, p gen.ListNamespacesParams) error {
	id, err := resolveID(c, p.Delimiter, nil)
	if err != nil {
		return err
	}
	pg, err := s.page(p.PageToken, p.Limit)
	if err != nil {
		return err
	}
	names, next, err := visible(c, pg, func(pg store.Page) ([]string, string, error) {
		return s.store.ListNamespaces(c.Request().Context(), id, pg)
	}, func(p auth.Principal, name string) bool { return p.Sees(child(id, name)) })
	if err != nil {
		return err
	}
	return ok(c, gen.ListNamespacesResponse{Namespaces: names, PageToken: optional(next)})
}

// DescribeNamespace handles POST /v1/namespace/{id}/describe.
func (s *Server) DescribeNamespace(c echo.Context, _ gen.Id, p gen.DescribeNamespaceParams) error {
	var req gen.DescribeNamespaceRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	id, err := resolveID(c, p.Delimiter, req.Id)
	if err != nil {
		return err
	}
	ns, err := s.store.DescribeNamespace(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return ok(c, gen.DescribeNamespaceResponse{Properties: &ns.Properties})
}

// DropNamespace handles POST /v1/namespace/{id}/drop.
func (s *Server) DropNamespace(c echo.Context, _ gen.Id, p gen.DropNamespaceParams) error {
	var req gen.DropNamespaceRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	id, err := resolveID(c, p.Delimiter, req.Id)
	if err != nil {
		return err
	}
	mode, err := store.ParseDropMode(deref(req.Mode))
	if err != nil {
		return err
	}
	behavior, err := store.ParseDropBehavior(deref(req.Behavior))
	if err != nil {
		return err
	}
	ns, txIDs, err := s.store.DropNamespace(c.Request().Context(), id, mode, behavior)
	if err != nil {
		return err
	}
	var resp gen.DropNamespaceResponse
	if ns != nil {
		resp.Properties = &ns.Properties
	}
	if len(txIDs) > 0 {
		resp.TransactionId = &txIDs
	}
	return ok(c, resp)
}

// NamespaceExists handles POST /v1/namespace/{id}/exists: 200 with an empty
// body when the namespace exists.
func (s *Server) NamespaceExists(c echo.Context, _ gen.Id, p gen.NamespaceExistsParams) error {
	var req gen.NamespaceExistsRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	id, err := resolveID(c, p.Delimiter, req.Id)
	if err != nil {
		return err
	}
	if err := s.store.NamespaceExists(c.Request().Context(), id); err != nil {
		return err
	}
	return c.NoContent(http.StatusOK)
}

// child returns the identifier of name inside namespace ns.
func child(ns []string, name string) []string {
	return append(append(make([]string, 0, len(ns)+1), ns...), name)
}

// optional returns nil for "" so that empty strings are omitted from JSON.
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
