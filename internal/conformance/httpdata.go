package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/lancens/lancens/client"
	"github.com/lancens/lancens/gen"
	"github.com/lancens/lancens/store"
)

// HTTPTarget runs the whole suite over HTTP: catalog calls through the
// client package (ClientTarget), data calls through the generated client,
// each store method answered by the matching API call.
//
// A few results have no field in the API's answers and are read from
// elsewhere: the version a restore made (from a describe after it), the
// rows a delete removed and the version a query or count read (from
// lancens' X-Lancens-* headers when present, else left zero). Queued work
// (Backfill, BuildIndex) is the server's own business and answers
// Unsupported (0).
type HTTPTarget struct {
	ClientTarget
	API *gen.ClientWithResponses
	// base and doer send the requests of routes beyond the spec.
	base string
	doer gen.HttpRequestDoer
}

var _ DataTarget = HTTPTarget{}

// NewHTTPTarget returns an HTTPTarget for the server at baseURL that sends
// every request through doer (nil: http.DefaultClient). It returns an
// error if baseURL is not a URL.
func NewHTTPTarget(baseURL string, doer gen.HttpRequestDoer) (HTTPTarget, error) {
	if doer == nil {
		doer = http.DefaultClient
	}
	// The suite checks the server's own answers: the client must neither
	// retry nor hide them.
	c, err := client.New(baseURL, client.WithHTTPClient(&http.Client{Transport: doerTransport{doer}}), client.WithRetry(client.RetryPolicy{}))
	if err != nil {
		return HTTPTarget{}, err
	}
	api, err := gen.NewClientWithResponses(baseURL, gen.WithHTTPClient(doer), gen.WithRequestEditorFn(escapePlus))
	if err != nil {
		return HTTPTarget{}, err
	}
	return HTTPTarget{ClientTarget: ClientTarget{C: c}, API: api, base: strings.TrimSuffix(baseURL, "/"), doer: doer}, nil
}

// doerTransport sends a request through a doer, as the http.RoundTripper
// of the client's *http.Client.
type doerTransport struct{ doer gen.HttpRequestDoer }

func (d doerTransport) RoundTrip(req *http.Request) (*http.Response, error) { return d.doer.Do(req) }

// escapePlus sends a literal "+" in the path as %2B, which servers would
// otherwise read as a space.
func escapePlus(_ context.Context, req *http.Request) error {
	if p := req.URL.EscapedPath(); strings.Contains(p, "+") {
		req.URL.RawPath = strings.ReplaceAll(p, "+", "%2B")
	}
	return nil
}

const (
	mimeArrowStream    = "application/vnd.apache.arrow.stream"
	headerDeletedRows  = "X-Lancens-Deleted-Rows"
	headerTableVersion = "X-Lancens-Table-Version"
)

var dollar = "$"

// pathID renders an identifier for a request path with the delimiter "$".
func pathID(id []string) string {
	if len(id) == 0 {
		return dollar
	}
	return strings.Join(id, dollar)
}

// HTTPError returns nil for a 2xx answer and otherwise a *store.Error with
// the answer's Lance code; a body that is no ErrorResponse is Internal (18).
func HTTPError(hr *http.Response, body []byte) error {
	if hr.StatusCode >= 200 && hr.StatusCode < 300 {
		return nil
	}
	var er struct {
		Code  *int   `json:"code"`
		Error string `json:"error"`
	}
	if json.Unmarshal(body, &er) == nil && er.Code != nil {
		return &store.Error{Code: store.Code(*er.Code), Message: fmt.Sprintf("HTTP %d: %s", hr.StatusCode, er.Error)}
	}
	return store.Errorf(store.CodeInternal, "HTTP %d with a body that is no ErrorResponse: %.200s", hr.StatusCode, body)
}

// streamBytes encodes d as an Arrow IPC stream.
func streamBytes(d store.Data) (*bytes.Buffer, error) {
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(d.Schema))
	for d.Batches != nil {
		b, err := d.Batches.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		err = w.Write(b)
		b.Release()
		if err != nil {
			return nil, err
		}
	}
	return &buf, w.Close()
}

func jsonQueryParam(m map[string]string) *string {
	if m == nil {
		return nil
	}
	b, _ := json.Marshal(m)
	s := string(b)
	return &s
}

func headerInt(h http.Header, name string) int64 {
	n, _ := strconv.ParseInt(h.Get(name), 10, 64)
	return n
}

func orEmpty(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func orZero[N int64 | int32 | int](p *N) N {
	if p == nil {
		return 0
	}
	return *p
}

func optional[V comparable](v V) *V {
	var zero V
	if v == zero {
		return nil
	}
	return &v
}

// CreateTable implements store.ManagedData over HTTP.
func (h HTTPTarget) CreateTable(ctx context.Context, id []string, nt store.NewTable) (*store.Table, store.WriteResult, error) {
	body, err := streamBytes(nt.Data)
	if err != nil {
		return nil, store.WriteResult{}, err
	}
	params := &gen.CreateTableParams{Delimiter: &dollar, Mode: optional(nt.Mode.String()),
		Properties: jsonQueryParam(nt.Properties), StorageOptions: jsonQueryParam(nt.StorageOptions)}
	resp, err := h.API.CreateTableWithBodyWithResponse(ctx, pathID(id), params, mimeArrowStream, body)
	if err != nil {
		return nil, store.WriteResult{}, err
	}
	if err := HTTPError(resp.HTTPResponse, resp.Body); err != nil {
		return nil, store.WriteResult{}, err
	}
	r := resp.JSON200
	t := &store.Table{ID: id, Kind: store.Managed, Location: orEmpty(r.Location)}
	if r.Properties != nil {
		t.Properties = *r.Properties
	}
	return t, store.WriteResult{Version: orZero(r.Version), TransactionID: orEmpty(r.TransactionId)}, nil
}

// Insert implements store.ManagedData over HTTP.
func (h HTTPTarget) Insert(ctx context.Context, id []string, mode store.InsertMode, d store.Data) (store.WriteResult, error) {
	body, err := streamBytes(d)
	if err != nil {
		return store.WriteResult{}, err
	}
	m := "append"
	if mode == store.InsertOverwrite {
		m = "overwrite"
	}
	resp, err := h.API.InsertIntoTableWithBodyWithResponse(ctx, pathID(id), &gen.InsertIntoTableParams{Delimiter: &dollar, Mode: &m}, mimeArrowStream, body)
	if err != nil {
		return store.WriteResult{}, err
	}
	if err := HTTPError(resp.HTTPResponse, resp.Body); err != nil {
		return store.WriteResult{}, err
	}
	r := resp.JSON200
	return store.WriteResult{Version: orZero(r.Version), Inserted: orZero(r.NumInsertedRows), TransactionID: orEmpty(r.TransactionId)}, nil
}

// MergeInsert implements store.ManagedData over HTTP; further key columns
// repeat the on parameter.
func (h HTTPTarget) MergeInsert(ctx context.Context, id []string, m store.Merge) (store.WriteResult, error) {
	if len(m.On) == 0 {
		return store.WriteResult{}, store.Errorf(store.CodeInvalidInput, "merge_insert needs a key column")
	}
	body, err := streamBytes(m.Data)
	if err != nil {
		return store.WriteResult{}, err
	}
	params := &gen.MergeInsertIntoTableParams{
		Delimiter: &dollar, On: m.On[0],
		WhenMatchedUpdateAll: &m.WhenMatchedUpdateAll, WhenMatchedUpdateAllFilt: optional(m.WhenMatchedUpdateFilter),
		WhenNotMatchedInsertAll: &m.WhenNotMatchedInsertAll, WhenNotMatchedBySourceDelete: &m.WhenNotMatchedBySourceDelete,
		WhenNotMatchedBySourceDeleteFilt: optional(m.WhenNotMatchedBySourceDeleteFilter),
	}
	extraKeys := func(_ context.Context, req *http.Request) error {
		q := req.URL.Query()
		for _, k := range m.On[1:] {
			q.Add("on", k)
		}
		req.URL.RawQuery = q.Encode()
		return nil
	}
	resp, err := h.API.MergeInsertIntoTableWithBodyWithResponse(ctx, pathID(id), params, mimeArrowStream, body, extraKeys)
	if err != nil {
		return store.WriteResult{}, err
	}
	if err := HTTPError(resp.HTTPResponse, resp.Body); err != nil {
		return store.WriteResult{}, err
	}
	r := resp.JSON200
	return store.WriteResult{Version: orZero(r.Version), Inserted: orZero(r.NumInsertedRows), Updated: orZero(r.NumUpdatedRows),
		Deleted: orZero(r.NumDeletedRows), TransactionID: orEmpty(r.TransactionId)}, nil
}

// Update implements store.ManagedData over HTTP.
func (h HTTPTarget) Update(ctx context.Context, id []string, updates []store.ColumnUpdate, predicate string) (store.WriteResult, error) {
	req := gen.UpdateTableRequest{Id: &id, Predicate: optional(predicate), Updates: make([][]string, len(updates))}
	for i, u := range updates {
		req.Updates[i] = []string{u.Path, u.Expr}
	}
	resp, err := h.API.UpdateTableWithResponse(ctx, pathID(id), &gen.UpdateTableParams{Delimiter: &dollar}, req)
	if err != nil {
		return store.WriteResult{}, err
	}
	if err := HTTPError(resp.HTTPResponse, resp.Body); err != nil {
		return store.WriteResult{}, err
	}
	return store.WriteResult{Version: resp.JSON200.Version, Updated: resp.JSON200.UpdatedRows, TransactionID: orEmpty(resp.JSON200.TransactionId)}, nil
}

// Delete implements store.ManagedData over HTTP.
func (h HTTPTarget) Delete(ctx context.Context, id []string, predicate string) (store.WriteResult, error) {
	resp, err := h.API.DeleteFromTableWithResponse(ctx, pathID(id), &gen.DeleteFromTableParams{Delimiter: &dollar},
		gen.DeleteFromTableRequest{Id: &id, Predicate: predicate})
	if err != nil {
		return store.WriteResult{}, err
	}
	if err := HTTPError(resp.HTTPResponse, resp.Body); err != nil {
		return store.WriteResult{}, err
	}
	return store.WriteResult{Version: orZero(resp.JSON200.Version), TransactionID: orEmpty(resp.JSON200.TransactionId),
		Deleted: headerInt(resp.HTTPResponse.Header, headerDeletedRows)}, nil
}

// CountRows implements store.ManagedData over HTTP.
func (h HTTPTarget) CountRows(ctx context.Context, id []string, version *int64, predicate string) (int64, int64, error) {
	resp, err := h.API.CountTableRowsWithResponse(ctx, pathID(id), &gen.CountTableRowsParams{Delimiter: &dollar},
		gen.CountTableRowsRequest{Id: &id, Version: version, Predicate: optional(predicate)})
	if err != nil {
		return 0, 0, err
	}
	if err := HTTPError(resp.HTTPResponse, resp.Body); err != nil {
		return 0, 0, err
	}
	if resp.JSON200 == nil {
		return 0, 0, store.Errorf(store.CodeInternal, "count_rows answered no integer: %.100s", resp.Body)
	}
	counted := headerInt(resp.HTTPResponse.Header, headerTableVersion)
	if counted == 0 && version != nil {
		counted = *version
	}
	return *resp.JSON200, counted, nil
}

// queryRequest renders a store query as a QueryTableRequest.
func queryRequest(id []string, q store.Query) gen.QueryTableRequest {
	req := gen.QueryTableRequest{Id: &id, Version: q.Version, Filter: optional(q.Filter), K: int(q.Limit),
		Offset: optional(int(q.Offset)), WithRowId: optional(q.WithRowID)}
	switch {
	case q.Projection.Aliases != nil:
		aliases := make(map[string]string, len(q.Projection.Aliases))
		for _, a := range q.Projection.Aliases {
			aliases[a.Name] = a.Expr
		}
		// Unordered: explain and analyze only; Query keeps the order.
		req.Columns = &struct {
			ColumnAliases *map[string]string `json:"column_aliases,omitempty"`
			ColumnNames   *[]string          `json:"column_names,omitempty"`
		}{ColumnAliases: &aliases}
	case q.Projection.Columns != nil:
		names := q.Projection.Columns
		req.Columns = &struct {
			ColumnAliases *map[string]string `json:"column_aliases,omitempty"`
			ColumnNames   *[]string          `json:"column_names,omitempty"`
		}{ColumnNames: &names}
	}
	if v := q.Vector; v != nil {
		req.VectorColumn, req.DistanceType = optional(v.Column), optional(v.Metric)
		req.Nprobes, req.Ef, req.RefineFactor = optional(v.Nprobes), optional(v.Ef), optional(int32(v.RefineFactor))
		req.FastSearch, req.BypassVectorIndex = optional(v.FastSearch), optional(v.BypassIndex)
		req.LowerBound, req.UpperBound = v.LowerBound, v.UpperBound
		if v.Postfilter {
			req.Prefilter = new(bool)
		}
		req.Vector = &struct {
			MultiVector  *[][]float32 `json:"multi_vector,omitempty"`
			SingleVector *[]float32   `json:"single_vector,omitempty"`
		}{}
		if v.Multi {
			req.Vector.MultiVector = &v.Vectors
		} else if len(v.Vectors) == 1 {
			req.Vector.SingleVector = &v.Vectors[0]
		}
	}
	if ts := q.Text; ts != nil {
		req.FullTextQuery = &struct {
			StringQuery     *gen.StringFtsQuery     `json:"string_query,omitempty"`
			StructuredQuery *gen.StructuredFtsQuery `json:"structured_query,omitempty"`
		}{}
		if m := ts.Query.Match; m != nil && m.Column == "" && m.Boost == 0 && m.Fuzziness == 0 && m.Operator == "" && m.PrefixLength == 0 {
			req.FullTextQuery.StringQuery = &gen.StringFtsQuery{Query: m.Terms}
			if ts.Columns != nil {
				req.FullTextQuery.StringQuery.Columns = &ts.Columns
			}
		} else {
			req.FullTextQuery.StructuredQuery = &gen.StructuredFtsQuery{Query: ftsRequest(ts.Query)}
		}
	}
	return req
}

func matchRequest(m store.FtsMatch) gen.MatchQuery {
	out := gen.MatchQuery{Terms: m.Terms, Column: optional(m.Column), Fuzziness: optional(int32(m.Fuzziness)),
		MaxExpansions: optional(m.MaxExpansions), PrefixLength: optional(int32(m.PrefixLength)), Boost: optional(m.Boost)}
	if m.Operator != "" {
		op := gen.Operator(m.Operator)
		out.Operator = &op
	}
	return out
}

// ftsRequest renders a structured full-text query.
func ftsRequest(q store.FtsQuery) gen.FtsQuery {
	var out gen.FtsQuery
	list := func(qs []store.FtsQuery) []gen.FtsQuery {
		r := make([]gen.FtsQuery, len(qs))
		for i, sub := range qs {
			r[i] = ftsRequest(sub)
		}
		return r
	}
	switch {
	case q.Match != nil:
		m := matchRequest(*q.Match)
		out.Match = &m
	case q.Phrase != nil:
		out.Phrase = &gen.PhraseQuery{Terms: q.Phrase.Terms, Column: optional(q.Phrase.Column), Slop: optional(int32(q.Phrase.Slop))}
	case q.MultiMatch != nil:
		mm := &gen.MultiMatchQuery{}
		for _, m := range q.MultiMatch.Matches {
			mm.MatchQueries = append(mm.MatchQueries, matchRequest(m))
		}
		out.MultiMatch = mm
	case q.Boost != nil:
		out.Boost = &gen.BoostQuery{Positive: ftsRequest(q.Boost.Positive), Negative: ftsRequest(q.Boost.Negative), NegativeBoost: optional(q.Boost.NegativeBoost)}
	case q.Boolean != nil:
		out.Boolean = &gen.BooleanQuery{Must: list(q.Boolean.Must), Should: list(q.Boolean.Should), MustNot: list(q.Boolean.MustNot)}
	}
	return out
}

// queryBody renders a store query as a JSON QueryTableRequest, keeping
// column_aliases in the query's order: it is the order of the output
// columns, which a Go map would lose.
func queryBody(id []string, q store.Query) (*bytes.Buffer, error) {
	req := queryRequest(id, q)
	if q.Projection.Aliases == nil {
		b, err := json.Marshal(req)
		return bytes.NewBuffer(b), err
	}
	req.Columns = nil
	b, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		return nil, err
	}
	var aliases bytes.Buffer
	aliases.WriteString(`{"column_aliases":{`)
	for i, a := range q.Projection.Aliases {
		if i > 0 {
			aliases.WriteByte(',')
		}
		k, _ := json.Marshal(a.Name)
		v, _ := json.Marshal(a.Expr)
		fmt.Fprintf(&aliases, "%s:%s", k, v)
	}
	aliases.WriteString(`}}`)
	fields["columns"] = aliases.Bytes()
	b, err = json.Marshal(fields)
	return bytes.NewBuffer(b), err
}

// Query implements store.ManagedData over HTTP; the answer is an Arrow IPC
// file.
func (h HTTPTarget) Query(ctx context.Context, id []string, q store.Query) (*store.Result, error) {
	if len(q.OrderBy) > 0 {
		return nil, store.Errorf(store.CodeUnsupported, "the API has no sort order for queries")
	}
	body, err := queryBody(id, q)
	if err != nil {
		return nil, err
	}
	resp, err := h.API.QueryTableWithBodyWithResponse(ctx, pathID(id), &gen.QueryTableParams{Delimiter: &dollar}, "application/json", body)
	if err != nil {
		return nil, err
	}
	if err := HTTPError(resp.HTTPResponse, resp.Body); err != nil {
		return nil, err
	}
	r, err := ipc.NewFileReader(bytes.NewReader(resp.Body))
	if err != nil {
		return nil, store.Errorf(store.CodeInternal, "query answered no Arrow IPC file: %v", err)
	}
	defer r.Close()
	out := &store.Result{Schema: r.Schema(), Version: headerInt(resp.HTTPResponse.Header, headerTableVersion)}
	for i := 0; i < r.NumRecords(); i++ {
		rec, err := r.RecordBatch(i)
		if err != nil {
			return nil, store.Errorf(store.CodeInternal, "query answered a bad Arrow IPC file: %v", err)
		}
		rec.Retain()
		out.Batches = append(out.Batches, rec)
	}
	return out, nil
}

// ExplainQuery implements store.ManagedData over HTTP.
func (h HTTPTarget) ExplainQuery(ctx context.Context, id []string, q store.Query, analyze bool) (string, error) {
	req := queryRequest(id, q)
	if analyze {
		resp, err := h.API.AnalyzeTableQueryPlanWithResponse(ctx, pathID(id), &gen.AnalyzeTableQueryPlanParams{Delimiter: &dollar}, gen.AnalyzeTableQueryPlanRequest(req))
		if err != nil {
			return "", err
		}
		if err := HTTPError(resp.HTTPResponse, resp.Body); err != nil {
			return "", err
		}
		return orEmpty(resp.JSON200), nil
	}
	resp, err := h.API.ExplainTableQueryPlanWithResponse(ctx, pathID(id), &gen.ExplainTableQueryPlanParams{Delimiter: &dollar},
		gen.ExplainTableQueryPlanRequest{Id: &id, Query: req})
	if err != nil {
		return "", err
	}
	if err := HTTPError(resp.HTTPResponse, resp.Body); err != nil {
		return "", err
	}
	return orEmpty(resp.JSON200), nil
}

// latestVersion reads the latest version of a managed table from describe.
func (h HTTPTarget) latestVersion(ctx context.Context, id []string) (int64, error) {
	resp, err := h.API.DescribeTableWithResponse(ctx, pathID(id), &gen.DescribeTableParams{Delimiter: &dollar}, gen.DescribeTableRequest{Id: &id})
	if err != nil {
		return 0, err
	}
	if err := HTTPError(resp.HTTPResponse, resp.Body); err != nil {
		return 0, err
	}
	return orZero(resp.JSON200.Version), nil
}

// Restore implements store.ManagedData over HTTP.
func (h HTTPTarget) Restore(ctx context.Context, id []string, version int64) (store.WriteResult, error) {
	resp, err := h.API.RestoreTableWithResponse(ctx, pathID(id), &gen.RestoreTableParams{Delimiter: &dollar}, gen.RestoreTableRequest{Id: &id, Version: version})
	if err != nil {
		return store.WriteResult{}, err
	}
	if err := HTTPError(resp.HTTPResponse, resp.Body); err != nil {
		return store.WriteResult{}, err
	}
	v, err := h.latestVersion(ctx, id)
	return store.WriteResult{Version: v, TransactionID: orEmpty(resp.JSON200.TransactionId)}, err
}

// Describe implements store.ManagedData over HTTP: version and schema from
// describe, the row count from count_rows.
func (h HTTPTarget) Describe(ctx context.Context, id []string, version *int64) (*store.TableData, error) {
	resp, err := h.API.DescribeTableWithResponse(ctx, pathID(id), &gen.DescribeTableParams{Delimiter: &dollar}, gen.DescribeTableRequest{Id: &id, Version: version})
	if err != nil {
		return nil, err
	}
	if err := HTTPError(resp.HTTPResponse, resp.Body); err != nil {
		return nil, err
	}
	r := resp.JSON200
	if r.Schema == nil || r.Version == nil {
		return nil, store.Errorf(store.CodeInvalidTableState, "describe of table %q reported no schema or version", id)
	}
	schema, err := schemaFromJSON(r.Schema)
	if err != nil {
		return nil, err
	}
	out := &store.TableData{Version: *r.Version, Schema: schema}
	if r.Stats != nil {
		out.Deleted, out.Fragments = int64(r.Stats.NumDeletedRows), int64(r.Stats.NumFragments)
	}
	out.NumRows, _, err = h.CountRows(ctx, id, r.Version, "")
	return out, err
}

// Stats implements store.ManagedData over HTTP; fragment sizes are not
// reported.
func (h HTTPTarget) Stats(ctx context.Context, id []string) (*store.TableStats, error) {
	resp, err := h.API.GetTableStatsWithResponse(ctx, pathID(id), &gen.GetTableStatsParams{Delimiter: &dollar}, gen.GetTableStatsRequest{Id: &id})
	if err != nil {
		return nil, err
	}
	if err := HTTPError(resp.HTTPResponse, resp.Body); err != nil {
		return nil, err
	}
	r := resp.JSON200
	return &store.TableStats{NumRows: r.NumRows, TotalBytes: r.TotalBytes, NumIndices: r.NumIndices}, nil
}

// AddColumns implements store.ManagedData over HTTP.
func (h HTTPTarget) AddColumns(ctx context.Context, id []string, cols []store.NewColumn) (store.WriteResult, error) {
	req := gen.AlterTableAddColumnsRequest{Id: &id, NewColumns: make([]gen.AddColumnsEntry, len(cols))}
	for i, c := range cols {
		req.NewColumns[i] = gen.AddColumnsEntry{Name: c.Name}
		if c.Computed {
			req.NewColumns[i].Computed = &c.Expr
		} else {
			req.NewColumns[i].Expression = &c.Expr
		}
	}
	resp, err := h.API.AlterTableAddColumnsWithResponse(ctx, pathID(id), &gen.AlterTableAddColumnsParams{Delimiter: &dollar}, req)
	if err != nil {
		return store.WriteResult{}, err
	}
	if err := HTTPError(resp.HTTPResponse, resp.Body); err != nil {
		return store.WriteResult{}, err
	}
	return store.WriteResult{Version: resp.JSON200.Version}, nil
}

// QueueBackfill implements store.ManagedData over HTTP.
func (h HTTPTarget) QueueBackfill(ctx context.Context, id []string, column, where string) (string, error) {
	resp, err := h.API.AlterTableBackfillColumnsWithResponse(ctx, pathID(id), &gen.AlterTableBackfillColumnsParams{Delimiter: &dollar},
		gen.AlterTableBackfillColumnsRequest{Id: &id, Column: column, Where: optional(where)})
	if err != nil {
		return "", err
	}
	if err := HTTPError(resp.HTTPResponse, resp.Body); err != nil {
		return "", err
	}
	return resp.JSON202.JobId, nil
}

// Backfill is the server's own work: Unsupported (0) over HTTP.
func (h HTTPTarget) Backfill(context.Context, store.BackfillColumn) (store.WriteResult, error) {
	return store.WriteResult{}, store.Errorf(store.CodeUnsupported, "backfills run inside the server")
}

// AlterColumns implements store.ManagedData over HTTP.
func (h HTTPTarget) AlterColumns(ctx context.Context, id []string, alts []store.ColumnAlteration) (store.WriteResult, error) {
	req := gen.AlterTableAlterColumnsRequest{Id: &id, Alterations: make([]gen.AlterColumnsEntry, len(alts))}
	for i, a := range alts {
		req.Alterations[i] = gen.AlterColumnsEntry{Path: a.Path, Rename: a.Rename, Nullable: a.Nullable}
		if a.Type != nil {
			dt, err := typeToJSON(a.Type)
			if err != nil {
				return store.WriteResult{}, err
			}
			req.Alterations[i].DataType = &dt
		}
	}
	resp, err := h.API.AlterTableAlterColumnsWithResponse(ctx, pathID(id), &gen.AlterTableAlterColumnsParams{Delimiter: &dollar}, req)
	if err != nil {
		return store.WriteResult{}, err
	}
	if err := HTTPError(resp.HTTPResponse, resp.Body); err != nil {
		return store.WriteResult{}, err
	}
	return store.WriteResult{Version: resp.JSON200.Version}, nil
}

// DropColumns implements store.ManagedData over HTTP.
func (h HTTPTarget) DropColumns(ctx context.Context, id []string, paths []string) (store.WriteResult, error) {
	resp, err := h.API.AlterTableDropColumnsWithResponse(ctx, pathID(id), &gen.AlterTableDropColumnsParams{Delimiter: &dollar},
		gen.AlterTableDropColumnsRequest{Id: &id, Columns: paths})
	if err != nil {
		return store.WriteResult{}, err
	}
	if err := HTTPError(resp.HTTPResponse, resp.Body); err != nil {
		return store.WriteResult{}, err
	}
	return store.WriteResult{Version: resp.JSON200.Version, TransactionID: orEmpty(resp.JSON200.TransactionId)}, nil
}

// UpdateFieldMetadata implements store.ManagedData over HTTP.
func (h HTTPTarget) UpdateFieldMetadata(ctx context.Context, id []string, updates []store.FieldMetadataUpdate) (store.WriteResult, map[string]map[string]string, error) {
	req := gen.UpdateFieldMetadataRequest{Id: &id, Updates: make([]gen.UpdateFieldMetadataEntry, len(updates))}
	for i, u := range updates {
		req.Updates[i] = gen.UpdateFieldMetadataEntry{Path: u.Path, Metadata: u.Metadata, Replace: optional(u.Replace)}
	}
	resp, err := h.API.UpdateFieldMetadataWithResponse(ctx, pathID(id), &gen.UpdateFieldMetadataParams{Delimiter: &dollar}, req)
	if err != nil {
		return store.WriteResult{}, nil, err
	}
	if err := HTTPError(resp.HTTPResponse, resp.Body); err != nil {
		return store.WriteResult{}, nil, err
	}
	var fields map[string]map[string]string
	if resp.JSON200.Fields != nil {
		fields = *resp.JSON200.Fields
	}
	return store.WriteResult{Version: resp.JSON200.Version}, fields, nil
}

// UpdateSchemaMetadata implements store.ManagedData over HTTP; the answer
// carries no version, so the result reports none.
func (h HTTPTarget) UpdateSchemaMetadata(ctx context.Context, id []string, set map[string]string) (store.WriteResult, map[string]string, error) {
	resp, err := h.API.UpdateTableSchemaMetadataWithResponse(ctx, pathID(id), &gen.UpdateTableSchemaMetadataParams{Delimiter: &dollar}, set)
	if err != nil {
		return store.WriteResult{}, nil, err
	}
	if err := HTTPError(resp.HTTPResponse, resp.Body); err != nil {
		return store.WriteResult{}, nil, err
	}
	return store.WriteResult{}, *resp.JSON200, nil
}

// isScalarIndex reports whether an index type is one create_scalar_index
// builds.
func isScalarIndex(t string) bool {
	switch strings.ToUpper(t) {
	case store.IndexBTree, store.IndexBitmap, store.IndexLabelList:
		return true
	}
	return false
}

// CreateIndex implements store.Indexes over HTTP: scalar index types go to
// create_scalar_index, the others to create_index.
func (h HTTPTarget) CreateIndex(ctx context.Context, id []string, spec store.IndexSpec) (string, error) {
	v := spec.Vector
	req := gen.CreateTableIndexRequest{Id: &id, Column: spec.Column, IndexType: spec.Type, Name: optional(spec.Name),
		DistanceType: optional(spec.Metric), NumPartitions: optional(v.NumPartitions), TargetPartitionSize: optional(v.TargetPartitionSize),
		NumSubVectors: optional(v.NumSubVectors), NumBits: optional(v.NumBits), SampleRate: optional(v.SampleRate),
		MaxIterations: optional(v.MaxIterations), M: optional(v.M), EfConstruction: optional(v.EfConstruction),
		WithPosition: spec.Text.WithPosition, BaseTokenizer: optional(spec.Text.BaseTokenizer), Language: optional(spec.Text.Language),
		LowerCase: spec.Text.LowerCase, Stem: spec.Text.Stem, RemoveStopWords: spec.Text.RemoveStopWords, AsciiFolding: spec.Text.ASCIIFolding,
		MaxTokenLength: spec.Text.MaxTokenLength}
	if isScalarIndex(spec.Type) {
		resp, err := h.API.CreateTableScalarIndexWithResponse(ctx, pathID(id), &gen.CreateTableScalarIndexParams{Delimiter: &dollar}, req)
		if err != nil {
			return "", err
		}
		if err := HTTPError(resp.HTTPResponse, resp.Body); err != nil {
			return "", err
		}
		return orEmpty(resp.JSON200.TransactionId), nil
	}
	resp, err := h.API.CreateTableIndexWithResponse(ctx, pathID(id), &gen.CreateTableIndexParams{Delimiter: &dollar}, req)
	if err != nil {
		return "", err
	}
	if err := HTTPError(resp.HTTPResponse, resp.Body); err != nil {
		return "", err
	}
	return orEmpty(resp.JSON200.TransactionId), nil
}

// BuildIndex is the server's own work: Unsupported (0) over HTTP.
func (h HTTPTarget) BuildIndex(context.Context, store.BuildIndex) error {
	return store.Errorf(store.CodeUnsupported, "index builds run inside the server")
}

func indexInfo(c gen.IndexContent) store.IndexInfo {
	info := store.IndexInfo{Name: c.IndexName, UUID: c.IndexUuid, Columns: c.Columns, Status: strings.ToUpper(c.Status),
		Type: orEmpty(c.IndexType), NumIndexedRows: orZero(c.NumIndexedRows), NumUnindexedRows: orZero(c.NumUnindexedRows),
		SizeBytes: orZero(c.SizeBytes), Details: orEmpty(c.IndexDetails)}
	if c.CreatedAt != nil {
		info.CreatedAt = *c.CreatedAt
	}
	return info
}

// ListIndices implements store.Indexes over HTTP.
func (h HTTPTarget) ListIndices(ctx context.Context, id []string, version *int64, page store.Page) ([]store.IndexInfo, string, error) {
	req := gen.ListTableIndicesRequest{Id: &id, Version: version, PageToken: optional(page.Token), Limit: optional(page.Limit)}
	resp, err := h.API.ListTableIndicesWithResponse(ctx, pathID(id), &gen.ListTableIndicesParams{Delimiter: &dollar}, req)
	if err != nil {
		return nil, "", err
	}
	if err := HTTPError(resp.HTTPResponse, resp.Body); err != nil {
		return nil, "", err
	}
	out := make([]store.IndexInfo, len(resp.JSON200.Indexes))
	for i, c := range resp.JSON200.Indexes {
		out[i] = indexInfo(c)
	}
	return out, orEmpty(resp.JSON200.PageToken), nil
}

// DescribeIndex implements store.Indexes over HTTP: the index's entry in
// the listing, with the counts and metric of its stats.
func (h HTTPTarget) DescribeIndex(ctx context.Context, id []string, name string, version *int64) (*store.IndexInfo, error) {
	resp, err := h.API.DescribeTableIndexStatsWithResponse(ctx, pathID(id), name, &gen.DescribeTableIndexStatsParams{Delimiter: &dollar},
		gen.DescribeTableIndexStatsRequest{Id: &id, Version: version})
	if err != nil {
		return nil, err
	}
	if err := HTTPError(resp.HTTPResponse, resp.Body); err != nil {
		return nil, err
	}
	info := &store.IndexInfo{Name: name}
	token := ""
	for {
		list, next, err := h.ListIndices(ctx, id, version, store.Page{Token: token})
		if err != nil {
			return nil, err
		}
		for _, ix := range list {
			if ix.Name == name {
				*info = ix
			}
		}
		if next == "" {
			break
		}
		token = next
	}
	r := resp.JSON200
	info.Type = orEmpty(r.IndexType)
	info.Metric = strings.ToLower(orEmpty(r.DistanceType))
	info.NumIndexedRows, info.NumUnindexedRows = orZero(r.NumIndexedRows), orZero(r.NumUnindexedRows)
	return info, nil
}

// DropIndex implements store.Indexes over HTTP.
func (h HTTPTarget) DropIndex(ctx context.Context, id []string, name string) (string, error) {
	resp, err := h.API.DropTableIndexWithResponse(ctx, pathID(id), name, &gen.DropTableIndexParams{Delimiter: &dollar})
	if err != nil {
		return "", err
	}
	if err := HTTPError(resp.HTTPResponse, resp.Body); err != nil {
		return "", err
	}
	return orEmpty(resp.JSON200.TransactionId), nil
}

// PrewarmIndex implements store.Indexes over the LanceDB remote dialect's
// POST /v1/table/{id}/index/{name}/prewarm, which the spec does not have: a
// server without it answers 404 code 0 (Unsupported), a gap.
func (h HTTPTarget) PrewarmIndex(ctx context.Context, id []string, name string) error {
	escape := func(s string) string { return strings.ReplaceAll(url.PathEscape(s), "+", "%2B") }
	u := h.base + "/v1/table/" + escape(pathID(id)) + "/index/" + escape(name) + "/prewarm"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, nil)
	if err != nil {
		return err
	}
	res, err := h.doer.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return err
	}
	return HTTPError(res, body)
}

// namedTypes are the Arrow types without parameters, by their names in
// the spec.
var namedTypes = map[string]arrow.DataType{
	"null": arrow.Null, "bool": arrow.FixedWidthTypes.Boolean, "int8": arrow.PrimitiveTypes.Int8, "int16": arrow.PrimitiveTypes.Int16,
	"int32": arrow.PrimitiveTypes.Int32, "int64": arrow.PrimitiveTypes.Int64, "uint8": arrow.PrimitiveTypes.Uint8,
	"uint16": arrow.PrimitiveTypes.Uint16, "uint32": arrow.PrimitiveTypes.Uint32, "uint64": arrow.PrimitiveTypes.Uint64,
	"float16": arrow.FixedWidthTypes.Float16, "float32": arrow.PrimitiveTypes.Float32, "float64": arrow.PrimitiveTypes.Float64,
	"utf8": arrow.BinaryTypes.String, "large_utf8": arrow.BinaryTypes.LargeString, "binary": arrow.BinaryTypes.Binary,
	"large_binary": arrow.BinaryTypes.LargeBinary, "date32": arrow.FixedWidthTypes.Date32, "date64": arrow.FixedWidthTypes.Date64,
}

// typeToJSON renders a type as alter_columns takes it. Returns
// Unsupported (0) for a type the suite has no JSON form for.
func typeToJSON(dt arrow.DataType) (map[string]any, error) {
	for name, t := range namedTypes {
		if arrow.TypeEqual(t, dt) {
			return map[string]any{"type": name}, nil
		}
	}
	return nil, store.Errorf(store.CodeUnsupported, "no JSON form for type %s in the conformance suite", dt)
}

// schemaFromJSON reads a JsonArrowSchema. Returns Internal (18) for a type
// it does not know.
func schemaFromJSON(s *gen.JsonArrowSchema) (*arrow.Schema, error) {
	fields, err := fieldsFromJSON(s.Fields)
	if err != nil {
		return nil, err
	}
	var md *arrow.Metadata
	if s.Metadata != nil {
		m := arrow.MetadataFrom(*s.Metadata)
		md = &m
	}
	return arrow.NewSchema(fields, md), nil
}

func fieldsFromJSON(in []gen.JsonArrowField) ([]arrow.Field, error) {
	out := make([]arrow.Field, len(in))
	for i, f := range in {
		dt, err := typeFromJSON(f.Type)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", f.Name, err)
		}
		out[i] = arrow.Field{Name: f.Name, Type: dt, Nullable: f.Nullable}
		if f.Metadata != nil {
			out[i].Metadata = arrow.MetadataFrom(*f.Metadata)
		}
	}
	return out, nil
}

func typeFromJSON(t gen.JsonArrowDataType) (arrow.DataType, error) {
	name := strings.ToLower(t.Type)
	if dt, ok := namedTypes[name]; ok {
		return dt, nil
	}
	var children []arrow.Field
	if t.Fields != nil {
		var err error
		if children, err = fieldsFromJSON(*t.Fields); err != nil {
			return nil, err
		}
	}
	switch {
	case name == "struct":
		return arrow.StructOf(children...), nil
	case (name == "list" || name == "large_list" || name == "fixed_size_list") && len(children) == 1:
		switch name {
		case "list":
			return arrow.ListOfField(children[0]), nil
		case "large_list":
			return arrow.LargeListOfField(children[0]), nil
		}
		if t.Length != nil && *t.Length > 0 {
			return arrow.FixedSizeListOfField(int32(*t.Length), children[0]), nil
		}
	}
	return nil, store.Errorf(store.CodeInternal, "the conformance suite cannot read type %q", t.Type)
}
