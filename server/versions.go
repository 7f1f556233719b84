package server

import (
	"github.com/labstack/echo/v4"

	"github.com/lancens/lancens/gen"
	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/warehouse"
)

func apiVersion(v *store.TableVersion) gen.TableVersion {
	out := gen.TableVersion{
		Version:         v.Version,
		ManifestPath:    v.ManifestPath,
		ManifestSize:    v.ManifestSize,
		ETag:            v.ETag,
		TimestampMillis: ptr(v.Timestamp.UnixMilli()),
	}
	if v.Metadata != nil {
		out.Metadata = &v.Metadata
	}
	return out
}

// ListTableVersions handles POST /v1/table/{id}/version/list. With
// descending=true&limit=1 it is the latest-version lookup of Lance clients.
func (s *Server) ListTableVersions(c echo.Context, _ gen.Id, p gen.ListTableVersionsParams) error {
	id, err := resolveID(c, p.Delimiter, nil)
	if err != nil {
		return err
	}
	branch, err := store.NormalizeBranch(deref(p.Branch))
	if err != nil {
		return err
	}
	pg, err := s.page(p.PageToken, p.Limit)
	if err != nil {
		return err
	}
	versions, next, err := s.store.ListVersions(c.Request().Context(), id, branch, boolOr(p.Descending, false), pg)
	if err != nil {
		return err
	}
	out := make([]gen.TableVersion, len(versions))
	for i := range versions {
		out[i] = apiVersion(&versions[i])
	}
	return ok(c, gen.ListTableVersionsResponse{Versions: out, PageToken: optional(next)})
}

// versionCommit reads a commit request into a store commit and its naming
// scheme.
func versionCommit(branch *string, version int64, manifestPath string, size *int64, etag *string,
	metadata *map[string]string, scheme *string) (store.VersionCommit, warehouse.NamingScheme, error) {
	b, err := store.NormalizeBranch(deref(branch))
	if err != nil {
		return store.VersionCommit{}, 0, err
	}
	if manifestPath == "" {
		return store.VersionCommit{}, 0, invalidInput("manifest_path is required")
	}
	if err := warehouse.CheckPathText("manifest_path", manifestPath); err != nil {
		return store.VersionCommit{}, 0, err
	}
	return store.VersionCommit{
		Branch: b, Version: version, StagedPath: manifestPath,
		ManifestSize: size, ETag: etag, Metadata: deref(metadata),
	}, warehouse.ParseNamingScheme(deref(scheme)), nil
}

// CreateTableVersion handles POST /v1/table/{id}/version/create: the commit
// point of a Lance client writing a table whose versions lancens manages.
func (s *Server) CreateTableVersion(c echo.Context, _ gen.Id, p gen.CreateTableVersionParams) error {
	var req gen.CreateTableVersionRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	id, err := resolveID(c, p.Delimiter, req.Id)
	if err != nil {
		return err
	}
	commit, scheme, err := versionCommit(req.Branch, req.Version, req.ManifestPath, req.ManifestSize, req.ETag, req.Metadata, req.NamingScheme)
	if err != nil {
		return err
	}
	v, txID, err := s.commits.Commit(c.Request().Context(), id, commit, scheme)
	if err != nil {
		return err
	}
	out := apiVersion(v)
	return ok(c, gen.CreateTableVersionResponse{Version: &out, TransactionId: optional(txID)})
}

// DescribeTableVersion handles POST /v1/table/{id}/version/describe; without
// a version it describes the latest.
func (s *Server) DescribeTableVersion(c echo.Context, _ gen.Id, p gen.DescribeTableVersionParams) error {
	var req gen.DescribeTableVersionRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	id, err := resolveID(c, p.Delimiter, req.Id)
	if err != nil {
		return err
	}
	branch, err := store.NormalizeBranch(deref(req.Branch))
	if err != nil {
		return err
	}
	v, err := s.store.DescribeVersion(c.Request().Context(), id, branch, req.Version)
	if err != nil {
		return err
	}
	return ok(c, gen.DescribeTableVersionResponse{Version: apiVersion(v)})
}

func versionRanges(in []gen.VersionRange) ([]store.VersionRange, error) {
	if len(in) == 0 {
		return nil, invalidInput("ranges must not be empty")
	}
	out := make([]store.VersionRange, len(in))
	for i, r := range in {
		out[i] = store.VersionRange{Start: r.StartVersion, End: r.EndVersion}
	}
	return out, nil
}

// BatchDeleteTableVersions handles POST /v1/table/{id}/version/delete. It
// deletes version records, not data files.
func (s *Server) BatchDeleteTableVersions(c echo.Context, _ gen.Id, p gen.BatchDeleteTableVersionsParams) error {
	var req gen.BatchDeleteTableVersionsRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	id, err := resolveID(c, p.Delimiter, req.Id)
	if err != nil {
		return err
	}
	branch, err := store.NormalizeBranch(deref(req.Branch))
	if err != nil {
		return err
	}
	ranges, err := versionRanges(req.Ranges)
	if err != nil {
		return err
	}
	n, txID, err := s.store.DeleteVersions(c.Request().Context(), id, branch, ranges)
	if err != nil {
		return err
	}
	return ok(c, gen.BatchDeleteTableVersionsResponse{DeletedCount: &n, TransactionId: optional(txID)})
}

// BatchCreateTableVersions handles POST /v1/table/version/batch-create:
// versions of several tables committed atomically.
func (s *Server) BatchCreateTableVersions(c echo.Context, _ gen.BatchCreateTableVersionsParams) error {
	var req gen.BatchCreateTableVersionsRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	ops := make([]store.BatchOperation, len(req.Entries))
	schemes := make([]warehouse.NamingScheme, len(req.Entries))
	for i, e := range req.Entries {
		commit, scheme, err := versionCommit(e.Branch, e.Version, e.ManifestPath, e.ManifestSize, e.ETag, e.Metadata, e.NamingScheme)
		if err != nil {
			return invalidInput("entry %d: %s", i, store.ErrorMessage(err))
		}
		ops[i] = store.BatchOperation{ID: e.Id, CommitVersion: &commit}
		schemes[i] = scheme
	}
	results, txID, err := s.commits.CommitBatch(c.Request().Context(), ops, schemes)
	if err != nil {
		return err
	}
	versions := make([]gen.TableVersion, len(results))
	for i, r := range results {
		versions[i] = apiVersion(r.Version)
	}
	return ok(c, gen.BatchCreateTableVersionsResponse{Versions: versions, TransactionId: optional(txID)})
}

// BatchCommitTables handles POST /v1/table/batch-commit: declarations,
// version commits, version deletions and deregistrations across tables,
// applied in order in one transaction.
func (s *Server) BatchCommitTables(c echo.Context, _ gen.BatchCommitTablesParams) error {
	var req gen.BatchCommitTablesRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	ops := make([]store.BatchOperation, len(req.Operations))
	schemes := make([]warehouse.NamingScheme, len(req.Operations))
	// The storage options of declared tables, vended before the batch
	// commits: a vending failure leaves nothing committed.
	vended := make([]map[string]string, len(req.Operations))
	for i, op := range req.Operations {
		var err error
		ops[i], schemes[i], err = s.batchOperation(op)
		if err != nil {
			return invalidInput("operation %d: %s", i, store.ErrorMessage(err))
		}
		if d := ops[i].Declare; d != nil {
			if op.DeclareTable.Location != nil {
				if err := s.checkPlacement(c, ops[i].ID, d.Location); err != nil {
					return err
				}
			}
			if vended[i], err = s.storageOptions(c, ops[i].ID, d.Location, nil, op.DeclareTable.VendCredentials); err != nil {
				return err
			}
		}
	}
	results, txID, err := s.commits.CommitBatch(c.Request().Context(), ops, schemes)
	if err != nil {
		return err
	}
	out := make([]gen.CommitTableResult, len(results))
	for i, r := range results {
		op := req.Operations[i]
		switch {
		case op.DeclareTable != nil:
			resp := declareResponse(r.Table, vended[i], txID)
			out[i].DeclareTable = &resp
		case op.CreateTableVersion != nil:
			v := apiVersion(r.Version)
			out[i].CreateTableVersion = &gen.CreateTableVersionResponse{Version: &v, TransactionId: optional(txID)}
		case op.DeleteTableVersions != nil:
			out[i].DeleteTableVersions = &gen.BatchDeleteTableVersionsResponse{DeletedCount: ptr(r.DeletedCount), TransactionId: optional(txID)}
		case op.DeregisterTable != nil:
			resp := deregisterResponse(r.Table, txID)
			out[i].DeregisterTable = &resp
		}
	}
	return ok(c, gen.BatchCommitTablesResponse{Results: out, TransactionId: optional(txID)})
}

// batchOperation reads one operation of a batch commit. Its table must be
// named by the embedded request's id, and exactly one kind must be set.
func (s *Server) batchOperation(op gen.CommitTableOperation) (store.BatchOperation, warehouse.NamingScheme, error) {
	var out store.BatchOperation
	var scheme warehouse.NamingScheme
	kinds := 0
	if r := op.DeclareTable; r != nil {
		kinds++
		out.ID = deref(r.Id)
		decl, err := s.declaration(out.ID, *r)
		if err != nil {
			return out, 0, err
		}
		out.Declare = &decl
	}
	if r := op.CreateTableVersion; r != nil {
		kinds++
		out.ID = deref(r.Id)
		commit, sc, err := versionCommit(r.Branch, r.Version, r.ManifestPath, r.ManifestSize, r.ETag, r.Metadata, r.NamingScheme)
		if err != nil {
			return out, 0, err
		}
		out.CommitVersion, scheme = &commit, sc
	}
	if r := op.DeleteTableVersions; r != nil {
		kinds++
		out.ID = deref(r.Id)
		branch, err := store.NormalizeBranch(deref(r.Branch))
		if err != nil {
			return out, 0, err
		}
		ranges, err := versionRanges(r.Ranges)
		if err != nil {
			return out, 0, err
		}
		out.DeleteVersions = &store.BatchDelete{Branch: branch, Ranges: ranges}
	}
	if r := op.DeregisterTable; r != nil {
		kinds++
		out.ID = deref(r.Id)
		out.Deregister = true
	}
	if kinds != 1 {
		return out, 0, invalidInput("exactly one of declare_table, create_table_version, delete_table_versions, deregister_table must be set, not %d", kinds)
	}
	if len(out.ID) == 0 {
		return out, 0, invalidInput("the operation must name its table in id")
	}
	return out, scheme, nil
}
