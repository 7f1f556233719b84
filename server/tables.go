package server

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/lancens/lancens/auth"
	"github.com/lancens/lancens/gen"
	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/vend"
	"github.com/lancens/lancens/warehouse"
)

// ListTables handles GET /v1/namespace/{id}/table/list.
func (s *Server) ListTables(c echo.Context, _ gen.Id, p gen.ListTablesParams) error {
	ns, err := resolveID(c, p.Delimiter, nil)
	if err != nil {
		return err
	}
	pg, err := s.page(p.PageToken, p.Limit)
	if err != nil {
		return err
	}
	names, next, err := visible(c, pg, func(pg store.Page) ([]string, string, error) {
		return s.store.ListTables(c.Request().Context(), ns, boolOr(p.IncludeDeclared, true), pg)
	}, func(p auth.Principal, name string) bool { return p.Covers(child(ns, name)) })
	if err != nil {
		return err
	}
	return ok(c, gen.ListTablesResponse{Tables: names, PageToken: optional(next)})
}

// ListAllTables handles GET /v1/table: every table, as full identifiers
// joined by the delimiter. A page_token that is not one of ours is read as
// the identifier to start after, written as the listing writes them.
func (s *Server) ListAllTables(c echo.Context, p gen.ListAllTablesParams) error {
	pg, err := s.page(p.PageToken, p.Limit)
	if err != nil {
		return err
	}
	d := delimiterOf(p.Delimiter)
	if pg.Token, err = tablePageToken(pg.Token, d); err != nil {
		return err
	}
	ids, next, err := visible(c, pg, func(pg store.Page) ([][]string, string, error) {
		return s.store.ListAllTables(c.Request().Context(), boolOr(p.IncludeDeclared, true), pg)
	}, auth.Principal.Covers)
	if err != nil {
		return err
	}
	names := make([]string, len(ids))
	for i, id := range ids {
		names[i] = strings.Join(id, d)
	}
	return ok(c, gen.ListTablesResponse{Tables: names, PageToken: optional(next)})
}

// tablePageToken returns the store's ListAllTables token for a page_token:
// ours as it is, and any other string as the identifier it spells with
// delimiter d (see store.TablePageToken). Returns InvalidInput (13) when a
// name of that identifier holds a control character.
func tablePageToken(token, d string) (string, error) {
	if _, err := store.DecodeTablePageToken(token); err == nil {
		return token, nil
	}
	id := splitID(token, d)
	if len(id) == 0 {
		return "", nil
	}
	if err := checkNames(id); err != nil {
		return "", err
	}
	return store.TablePageToken(id), nil
}

// declaration decides where a declared table's data goes: the location the
// client asked for, checked (it must lie inside the warehouse or an
// external root), or a new directory in the warehouse. Returns
// InvalidInput (13) for a location that is refused.
func (s *Server) declaration(id []string, req gen.DeclareTableRequest) (store.TableDeclaration, error) {
	decl := store.TableDeclaration{Properties: deref(req.Properties)}
	if len(id) == 0 {
		return decl, invalidInput("a table identifier needs at least one name")
	}
	if req.Location != nil {
		loc, owned, err := s.warehouse.Resolve(*req.Location)
		if err != nil {
			return decl, err
		}
		decl.Location, decl.Owned = loc, owned
		return decl, nil
	}
	loc, err := s.warehouse.Allocate(id[:len(id)-1], id[len(id)-1])
	if err != nil {
		return decl, err
	}
	decl.Location, decl.Owned = loc, true
	return decl, nil
}

func declareResponse(t *store.Table, storageOptions map[string]string, txID string) gen.DeclareTableResponse {
	return gen.DeclareTableResponse{
		Location:          &t.Location,
		StorageOptions:    &storageOptions,
		Properties:        &t.Properties,
		ManagedVersioning: &t.ManagedVersioning,
		TransactionId:     optional(txID),
	}
}

// storageOptions returns the storage options to answer the request's
// principal for a table at location: those recorded with it, overlaid,
// when the location is on the warehouse's object store, with what the
// vendor hands out: read-only credentials to a principal that may not
// write. credentials is the client's vend_credentials: nil lets the
// vending mode decide, false asks for no credentials. Credentials are
// read-only too for a location outside the principal's reach (see
// placement.go). Returns ServiceUnavailable (17) when vending fails.
func (s *Server) storageOptions(c echo.Context, id []string, location string, recorded map[string]string, credentials *bool) (map[string]string, error) {
	out := maps.Clone(recorded)
	if out == nil {
		out = map[string]string{}
	}
	if s.cfg.Vendor == nil || !s.warehouse.OnObjectStore(location) {
		return out, nil
	}
	access := vend.ReadWrite
	if p, ok := principalOf(c); ok && (!p.May(auth.RoleWrite) || !s.vendsWrite(p, id, location)) {
		access = vend.ReadOnly
	}
	vended, err := s.cfg.Vendor.Options(c.Request().Context(), location, access, boolOr(credentials, true))
	if err != nil {
		return nil, err
	}
	maps.Copy(out, vended)
	return out, nil
}

// DeclareTable handles POST /v1/table/{id}/declare.
func (s *Server) DeclareTable(c echo.Context, _ gen.Id, p gen.DeclareTableParams) error {
	var req gen.DeclareTableRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	id, err := resolveID(c, p.Delimiter, req.Id)
	if err != nil {
		return err
	}
	decl, err := s.declaration(id, req)
	if err != nil {
		return err
	}
	if req.Location != nil {
		if err := s.checkPlacement(c, id, decl.Location); err != nil {
			return err
		}
	}
	// Vended before the declaration commits: a vending failure leaves
	// nothing declared.
	opts, err := s.storageOptions(c, id, decl.Location, nil, req.VendCredentials)
	if err != nil {
		return err
	}
	t, txID, err := s.store.DeclareTable(c.Request().Context(), id, decl)
	if err != nil {
		return err
	}
	return ok(c, declareResponse(t, opts, txID))
}

// RegisterTable handles POST /v1/table/{id}/register. The location must lie
// inside the warehouse or an external root (InvalidInput, 13) and within
// the principal's reach (PermissionDenied, 15; see placement.go); lancens
// never deletes a registered table's data.
func (s *Server) RegisterTable(c echo.Context, _ gen.Id, p gen.RegisterTableParams) error {
	var req gen.RegisterTableRequest
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
	if mode == store.ModeExistOk {
		return invalidInput("register mode must be Create or Overwrite")
	}
	loc, _, err := s.warehouse.Resolve(req.Location)
	if err != nil {
		return err
	}
	if err := s.checkPlacement(c, id, loc); err != nil {
		return err
	}
	t, txID, err := s.store.RegisterTable(c.Request().Context(), id, store.TableRegistration{
		Location: loc, Mode: mode, Properties: deref(req.Properties),
	})
	if err != nil {
		return err
	}
	return ok(c, gen.RegisterTableResponse{Location: &t.Location, Properties: &t.Properties, TransactionId: optional(txID)})
}

// resolveVersionRef checks the version a request refers to, by number, by
// tag (which cannot be combined with a version or a branch) or as the
// latest of a branch, and returns the branch and the version (nil: the
// latest, which may not exist). Returns InvalidInput (13), TableTagNotFound
// (8), TableBranchNotFound (22), TableVersionNotFound (11).
func (s *Server) resolveVersionRef(c echo.Context, id []string, branchName, tag *string, version *int64) (string, *int64, error) {
	ctx := c.Request().Context()
	if tag != nil {
		if branchName != nil || version != nil {
			return "", nil, invalidInput("tag cannot be combined with version or branch")
		}
		g, err := s.store.GetTag(ctx, id, *tag)
		if err != nil {
			return "", nil, err
		}
		return g.Branch, &g.Version, nil
	}
	branch, err := store.NormalizeBranch(deref(branchName))
	if err != nil {
		return "", nil, err
	}
	if version != nil || branch != "" {
		if _, err := s.store.DescribeVersion(ctx, id, branch, version); err != nil && (version != nil || !errors.Is(err, store.ErrTableVersionNotFound)) {
			return "", nil, err
		}
	}
	return branch, version, nil
}

// describeTableResponse is DescribeTableResponse with the schema in the
// exact JSON form of schemaJSON.
type describeTableResponse struct {
	gen.DescribeTableResponse
	Schema *jsonSchema `json:"schema,omitempty"`
}

// DescribeTable handles POST /v1/table/{id}/describe. Query parameters
// override the body's flags of the same name. A managed table always
// reports its version, schema and basic stats.
func (s *Server) DescribeTable(c echo.Context, _ gen.Id, p gen.DescribeTableParams) error {
	var req gen.DescribeTableRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	id, err := resolveID(c, p.Delimiter, req.Id)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	t, err := s.store.DescribeTable(ctx, id)
	if err != nil {
		return err
	}
	branch, version, err := s.resolveVersionRef(c, id, req.Branch, req.Tag, req.Version)
	if err != nil {
		return err
	}
	var resp describeTableResponse
	r := &resp.DescribeTableResponse
	opts, err := s.storageOptions(c, t.ID, t.Location, t.StorageOptions, req.VendCredentials)
	if err != nil {
		return err
	}
	r.Location, r.Properties, r.StorageOptions, r.ManagedVersioning = &t.Location, &t.Properties, &opts, &t.ManagedVersioning
	detailed := boolOr(p.LoadDetailedMetadata, boolOr(req.LoadDetailedMetadata, false))
	if boolOr(p.WithTableUri, boolOr(req.WithTableUri, false)) {
		r.TableUri = ptr(warehouse.TableURI(t.Location))
	}
	if detailed || boolOr(p.CheckDeclared, boolOr(req.CheckDeclared, false)) {
		r.IsOnlyDeclared = ptr(t.Declared)
	}
	if detailed {
		r.Table = ptr(t.Name())
		r.Namespace = ptr(t.Namespace())
		r.Version = version
	}
	d, err := s.describeData(ctx, t, branch, version)
	if err != nil {
		return err
	}
	switch {
	case d != nil:
		r.Table = ptr(t.Name())
		r.Namespace = ptr(t.Namespace())
		r.Version = &d.Version
		resp.Schema = schemaJSON(d.Schema)
		r.Stats = &gen.TableBasicStats{NumDeletedRows: int(d.Deleted), NumFragments: int(d.Fragments)}
		if d.View != nil {
			r.Metadata = ptr(viewMetadata(d.View))
		}
	case detailed && version == nil:
		if v, err := s.store.DescribeVersion(ctx, id, branch, nil); err == nil {
			r.Version = &v.Version
		}
	}
	return ok(c, resp)
}

// describeData returns the schema and size of table t's data at a version
// of a branch, as the engine reads it; nil for a table declared without
// data, or one whose data the engine does not serve (it answers
// InvalidTableState or Unsupported: a location lancens does not reach, a
// table of an earlier release not converted yet).
func (s *Server) describeData(ctx context.Context, t *store.Table, branch string, version *int64) (*store.TableData, error) {
	if t.Declared {
		return nil, nil
	}
	d, err := s.store.OnBranch(branch).Describe(ctx, t.ID, version)
	if err != nil {
		switch store.ErrorCode(err) {
		case store.CodeInvalidTableState, store.CodeUnsupported:
			return nil, nil
		}
	}
	return d, err
}

// TableExists handles POST /v1/table/{id}/exists: 200 with no body when the
// table (and the version, if one is given) exists.
func (s *Server) TableExists(c echo.Context, _ gen.Id, p gen.TableExistsParams) error {
	var req gen.TableExistsRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	id, err := resolveID(c, p.Delimiter, req.Id)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	if _, err := s.store.DescribeTable(ctx, id); err != nil {
		return err
	}
	if req.Version != nil {
		if _, err := s.store.DescribeVersion(ctx, id, "", req.Version); err != nil {
			return err
		}
	}
	return c.NoContent(http.StatusOK)
}

// DropTable handles POST /v1/table/{id}/drop. Data lancens owns is deleted
// in the background; the returned transaction reports when it is gone.
func (s *Server) DropTable(c echo.Context, _ gen.Id, p gen.DropTableParams) error {
	id, err := resolveID(c, p.Delimiter, nil)
	if err != nil {
		return err
	}
	t, txID, err := s.store.DropTable(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return ok(c, gen.DropTableResponse{Id: &t.ID, Location: &t.Location, Properties: &t.Properties, TransactionId: optional(txID)})
}

// DeregisterTable handles POST /v1/table/{id}/deregister: the catalog entry
// goes, the data stays.
func (s *Server) DeregisterTable(c echo.Context, _ gen.Id, p gen.DeregisterTableParams) error {
	var req gen.DeregisterTableRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	id, err := resolveID(c, p.Delimiter, req.Id)
	if err != nil {
		return err
	}
	t, txID, err := s.store.DeregisterTable(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return ok(c, deregisterResponse(t, txID))
}

func deregisterResponse(t *store.Table, txID string) gen.DeregisterTableResponse {
	return gen.DeregisterTableResponse{Id: &t.ID, Location: &t.Location, Properties: &t.Properties, TransactionId: optional(txID)}
}

// RenameTable handles POST /v1/table/{id}/rename. The new name is checked
// as a created one is (InvalidInput, 13: see store.ValidateNewName), and
// may not hold the request's delimiter.
func (s *Server) RenameTable(c echo.Context, _ gen.Id, p gen.RenameTableParams) error {
	var req gen.RenameTableRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	id, err := resolveID(c, p.Delimiter, req.Id)
	if err != nil {
		return err
	}
	// The new name is checked as a name created through the path is: it
	// cannot hold the delimiter, which would make it read as two names.
	if d := delimiterOf(p.Delimiter); strings.Contains(req.NewTableName, d) {
		return invalidInput("new table name %q contains the delimiter %q", req.NewTableName, d)
	}
	var target []string
	if req.NewNamespaceId != nil {
		target = *req.NewNamespaceId
	}
	txID, err := s.store.RenameTable(c.Request().Context(), id, target, req.NewTableName)
	if err != nil {
		return err
	}
	return ok(c, gen.RenameTableResponse{TransactionId: optional(txID)})
}

func boolOr(p *bool, def bool) bool {
	if p == nil {
		return def
	}
	return *p
}
