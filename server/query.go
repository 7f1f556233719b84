package server

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/lancens/lancens/gen"
	"github.com/lancens/lancens/store"
)

// orderedAliases reads column_aliases keeping the order of its keys, which
// is the order of the output columns (a Go map would lose it).
type orderedAliases []store.Alias

// UnmarshalJSON implements json.Unmarshaler.
func (o *orderedAliases) UnmarshalJSON(b []byte) error {
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return invalidInput("column_aliases must be an object")
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return err
		}
		var v string
		if err := dec.Decode(&v); err != nil {
			return invalidInput("column_aliases values must be strings")
		}
		*o = append(*o, store.Alias{Name: k.(string), Expr: v})
	}
	return nil
}

// queryColumns is the part of a query body whose order matters.
type queryColumns struct {
	Columns *struct {
		ColumnAliases orderedAliases `json:"column_aliases"`
	} `json:"columns"`
}

// requestBody returns the JSON body the validator kept.
func requestBody(c echo.Context) []byte {
	req := c.Request()
	if req.GetBody == nil {
		return nil
	}
	r, err := req.GetBody()
	if err != nil {
		return nil
	}
	b, _ := io.ReadAll(r)
	return b
}

// plainQuery turns a QueryTableRequest without vector or full-text search
// into a store query. k is the row limit (0: all rows). aliases holds
// column_aliases in request order.
func plainQuery(q *gen.QueryTableRequest, aliases orderedAliases) (store.Query, error) {
	if q.Vector != nil && (q.Vector.SingleVector != nil && len(*q.Vector.SingleVector) > 0 || q.Vector.MultiVector != nil && len(*q.Vector.MultiVector) > 0) {
		return store.Query{}, store.Errorf(store.CodeUnsupported, "vector search is not supported yet")
	}
	if q.FullTextQuery != nil && (q.FullTextQuery.StringQuery != nil || q.FullTextQuery.StructuredQuery != nil) {
		return store.Query{}, store.Errorf(store.CodeUnsupported, "full-text search is not supported yet")
	}
	if err := mainBranchOnly(q.Branch); err != nil {
		return store.Query{}, err
	}
	if q.K < 0 || deref(q.Offset) < 0 {
		return store.Query{}, invalidInput("k and offset must not be negative")
	}
	out := store.Query{
		Version: q.Version, Filter: deref(q.Filter), Limit: int64(q.K), Offset: int64(deref(q.Offset)),
		WithRowID: boolOr(q.WithRowId, false),
	}
	if cols := q.Columns; cols != nil {
		switch {
		case cols.ColumnNames != nil && cols.ColumnAliases != nil:
			return store.Query{}, invalidInput("columns may set column_names or column_aliases, not both")
		case cols.ColumnNames != nil:
			out.Projection.Columns = append([]string{}, *cols.ColumnNames...)
		case cols.ColumnAliases != nil:
			out.Projection.Aliases = append([]store.Alias{}, aliases...)
		}
	}
	return out, nil
}

// QueryTable handles POST /v1/table/{id}/query: the result is an Arrow IPC
// file (or stream, when the Accept header asks for one).
func (s *Server) QueryTable(c echo.Context, _ gen.Id, p gen.QueryTableParams) error {
	var req gen.QueryTableRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	id, err := resolveID(c, p.Delimiter, req.Id)
	if err != nil {
		return err
	}
	var order queryColumns
	_ = json.Unmarshal(requestBody(c), &order)
	q, err := plainQuery(&req, aliasesOf(order))
	if err != nil {
		return err
	}
	res, err := s.store.Query(c.Request().Context(), id, q)
	if err != nil {
		return err
	}
	return writeArrow(c, res.Schema, res.Batches)
}

func aliasesOf(q queryColumns) orderedAliases {
	if q.Columns == nil {
		return nil
	}
	return q.Columns.ColumnAliases
}

// ExplainTableQueryPlan handles POST /v1/table/{id}/explain_plan; the plan
// is a JSON string.
func (s *Server) ExplainTableQueryPlan(c echo.Context, _ gen.Id, p gen.ExplainTableQueryPlanParams) error {
	var req gen.ExplainTableQueryPlanRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	id, err := resolveID(c, p.Delimiter, req.Id)
	if err != nil {
		return err
	}
	var order struct {
		Query queryColumns `json:"query"`
	}
	_ = json.Unmarshal(requestBody(c), &order)
	q, err := plainQuery(&req.Query, aliasesOf(order.Query))
	if err != nil {
		return err
	}
	plan, err := s.store.ExplainQuery(c.Request().Context(), id, q, false)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, plan)
}

// AnalyzeTableQueryPlan handles POST /v1/table/{id}/analyze_plan: it runs
// the query and answers, as a JSON string, its plan with timings and row
// counts.
func (s *Server) AnalyzeTableQueryPlan(c echo.Context, _ gen.Id, p gen.AnalyzeTableQueryPlanParams) error {
	var req gen.AnalyzeTableQueryPlanRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	id, err := resolveID(c, p.Delimiter, req.Id)
	if err != nil {
		return err
	}
	var order queryColumns
	_ = json.Unmarshal(requestBody(c), &order)
	// The analyze request is a query request with the same members.
	var qreq gen.QueryTableRequest
	raw, _ := json.Marshal(req)
	if err := json.Unmarshal(raw, &qreq); err != nil {
		return invalidInput("malformed query: %v", err)
	}
	q, err := plainQuery(&qreq, aliasesOf(order))
	if err != nil {
		return err
	}
	plan, err := s.store.ExplainQuery(c.Request().Context(), id, q, true)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, plan)
}
