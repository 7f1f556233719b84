package server

import (
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/lancens/lancens/gen"
	"github.com/lancens/lancens/store"
)

// contextReplaceIndex, set on the request context by the remote dialect
// adapter, asks CreateTableIndex to replace an index of the same name, as
// the LanceDB SDK expects; the spec's create_index never replaces.
const contextReplaceIndex = "lancens.replace_index"

// indexSpec reads a create-index request.
func indexSpec(req *gen.CreateTableIndexRequest) (store.IndexSpec, error) {
	typ, err := store.NormalizeIndexType(req.IndexType)
	if err != nil {
		return store.IndexSpec{}, err
	}
	n := func(p *int) (int, error) {
		if p == nil {
			return 0, nil
		}
		if *p < 1 {
			return 0, invalidInput("index build parameters must be at least 1")
		}
		return *p, nil
	}
	spec := store.IndexSpec{Name: deref(req.Name), Column: req.Column, Type: typ, Metric: deref(req.DistanceType)}
	vp := &spec.Vector
	for _, f := range []struct {
		dst *int
		src *int
	}{
		{&vp.NumPartitions, req.NumPartitions}, {&vp.TargetPartitionSize, req.TargetPartitionSize},
		{&vp.NumSubVectors, req.NumSubVectors}, {&vp.NumBits, req.NumBits}, {&vp.SampleRate, req.SampleRate},
		{&vp.MaxIterations, req.MaxIterations}, {&vp.M, req.M}, {&vp.EfConstruction, req.EfConstruction},
	} {
		if *f.dst, err = n(f.src); err != nil {
			return spec, err
		}
	}
	if req.MaxTokenLength != nil && *req.MaxTokenLength < 0 {
		return spec, invalidInput("max_token_length must not be negative")
	}
	spec.Text = store.TextIndexParams{
		WithPosition: req.WithPosition, BaseTokenizer: deref(req.BaseTokenizer), Language: deref(req.Language),
		LowerCase: req.LowerCase, Stem: req.Stem, RemoveStopWords: req.RemoveStopWords, ASCIIFolding: req.AsciiFolding,
		MaxTokenLength: req.MaxTokenLength,
	}
	return spec, nil
}

// createIndex handles both create-index routes; scalarOnly refuses vector
// and full-text types.
func (s *Server) createIndex(c echo.Context, delimiter *string, scalarOnly bool) (string, error) {
	var req gen.CreateTableIndexRequest
	if err := bindJSON(c, &req); err != nil {
		return "", err
	}
	id, err := resolveMainID(c, delimiter, req.Id, req.Branch, "indexes")
	if err != nil {
		return "", err
	}
	spec, err := indexSpec(&req)
	if err != nil {
		return "", err
	}
	spec.Replace, _ = c.Get(contextReplaceIndex).(bool)
	if scalarOnly && (store.IsVectorIndex(spec.Type) || spec.Type == store.IndexInverted) {
		return "", invalidInput("create_scalar_index builds BTREE, BITMAP or LABEL_LIST indexes, not %s", spec.Type)
	}
	txID, err := s.store.CreateIndex(c.Request().Context(), id, spec)
	if err != nil {
		return "", err
	}
	return txID, nil
}

// CreateTableIndex handles POST /v1/table/{id}/create_index. Vector indexes
// build in the background; the transaction id tracks the build, and the
// index lists as BUILDING until it is done.
func (s *Server) CreateTableIndex(c echo.Context, _ gen.Id, p gen.CreateTableIndexParams) error {
	txID, err := s.createIndex(c, p.Delimiter, false)
	if err != nil {
		return err
	}
	return ok(c, gen.CreateTableIndexResponse{TransactionId: optional(txID)})
}

// CreateTableScalarIndex handles POST /v1/table/{id}/create_scalar_index.
func (s *Server) CreateTableScalarIndex(c echo.Context, _ gen.Id, p gen.CreateTableScalarIndexParams) error {
	txID, err := s.createIndex(c, p.Delimiter, true)
	if err != nil {
		return err
	}
	return ok(c, gen.CreateTableScalarIndexResponse{TransactionId: optional(txID)})
}

func indexContent(ix *store.IndexInfo) gen.IndexContent {
	return gen.IndexContent{
		IndexName: ix.Name, IndexUuid: ix.UUID, Columns: ix.Columns, Status: ix.Status, IndexType: &ix.Type,
		NumIndexedRows: &ix.NumIndexedRows, NumUnindexedRows: &ix.NumUnindexedRows, SizeBytes: &ix.SizeBytes,
		CreatedAt: &ix.CreatedAt, IndexDetails: &ix.Details, NumSegments: ptr(int32(1)), IndexVersion: ptr(int32(1)),
	}
}

// ListTableIndices handles POST /v1/table/{id}/index/list.
func (s *Server) ListTableIndices(c echo.Context, _ gen.Id, p gen.ListTableIndicesParams) error {
	var req gen.ListTableIndicesRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	id, err := resolveMainID(c, p.Delimiter, req.Id, req.Branch, "indexes")
	if err != nil {
		return err
	}
	pg, err := s.page(req.PageToken, req.Limit)
	if err != nil {
		return err
	}
	list, next, err := s.store.ListIndices(c.Request().Context(), id, req.Version, pg)
	if err != nil {
		return err
	}
	out := make([]gen.IndexContent, len(list))
	for i := range list {
		out[i] = indexContent(&list[i])
	}
	return ok(c, gen.ListTableIndicesResponse{Indexes: out, PageToken: optional(next)})
}

// DescribeTableIndexStats handles POST /v1/table/{id}/index/{index_name}/stats.
func (s *Server) DescribeTableIndexStats(c echo.Context, _ gen.Id, indexName string, p gen.DescribeTableIndexStatsParams) error {
	var req gen.DescribeTableIndexStatsRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	id, err := resolveID(c, p.Delimiter, req.Id)
	if err != nil {
		return err
	}
	if req.IndexName != nil && *req.IndexName != indexName {
		return invalidInput("the index_name in the body %q does not match the path %q", *req.IndexName, indexName)
	}
	ix, err := s.store.DescribeIndex(c.Request().Context(), id, indexName, req.Version)
	if err != nil {
		return err
	}
	resp := gen.DescribeTableIndexStatsResponse{IndexType: &ix.Type, NumIndexedRows: &ix.NumIndexedRows,
		NumUnindexedRows: &ix.NumUnindexedRows, NumIndices: ptr(int32(1))}
	if ix.Metric != "" {
		resp.DistanceType = &ix.Metric
	}
	return ok(c, resp)
}

// DropTableIndex handles POST /v1/table/{id}/index/{index_name}/drop.
func (s *Server) DropTableIndex(c echo.Context, _ gen.Id, indexName string, p gen.DropTableIndexParams) error {
	id, err := resolveID(c, p.Delimiter, nil)
	if err != nil {
		return err
	}
	if err := mainBranchOnly(p.Branch, "indexes"); err != nil {
		return err
	}
	txID, err := s.store.DropIndex(c.Request().Context(), id, indexName)
	if err != nil {
		return err
	}
	return ok(c, gen.DropTableIndexResponse{TransactionId: optional(txID)})
}

// PrewarmTableIndex handles POST /v1/table/{id}/index/{index_name}/prewarm,
// a route of the LanceDB remote dialect that the spec lacks (the SDK's
// prewarmIndex): it loads the index into memory and answers {}. The request
// has no body; delimiter is the only query parameter.
func (s *Server) PrewarmTableIndex(c echo.Context) error {
	var delimiter *string
	if d := c.QueryParam("delimiter"); d != "" {
		delimiter = &d
	}
	id, err := resolveID(c, delimiter, nil)
	if err != nil {
		return err
	}
	name := c.Param("index_name")
	if c.Request().URL.RawPath != "" {
		if name, err = url.PathUnescape(name); err != nil {
			return invalidInput("malformed index_name in path: %v", err)
		}
	}
	if err := s.store.PrewarmIndex(c.Request().Context(), id, name); err != nil {
		return err
	}
	return ok(c, struct{}{})
}
