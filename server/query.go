package server

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"

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

// queryExtras is what a query body says beyond the generated request
// type: the order of column_aliases, and order_by, an extension the LanceDB
// SDK sends (query().orderBy) to sort a plain scan.
type queryExtras struct {
	Columns *struct {
		ColumnAliases orderedAliases `json:"column_aliases"`
	} `json:"columns"`
	OrderBy []struct {
		Column     *string `json:"column_name"`
		Ascending  *bool   `json:"ascending"`
		NullsFirst *bool   `json:"nulls_first"`
	} `json:"order_by"`
}

// readExtras decodes the extras of a query body. Returns InvalidInput (13)
// for a malformed order_by.
func readExtras(raw []byte) (queryExtras, error) {
	var x queryExtras
	if len(bytes.TrimSpace(raw)) == 0 {
		return x, nil
	}
	if err := json.Unmarshal(raw, &x); err != nil {
		return x, invalidInput("malformed query: %v", err)
	}
	return x, nil
}

// sortKeys returns the order_by of a query body as store sort keys.
// Returns InvalidInput (13) for a key without a column.
func (x queryExtras) sortKeys() ([]store.SortKey, error) {
	var keys []store.SortKey
	for _, o := range x.OrderBy {
		if o.Column == nil || *o.Column == "" {
			return nil, invalidInput("order_by entries need a column_name")
		}
		keys = append(keys, store.SortKey{Column: *o.Column, Descending: !boolOr(o.Ascending, true), NullsFirst: boolOr(o.NullsFirst, false)})
	}
	return keys, nil
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

// storeQuery turns a QueryTableRequest into a store query: a scan, where k
// is the row limit (0: all rows), or a vector or full-text search, where k
// is the number of results (0: 10), bounded by Config.MaxSearchRows. extras
// holds column_aliases in request order and the sort keys. Returns
// InvalidInput (13) for malformed parts, and the errors of checkSQL for its
// SQL texts.
func (s *Server) storeQuery(c echo.Context, q *gen.QueryTableRequest, extras queryExtras) (store.Query, error) {
	if q.K < 0 || deref(q.Offset) < 0 {
		return store.Query{}, invalidInput("k and offset must not be negative")
	}
	out := store.Query{
		Version: q.Version, Filter: deref(q.Filter), Limit: int64(q.K), Offset: int64(deref(q.Offset)),
		WithRowID: boolOr(q.WithRowId, false), MaxSearchRows: s.cfg.MaxSearchRows,
	}
	var aliases orderedAliases
	if extras.Columns != nil {
		aliases = extras.Columns.ColumnAliases
	}
	var err error
	if out.OrderBy, err = extras.sortKeys(); err != nil {
		return store.Query{}, err
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
	if out.Vector, err = vectorSearch(q); err != nil {
		return store.Query{}, err
	}
	if out.Text, err = textSearch(q); err != nil {
		return store.Query{}, err
	}
	if err := s.checkSQL(c, queryTexts(out)...); err != nil {
		return store.Query{}, err
	}
	return out, nil
}

// vectorSearch reads the vector part of a query; nil when it has none.
func vectorSearch(q *gen.QueryTableRequest) (*store.VectorSearch, error) {
	if q.Vector == nil {
		return nil, nil
	}
	single, multi := q.Vector.SingleVector, q.Vector.MultiVector
	vs := &store.VectorSearch{
		Column: deref(q.VectorColumn), Metric: deref(q.DistanceType), Nprobes: deref(q.Nprobes), Ef: deref(q.Ef),
		RefineFactor: int(deref(q.RefineFactor)), FastSearch: boolOr(q.FastSearch, false), BypassIndex: boolOr(q.BypassVectorIndex, false),
		Postfilter: !boolOr(q.Prefilter, true), LowerBound: q.LowerBound, UpperBound: q.UpperBound,
	}
	switch {
	case single != nil && multi != nil:
		return nil, invalidInput("vector may set single_vector or multi_vector, not both")
	case single != nil && len(*single) > 0:
		vs.Vectors = [][]float32{*single}
	case multi != nil && len(*multi) > 0:
		vs.Vectors, vs.Multi = *multi, true
	default:
		return nil, nil
	}
	if vs.Nprobes < 0 || vs.Ef < 0 || vs.RefineFactor < 0 {
		return nil, invalidInput("nprobes, ef and refine_factor must not be negative")
	}
	return vs, nil
}

// textSearch reads the full-text part of a query; nil when it has none.
func textSearch(q *gen.QueryTableRequest) (*store.TextSearch, error) {
	f := q.FullTextQuery
	if f == nil || (f.StringQuery == nil && f.StructuredQuery == nil) {
		return nil, nil
	}
	if f.StringQuery != nil && f.StructuredQuery != nil {
		return nil, invalidInput("full_text_query may set string_query or structured_query, not both")
	}
	if f.StringQuery != nil {
		ts := &store.TextSearch{Query: store.FtsQuery{Match: &store.FtsMatch{Terms: f.StringQuery.Query}}}
		if f.StringQuery.Columns != nil {
			ts.Columns = *f.StringQuery.Columns
		}
		return ts, nil
	}
	fq, err := ftsQuery(&f.StructuredQuery.Query, 0)
	if err != nil {
		return nil, err
	}
	return &store.TextSearch{Query: fq}, nil
}

// maxFtsDepth bounds the nesting of structured full-text queries.
const maxFtsDepth = 32

// ftsQuery converts a structured full-text query. Returns InvalidInput (13)
// for one that sets no kind or several, or nests too deep.
func ftsQuery(q *gen.FtsQuery, depth int) (store.FtsQuery, error) {
	var out store.FtsQuery
	if depth > maxFtsDepth {
		return out, invalidInput("the full-text query nests deeper than %d levels", maxFtsDepth)
	}
	set := 0
	if q.Match != nil {
		set++
		m := matchQuery(q.Match)
		out.Match = &m
	}
	if q.Phrase != nil {
		set++
		out.Phrase = &store.FtsPhrase{Terms: q.Phrase.Terms, Column: deref(q.Phrase.Column), Slop: int(deref(q.Phrase.Slop))}
	}
	if q.MultiMatch != nil {
		set++
		mm := &store.FtsMultiMatch{}
		for i := range q.MultiMatch.MatchQueries {
			mm.Matches = append(mm.Matches, matchQuery(&q.MultiMatch.MatchQueries[i]))
		}
		out.MultiMatch = mm
	}
	if q.Boost != nil {
		set++
		pos, err := ftsQuery(&q.Boost.Positive, depth+1)
		if err != nil {
			return out, err
		}
		neg, err := ftsQuery(&q.Boost.Negative, depth+1)
		if err != nil {
			return out, err
		}
		nb := float32(0.5)
		if q.Boost.NegativeBoost != nil {
			nb = *q.Boost.NegativeBoost
		}
		out.Boost = &store.FtsBoost{Positive: pos, Negative: neg, NegativeBoost: nb}
	}
	if q.Boolean != nil {
		set++
		b := &store.FtsBoolean{}
		for _, part := range []struct {
			src []gen.FtsQuery
			dst *[]store.FtsQuery
		}{{q.Boolean.Must, &b.Must}, {q.Boolean.Should, &b.Should}, {q.Boolean.MustNot, &b.MustNot}} {
			for i := range part.src {
				sub, err := ftsQuery(&part.src[i], depth+1)
				if err != nil {
					return out, err
				}
				*part.dst = append(*part.dst, sub)
			}
		}
		out.Boolean = b
	}
	if set != 1 {
		return out, invalidInput("a full-text query must set exactly one of match, phrase, boost, multi_match, boolean")
	}
	return out, nil
}

func matchQuery(m *gen.MatchQuery) store.FtsMatch {
	out := store.FtsMatch{Terms: m.Terms, Column: deref(m.Column), Boost: deref(m.Boost), Fuzziness: int(deref(m.Fuzziness)),
		MaxExpansions: deref(m.MaxExpansions), PrefixLength: int(deref(m.PrefixLength))}
	if m.Operator != nil {
		out.Operator = string(*m.Operator)
	}
	return out
}

// QueryTable handles POST /v1/table/{id}/query: the result is an Arrow IPC
// file, or a stream, or a JSON array of rows (writeJSONRows), as the Accept
// header asks.
func (s *Server) QueryTable(c echo.Context, _ gen.Id, p gen.QueryTableParams) error {
	var req gen.QueryTableRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	id, err := resolveID(c, p.Delimiter, req.Id)
	if err != nil {
		return err
	}
	extras, err := readExtras(requestBody(c))
	if err != nil {
		return err
	}
	q, err := s.storeQuery(c, &req, extras)
	if err != nil {
		return err
	}
	data, err := s.onBranch(req.Branch)
	if err != nil {
		return err
	}
	res, err := data.Query(c.Request().Context(), id, q)
	if err != nil {
		return err
	}
	c.Response().Header().Set(headerTableVersion, strconv.FormatInt(res.Version, 10))
	if wantsJSON(c.Request()) {
		return writeJSONRows(c, res.Schema, res.Batches)
	}
	return writeArrow(c, res.Schema, res.Batches)
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
	var body struct {
		Query json.RawMessage `json:"query"`
	}
	_ = json.Unmarshal(requestBody(c), &body) // the validator has checked the body
	extras, err := readExtras(body.Query)
	if err != nil {
		return err
	}
	q, err := s.storeQuery(c, &req.Query, extras)
	if err != nil {
		return err
	}
	branch := req.Query.Branch
	if branch == nil {
		branch = req.Branch
	}
	data, err := s.onBranch(branch)
	if err != nil {
		return err
	}
	plan, err := data.ExplainQuery(c.Request().Context(), id, q, false)
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
	extras, err := readExtras(requestBody(c))
	if err != nil {
		return err
	}
	// The analyze request is a query request with the same members.
	var qreq gen.QueryTableRequest
	raw, _ := json.Marshal(req)
	if err := json.Unmarshal(raw, &qreq); err != nil {
		return invalidInput("malformed query: %v", err)
	}
	q, err := s.storeQuery(c, &qreq, extras)
	if err != nil {
		return err
	}
	data, err := s.onBranch(qreq.Branch)
	if err != nil {
		return err
	}
	plan, err := data.ExplainQuery(c.Request().Context(), id, q, true)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, plan)
}
