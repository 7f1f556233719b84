package client

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"iter"
	"net/http"
	"reflect"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/lancens/lancens/gen/apiclient"
)

// Query is a query of one table, built step by step: start it with
// Table.Search (nearest vectors), Table.FullTextSearch (text) or
// Table.Query (a scan), narrow it, and run it with ToArrow, Reader, Iter,
// Scan, Explain or Analyze. Each step returns the query, so calls chain;
// a mistake in a step is reported when the query runs. A Query may run
// several times but must not be changed concurrently.
type Query struct {
	t   *Table
	req QueryRequest
	err error
}

// QueryRequest is a query in the form of the API's request, with every
// member the spec gives it (besides identity and context): what
// Client.Query, Client.ExplainQuery and Client.AnalyzeQuery send. Zero
// fields are left out. The Query builder fills one step by step.
type QueryRequest struct {
	// Vector is the query vector of a nearest-neighbour search; Vectors
	// are several, searched as a batch (each result row carries the number
	// of its query vector in the column query_index). Set at most one.
	Vector  []float32
	Vectors [][]float32
	// K is how many rows to return: for a search the nearest (0: the
	// server's default), for a scan at most K (0: every row).
	K      int
	Offset int
	// Filter is a SQL condition the rows must satisfy.
	Filter string
	// Columns are the field paths to return, in that order; Aliases
	// instead name output columns holding SQL expressions, in their order.
	// Set at most one; neither returns every column.
	Columns []string
	Aliases []ColumnAlias
	// Version reads that version (nil: the latest); Branch reads a branch
	// ("" is main, or the branch of a client from OnBranch).
	Version *int64
	Branch  string
	// VectorColumn names the vector column to search, when the table has
	// several.
	VectorColumn string
	DistanceType DistanceType
	// Nprobes, RefineFactor and Ef tune searches through indexes (see the
	// Query methods of the same names); 0 keeps the server's default.
	Nprobes, RefineFactor, Ef int
	// Prefilter applies Filter before the vector search (true, nil: the
	// default) or to its results (false).
	Prefilter *bool
	// LowerBound and UpperBound keep vector results with LowerBound ≤
	// distance < UpperBound; nil leaves that end open.
	LowerBound, UpperBound *float32
	BypassVectorIndex      bool
	FastSearch             bool
	// WithRowID adds the column _rowid.
	WithRowID bool
	// Text is the words of a full-text search, in TextColumns (none: every
	// column with a full-text index); TextQuery is a structured one
	// instead. Set at most one.
	Text        string
	TextColumns []string
	TextQuery   FTSQuery
	// OrderBy sorts the rows of a scan: an extension of the spec that
	// lancens and the LanceDB SDK share.
	OrderBy []SortKey
}

// ColumnAlias is an output column of a query: Name holds the value of the
// SQL expression Expr.
type ColumnAlias struct {
	Name, Expr string
}

// queryBody is the JSON of a query: the spec's request, with columns
// written in the order they were given (a Go map would lose the order of
// aliases, which is the order of the output columns) and order_by.
type queryBody struct {
	apiclient.QueryTableRequest
	Columns *queryColumns `json:"columns,omitempty"` // shadows the request's columns
	OrderBy []SortKey     `json:"order_by,omitempty"`
}

type queryColumns struct {
	names   []string
	aliases []ColumnAlias
}

func (c *queryColumns) MarshalJSON() ([]byte, error) {
	if c.aliases == nil {
		return json.Marshal(map[string][]string{"column_names": c.names})
	}
	var b bytes.Buffer
	b.WriteString(`{"column_aliases":{`)
	for i, a := range c.aliases {
		if i > 0 {
			b.WriteByte(',')
		}
		name, _ := json.Marshal(a.Name)
		expr, _ := json.Marshal(a.Expr)
		b.Write(name)
		b.WriteByte(':')
		b.Write(expr)
	}
	b.WriteString("}}")
	return b.Bytes(), nil
}

// body returns the wire form of r for table id, the branch of the client
// filling in for an empty Branch. Returns an InvalidInput (13) error for
// members that exclude each other.
func (r QueryRequest) body(id []string, branch string) (queryBody, error) {
	switch {
	case r.Vector != nil && r.Vectors != nil:
		return queryBody{}, invalid("a query has either one vector or several, not both")
	case r.Columns != nil && r.Aliases != nil:
		return queryBody{}, invalid("a query selects either columns or expressions, not both")
	case r.Text != "" && r.TextQuery != nil:
		return queryBody{}, invalid("a query has either full-text words or a structured full-text query, not both")
	case r.K < 0 || r.Offset < 0:
		return queryBody{}, invalid("limit %d or offset %d is negative", r.K, r.Offset)
	}
	if r.Branch == "" {
		r.Branch = branch
	}
	b := queryBody{OrderBy: r.OrderBy, QueryTableRequest: apiclient.QueryTableRequest{
		Id: &id, K: r.K, Offset: positive(r.Offset), Filter: optional(r.Filter), Version: r.Version, Branch: optional(r.Branch),
		VectorColumn: optional(r.VectorColumn), DistanceType: optional(string(r.DistanceType)),
		Nprobes: positive(r.Nprobes), Ef: positive(r.Ef), Prefilter: r.Prefilter, LowerBound: r.LowerBound, UpperBound: r.UpperBound,
		BypassVectorIndex: optionalTrue(r.BypassVectorIndex), FastSearch: optionalTrue(r.FastSearch), WithRowId: optionalTrue(r.WithRowID),
	}}
	if r.RefineFactor > 0 {
		b.RefineFactor = Ptr(int32(r.RefineFactor))
	}
	if r.Columns != nil || r.Aliases != nil {
		b.Columns = &queryColumns{names: r.Columns, aliases: r.Aliases}
	}
	switch {
	case r.Vector != nil:
		b.Vector = &struct {
			MultiVector  *[][]float32 `json:"multi_vector,omitempty"`
			SingleVector *[]float32   `json:"single_vector,omitempty"`
		}{SingleVector: &r.Vector}
	case r.Vectors != nil:
		b.Vector = &struct {
			MultiVector  *[][]float32 `json:"multi_vector,omitempty"`
			SingleVector *[]float32   `json:"single_vector,omitempty"`
		}{MultiVector: &r.Vectors}
	}
	switch {
	case r.Text != "":
		fts := apiclient.StringFtsQuery{Query: r.Text}
		if len(r.TextColumns) > 0 {
			fts.Columns = &r.TextColumns
		}
		b.FullTextQuery = &struct {
			StringQuery     *apiclient.StringFtsQuery     `json:"string_query,omitempty"`
			StructuredQuery *apiclient.StructuredFtsQuery `json:"structured_query,omitempty"`
		}{StringQuery: &fts}
	case r.TextQuery != nil:
		b.FullTextQuery = &struct {
			StringQuery     *apiclient.StringFtsQuery     `json:"string_query,omitempty"`
			StructuredQuery *apiclient.StructuredFtsQuery `json:"structured_query,omitempty"`
		}{StructuredQuery: &apiclient.StructuredFtsQuery{Query: r.TextQuery.fts()}}
	}
	return b, nil
}

// SortKey orders the rows of a scan by a column; see Asc and Desc.
type SortKey struct {
	Column     string `json:"column_name"`
	Ascending  bool   `json:"ascending"`
	NullsFirst bool   `json:"nulls_first"`
}

// Asc sorts by column, smallest first and nulls last.
func Asc(column string) SortKey { return SortKey{Column: column, Ascending: true} }

// Desc sorts by column, largest first and nulls last.
func Desc(column string) SortKey { return SortKey{Column: column} }

func newQuery(t *Table) *Query {
	q := &Query{t: t}
	q.req.Version = t.version
	return q
}

// NearestTo makes the query a search for the rows whose vectors are
// nearest to vector, ordered by distance (column _distance). Without
// Limit it returns 10 rows.
func (q *Query) NearestTo(vector []float32) *Query {
	q.req.Vector, q.req.Vectors = vector, nil
	return q
}

// NearestToAll searches for several vectors at once; each result row
// carries the number of its query vector in the column query_index.
func (q *Query) NearestToAll(vectors ...[]float32) *Query {
	q.req.Vector, q.req.Vectors = nil, vectors
	return q
}

// FullTextSearch makes the query (also) a full-text search for the words
// of text in the given columns (none: every column with a full-text
// index), ranked by BM25 score (column _score).
func (q *Query) FullTextSearch(text string, columns ...string) *Query {
	q.req.Text, q.req.TextColumns, q.req.TextQuery = text, columns, nil
	return q
}

// FullTextQuery makes the query (also) a structured full-text search:
// MatchQuery, PhraseQuery, MultiMatchQuery, BoostQuery or BooleanQuery.
func (q *Query) FullTextQuery(fq FTSQuery) *Query {
	if fq == nil {
		q.fail(invalid("FullTextQuery needs a query"))
		return q
	}
	q.req.Text, q.req.TextColumns, q.req.TextQuery = "", nil, fq
	return q
}

// Where keeps the rows for which the SQL condition filter holds.
func (q *Query) Where(filter string) *Query {
	q.req.Filter = filter
	return q
}

// Select returns only the given columns (field paths), in that order.
func (q *Query) Select(columns ...string) *Query {
	if q.req.Aliases != nil {
		q.fail(invalid("a query selects either columns or expressions, not both"))
	}
	q.req.Columns = columns
	return q
}

// SelectExpr adds an output column name holding the SQL expression expr;
// the columns come in the order of the calls.
func (q *Query) SelectExpr(name, expr string) *Query {
	if q.req.Columns != nil {
		q.fail(invalid("a query selects either columns or expressions, not both"))
	}
	q.req.Aliases = append(q.req.Aliases, ColumnAlias{Name: name, Expr: expr})
	return q
}

// Limit returns at most n rows (for searches: the n best). A scan without
// a limit returns every row.
func (q *Query) Limit(n int) *Query {
	if n < 0 {
		q.fail(invalid("limit %d is negative", n))
	}
	q.req.K = n
	return q
}

// Offset skips the first n rows.
func (q *Query) Offset(n int) *Query {
	if n < 0 {
		q.fail(invalid("offset %d is negative", n))
	}
	q.req.Offset = n
	return q
}

// Column names the vector column to search, when the table has several.
func (q *Query) Column(name string) *Query {
	q.req.VectorColumn = name
	return q
}

// DistanceType sets the metric of a vector search (the default is the
// index's, or l2).
func (q *Query) DistanceType(d DistanceType) *Query {
	q.req.DistanceType = d
	return q
}

// Nprobes sets how many IVF partitions a vector search probes.
func (q *Query) Nprobes(n int) *Query {
	q.req.Nprobes = n
	return q
}

// RefineFactor re-ranks factor × limit candidates with exact distances.
func (q *Query) RefineFactor(factor int) *Query {
	q.req.RefineFactor = factor
	return q
}

// Ef sets the candidate list size of a search in an HNSW index.
func (q *Query) Ef(ef int) *Query {
	q.req.Ef = ef
	return q
}

// Prefilter says whether Where applies before the vector search (true, the
// default: the limit counts matching rows) or to its results (false).
func (q *Query) Prefilter(before bool) *Query {
	q.req.Prefilter = &before
	return q
}

// DistanceRange keeps vector results with lower ≤ distance < upper; nil
// leaves that end open.
func (q *Query) DistanceRange(lower, upper *float32) *Query {
	q.req.LowerBound, q.req.UpperBound = lower, upper
	return q
}

// BypassVectorIndex computes exact distances even where an index exists.
func (q *Query) BypassVectorIndex() *Query {
	q.req.BypassVectorIndex = true
	return q
}

// FastSearch searches only rows an index covers.
func (q *Query) FastSearch() *Query {
	q.req.FastSearch = true
	return q
}

// WithRowID adds the column _rowid, each row's stable id.
func (q *Query) WithRowID() *Query {
	q.req.WithRowID = true
	return q
}

// OrderBy sorts the rows of a scan by the keys, in order of priority.
func (q *Query) OrderBy(keys ...SortKey) *Query {
	q.req.OrderBy = append(q.req.OrderBy, keys...)
	return q
}

func (q *Query) fail(err error) {
	if q.err == nil {
		q.err = err
	}
}

// Request returns what the query sends, for Client.Query and its kin.
func (q *Query) Request() QueryRequest { return q.req }

// request returns the query's JSON and the table's path, or the first
// error a step recorded.
func (q *Query) request() ([]byte, string, error) {
	if q.err != nil {
		return nil, "", q.err
	}
	return q.t.c.queryRequest(q.t.id, q.req)
}

// queryRequest returns the JSON of r for table id and the table's path.
// Returns an InvalidInput (13) error for an identifier the path cannot
// carry or members of r that exclude each other.
func (c *Client) queryRequest(id []string, r QueryRequest) ([]byte, string, error) {
	path, err := c.pathID(id)
	if err != nil {
		return nil, "", err
	}
	body, err := r.body(id, c.branch)
	if err != nil {
		return nil, "", err
	}
	b, err := json.Marshal(body)
	return b, path, err
}

const mimeArrowFile = "application/vnd.apache.arrow.file"

// Reader runs the query and returns its rows as they arrive; release the
// reader when done. Returns the server's error (ErrTableNotFound,
// ErrTableColumnNotFound for an unknown column, ErrInvalidInput for a
// malformed filter, …) or the first mistake of a query step.
func (q *Query) Reader(ctx context.Context) (array.RecordReader, error) {
	b, path, err := q.request()
	if err != nil {
		return nil, err
	}
	r, _, err := q.t.c.queryReader(ctx, path, b)
	return r, err
}

// queryReader sends the query body b to the table at path and returns its
// rows as they arrive, with the response's headers. Returns the server's
// error, or the transport's.
func (c *Client) queryReader(ctx context.Context, path string, b []byte) (array.RecordReader, http.Header, error) {
	accept := func(_ context.Context, req *http.Request) error {
		req.Header.Set("Accept", mimeArrowStream+", "+mimeArrowFile)
		return nil
	}
	res, err := c.api.QueryTableWithBody(ctx, path, &apiclient.QueryTableParams{Delimiter: &c.delimiter}, "application/json", bytes.NewReader(b), accept)
	if err != nil {
		return nil, nil, err
	}
	if res.StatusCode/100 != 2 {
		defer res.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
		return nil, nil, checkResponse(res, body)
	}
	if strings.HasPrefix(res.Header.Get("Content-Type"), mimeArrowStream) {
		r, err := ipc.NewReader(res.Body)
		if err != nil {
			res.Body.Close()
			return nil, nil, err
		}
		return &streamReader{Reader: r, body: res.Body}, res.Header, nil
	}
	// An Arrow IPC file, the spec's answer, needs all its bytes.
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, nil, err
	}
	fr, err := ipc.NewFileReader(bytes.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	defer fr.Close()
	batches := make([]arrow.RecordBatch, 0, fr.NumRecords())
	defer func() {
		for _, b := range batches {
			b.Release()
		}
	}()
	for i := range fr.NumRecords() {
		rec, err := fr.RecordBatch(i)
		if err != nil {
			return nil, nil, err
		}
		rec.Retain()
		batches = append(batches, rec)
	}
	r, err := array.NewRecordReader(fr.Schema(), batches)
	return r, res.Header, err
}

// streamReader reads an Arrow IPC stream from a response body, which it
// closes when released.
type streamReader struct {
	*ipc.Reader
	body io.Closer
	once sync.Once
}

func (r *streamReader) Release() {
	r.Reader.Release()
	r.once.Do(func() { r.body.Close() })
}

// ToArrow runs the query and returns all its rows; release the table when
// done. Returns the errors of Reader.
func (q *Query) ToArrow(ctx context.Context) (arrow.Table, error) {
	r, err := q.Reader(ctx)
	if err != nil {
		return nil, err
	}
	defer r.Release()
	var batches []arrow.RecordBatch
	defer func() {
		for _, b := range batches {
			b.Release()
		}
	}()
	for r.Next() {
		b := r.RecordBatch()
		b.Retain()
		batches = append(batches, b)
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	return array.NewTableFromRecords(r.Schema(), batches), nil
}

// Iter runs the query and yields its rows one at a time, as they arrive.
// It stops at the first error, which it yields with a nil Row.
func (q *Query) Iter(ctx context.Context) iter.Seq2[Row, error] {
	return func(yield func(Row, error) bool) {
		r, err := q.Reader(ctx)
		if err != nil {
			yield(nil, err)
			return
		}
		defer r.Release()
		for r.Next() {
			for _, row := range rowsOf(r.RecordBatch()) {
				if !yield(row, nil) {
					return
				}
			}
		}
		if err := r.Err(); err != nil {
			yield(nil, err)
		}
	}
}

// Scan runs q and yields its rows as values of the struct type T, whose
// fields take the columns of the same name (as Structs names them:
// `arrow:"_distance"` catches the distance of a search). Columns without a
// field are dropped. It stops at the first error, which it yields: the
// query's, or one saying which column does not fit its field.
func Scan[T any](ctx context.Context, q *Query) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		if reflect.TypeFor[T]().Kind() != reflect.Struct {
			yield(zero, invalid("Scan needs a struct type, not %s", reflect.TypeFor[T]()))
			return
		}
		for row, err := range q.Iter(ctx) {
			if err != nil {
				yield(zero, err)
				return
			}
			var v T
			if err := scanRow(reflect.ValueOf(&v).Elem(), row); err != nil {
				yield(zero, invalid("%v", err))
				return
			}
			if !yield(v, nil) {
				return
			}
		}
	}
}

// ScanAll runs q and returns its rows as values of T (see Scan).
func ScanAll[T any](ctx context.Context, q *Query) ([]T, error) {
	var out []T
	for v, err := range Scan[T](ctx, q) {
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// Explain returns the plan the server would run the query with, in more
// detail when verbose. Returns the errors of Reader.
func (q *Query) Explain(ctx context.Context, verbose bool) (string, error) {
	if q.err != nil {
		return "", q.err
	}
	return q.t.c.ExplainQuery(ctx, q.t.id, q.req, verbose)
}

// Analyze runs the query and returns its plan with what each step took
// (time, rows). Returns the errors of Reader.
func (q *Query) Analyze(ctx context.Context) (string, error) {
	if q.err != nil {
		return "", q.err
	}
	return q.t.c.AnalyzeQuery(ctx, q.t.id, q.req)
}

// ExplainQuery returns the plan the server would run query r on table id
// with, in more detail when verbose. Returns the errors of Query.
func (c *Client) ExplainQuery(ctx context.Context, id []string, r QueryRequest, verbose bool) (string, error) {
	b, path, err := c.queryRequest(id, r)
	if err != nil {
		return "", err
	}
	body, _ := json.Marshal(struct {
		Query   json.RawMessage `json:"query"`
		Verbose bool            `json:"verbose"`
	}{b, verbose})
	resp, err := c.api.ExplainTableQueryPlanWithBodyWithResponse(ctx, path, &apiclient.ExplainTableQueryPlanParams{Delimiter: &c.delimiter},
		"application/json", bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	if err := checkResponse(resp.HTTPResponse, resp.Body); err != nil {
		return "", err
	}
	if resp.JSON200 == nil {
		return "", errMissing("plan")
	}
	return *resp.JSON200, nil
}

// AnalyzeQuery runs query r on table id and returns its plan with what
// each step took (time, rows). Returns the errors of Query.
func (c *Client) AnalyzeQuery(ctx context.Context, id []string, r QueryRequest) (string, error) {
	b, path, err := c.queryRequest(id, r)
	if err != nil {
		return "", err
	}
	resp, err := c.api.AnalyzeTableQueryPlanWithBodyWithResponse(ctx, path, &apiclient.AnalyzeTableQueryPlanParams{Delimiter: &c.delimiter},
		"application/json", bytes.NewReader(b))
	if err != nil {
		return "", err
	}
	if err := checkResponse(resp.HTTPResponse, resp.Body); err != nil {
		return "", err
	}
	if resp.JSON200 == nil {
		return "", errMissing("analysis")
	}
	return *resp.JSON200, nil
}
