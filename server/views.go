package server

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/labstack/echo/v4"

	"github.com/lancens/lancens/gen"
	"github.com/lancens/lancens/store"
)

// Materialized views of kind query. The spec leaves the encoding of
// source_query to the client, and the server stores it as it came. lancens
// also runs it, to refresh the view, when it is in one of two forms:
//
//   - the JSON body of a QueryTableRequest whose id names the source table,
//     for example
//     {"id": ["ns", "items"], "filter": "qty > 5", "columns": {"column_names": ["id", "qty"]}, "k": 0}
//     where k is the row limit of a scan (0: every row), as in QueryTable;
//   - SQL over one table, SELECT <columns> FROM <table> [WHERE <filter>]
//     (see viewsql.go), for example SELECT id, qty FROM ns.items WHERE qty > 5.
//
// A refresh runs that query on the main branch of the source and replaces
// the view's rows with its answer. A source_query in any other form (a
// JSON object without id, SQL of another shape, a format of the client's
// own) is stored, described and dropped like any other, and is never
// refreshed by lancens: refreshing it answers 406 (code 0).

// CreateMaterializedView handles POST /v1/materialized_view/{id}/create:
// 201 with the view's first version, and the job id of its first refresh
// when with_no_data is false.
func (s *Server) CreateMaterializedView(c echo.Context, _ gen.Id, p gen.CreateMaterializedViewParams) error {
	var req gen.CreateMaterializedViewRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	id, err := resolveID(c, p.Delimiter, req.Id)
	if err != nil {
		return err
	}
	if err := store.CheckViewKind(string(req.Kind)); err != nil {
		return err
	}
	if req.UdtfSpec != nil {
		return invalidInput("udtf_spec is for views of kind udtf or chunker; a query view has none")
	}
	schema, err := decodeViewSchema(req.OutputSchema)
	if err != nil {
		return err
	}
	source, q, runs, err := s.viewQuery(c, req.SourceQuery)
	if err != nil {
		return err
	}
	def := store.ViewDefinition{Kind: string(req.Kind), SourceQuery: req.SourceQuery, Source: source, Query: q, Schema: schema,
		AutoRefresh: boolOr(req.AutoRefresh, false)}
	// A view lancens cannot compute is created empty, with no refresh.
	refresh := runs && !boolOr(req.WithNoData, true)
	_, res, jobID, err := s.store.CreateView(c.Request().Context(), id, def, refresh)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, gen.CreateMaterializedViewResponse{Version: res.Version, JobId: optional(jobID)})
}

// viewMetadata describes materialized view v in the metadata of
// DescribeTable, under keys starting "materialized_view.": kind,
// source_query (verbatim), source (the source table's id as a JSON array,
// absent once it is dropped), source_version and refreshed_at (RFC 3339,
// both absent until the first refresh) and auto_refresh.
func viewMetadata(v *store.View) map[string]string {
	m := map[string]string{
		"materialized_view.kind":         v.Kind,
		"materialized_view.source_query": v.SourceQuery,
		"materialized_view.auto_refresh": strconv.FormatBool(v.AutoRefresh),
	}
	if v.Source != nil {
		b, _ := json.Marshal(v.Source) // a []string always encodes
		m["materialized_view.source"] = string(b)
	}
	if v.SourceVersion != nil {
		m["materialized_view.source_version"] = strconv.FormatInt(*v.SourceVersion, 10)
		m["materialized_view.refreshed_at"] = v.RefreshedAt.UTC().Format(time.RFC3339Nano)
	}
	return m
}

// decodeViewSchema reads output_schema: an Arrow IPC schema message (or a
// stream of no batches), base64-encoded. Returns InvalidInput (13) when it
// is not one.
func decodeViewSchema(b64 string) (*arrow.Schema, error) {
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, invalidInput("output_schema must be a base64-encoded Arrow IPC schema: %v", err)
	}
	r, err := ipc.NewReader(bytes.NewReader(raw))
	if err != nil {
		return nil, invalidInput("output_schema must be a base64-encoded Arrow IPC schema: %v", err)
	}
	defer r.Release()
	return r.Schema(), nil
}

// viewQuery reads the source_query of a query view (see above) and returns
// the source table and the query a refresh runs, with runs true; runs is
// false, with no error, for a source_query in a form lancens does not run.
// Returns InvalidInput (13) for a QueryTableRequest that does not decode,
// names no table, or reads a branch other than main or a version.
func (s *Server) viewQuery(c echo.Context, sourceQuery string) (source []string, q store.Query, runs bool, err error) {
	raw := []byte(sourceQuery)
	if sql, ok := parseSQLView(sourceQuery); ok {
		raw = sql.request
	} else if !isQueryRequest(raw) {
		return nil, store.Query{}, false, nil
	}
	var req gen.QueryTableRequest
	if err := json.Unmarshal(raw, &req); err != nil {
		return nil, store.Query{}, false, invalidInput("source_query of a query view must be the JSON body of a QueryTableRequest "+
			`whose id names the source table, such as {"id": ["ns", "t"], "filter": "x > 1", "k": 0}: %v`, err)
	}
	if req.Id == nil || len(*req.Id) == 0 {
		return nil, store.Query{}, false, invalidInput("source_query must name the source table in id")
	}
	if b, err := store.NormalizeBranch(deref(req.Branch)); err != nil || b != "" {
		return nil, store.Query{}, false, invalidInput("a materialized view reads the main branch of its source, not branch %q", deref(req.Branch))
	}
	if req.Version != nil {
		return nil, store.Query{}, false, invalidInput("source_query cannot name a version: each refresh reads the version it is given (src_version) or the latest")
	}
	extras, err := readExtras(raw)
	if err != nil {
		return nil, store.Query{}, false, err
	}
	if q, err = s.storeQuery(c, &req, extras); err != nil {
		return nil, store.Query{}, false, err
	}
	return *req.Id, q, true, nil
}

// isQueryRequest reports whether a source_query is meant as a
// QueryTableRequest: a JSON object with an id member.
func isQueryRequest(raw []byte) bool {
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		return false
	}
	_, ok := obj["id"]
	return ok
}

// viewSource returns the source table a source_query names in a form
// lancens runs (see viewQuery), nil for any other.
func viewSource(sourceQuery string) []string {
	if sql, ok := parseSQLView(sourceQuery); ok {
		return sql.source
	}
	var req struct {
		ID []string `json:"id"`
	}
	if json.Unmarshal([]byte(sourceQuery), &req) == nil {
		return req.ID
	}
	return nil
}

// RefreshMaterializedView handles POST /v1/materialized_view/{id}/refresh:
// 202 with the id of the refresh job, a transaction id whose status tracks
// it. The tuning knobs of distributed refreshes do not apply to lancens
// and are ignored.
func (s *Server) RefreshMaterializedView(c echo.Context, _ gen.Id, p gen.RefreshMaterializedViewParams) error {
	var req gen.RefreshMaterializedViewRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	id, err := resolveID(c, p.Delimiter, req.Id)
	if err != nil {
		return err
	}
	if req.OutputLimit != nil {
		return invalidInput("output_limit applies to chunker views only")
	}
	var version *int64
	if req.SrcVersion != nil {
		if *req.SrcVersion < 0 {
			return invalidInput("src_version must not be negative")
		}
		version = ptr(int64(*req.SrcVersion))
	}
	jobID, err := s.store.QueueRefresh(c.Request().Context(), id, version)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, gen.RefreshMaterializedViewResponse{JobId: jobID})
}
