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

	"github.com/lancens/lancens/gen"
)

// Query is a query of one table, built step by step: start it with
// Table.Search (nearest vectors), Table.FullTextSearch (text) or
// Table.Query (a scan), narrow it, and run it with ToArrow, Reader, Iter,
// Scan, Explain or Analyze. Each step returns the query, so calls chain;
// a mistake in a step is reported when the query runs. A Query may run
// several times but must not be changed concurrently.
type Query struct {
	t    *Table
	body queryBody
	err  error
}

// queryBody is the JSON of a query: the spec's request, with columns
// written in the order they were given (a Go map would lose the order of
// aliases, which is the order of the output columns) and order_by, the
// extension lancens and the LanceDB SDK use to sort a scan.
type queryBody struct {
	gen.QueryTableRequest
	Columns *queryColumns `json:"columns,omitempty"` // shadows the request's columns
	OrderBy []SortKey     `json:"order_by,omitempty"`
}

type queryColumns struct {
	names   []string
	aliases [][2]string // output name, expression
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
		name, _ := json.Marshal(a[0])
		expr, _ := json.Marshal(a[1])
		b.Write(name)
		b.WriteByte(':')
		b.Write(expr)
	}
	b.WriteString("}}")
	return b.Bytes(), nil
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
	q.body.Version = t.version
	return q
}

// NearestTo makes the query a search for the rows whose vectors are
// nearest to vector, ordered by distance (column _distance). Without
// Limit it returns 10 rows.
func (q *Query) NearestTo(vector []float32) *Query {
	q.body.Vector = &struct {
		MultiVector  *[][]float32 `json:"multi_vector,omitempty"`
		SingleVector *[]float32   `json:"single_vector,omitempty"`
	}{SingleVector: &vector}
	return q
}

// NearestToAll searches for several vectors at once; each result row
// carries the number of its query vector in the column query_index.
func (q *Query) NearestToAll(vectors ...[]float32) *Query {
	q.body.Vector = &struct {
		MultiVector  *[][]float32 `json:"multi_vector,omitempty"`
		SingleVector *[]float32   `json:"single_vector,omitempty"`
	}{MultiVector: &vectors}
	return q
}

// FullTextSearch makes the query (also) a full-text search for the words
// of text in the given columns (none: every column with a full-text
// index), ranked by BM25 score (column _score).
func (q *Query) FullTextSearch(text string, columns ...string) *Query {
	fts := gen.StringFtsQuery{Query: text}
	if len(columns) > 0 {
		fts.Columns = &columns
	}
	q.body.FullTextQuery = &struct {
		StringQuery     *gen.StringFtsQuery     `json:"string_query,omitempty"`
		StructuredQuery *gen.StructuredFtsQuery `json:"structured_query,omitempty"`
	}{StringQuery: &fts}
	return q
}

// FullTextQuery makes the query (also) a structured full-text search:
// MatchQuery, PhraseQuery, MultiMatchQuery, BoostQuery or BooleanQuery.
func (q *Query) FullTextQuery(fq FTSQuery) *Query {
	if fq == nil {
		q.fail(invalid("FullTextQuery needs a query"))
		return q
	}
	q.body.FullTextQuery = &struct {
		StringQuery     *gen.StringFtsQuery     `json:"string_query,omitempty"`
		StructuredQuery *gen.StructuredFtsQuery `json:"structured_query,omitempty"`
	}{StructuredQuery: &gen.StructuredFtsQuery{Query: fq.fts()}}
	return q
}

// Where keeps the rows for which the SQL condition filter holds.
func (q *Query) Where(filter string) *Query {
	q.body.Filter = &filter
	return q
}

// Select returns only the given columns (field paths), in that order.
func (q *Query) Select(columns ...string) *Query {
	if q.body.Columns != nil && q.body.Columns.aliases != nil {
		q.fail(invalid("a query selects either columns or expressions, not both"))
	}
	q.body.Columns = &queryColumns{names: columns}
	return q
}

// SelectExpr adds an output column name holding the SQL expression expr;
// the columns come in the order of the calls.
func (q *Query) SelectExpr(name, expr string) *Query {
	if q.body.Columns == nil {
		q.body.Columns = &queryColumns{}
	}
	if q.body.Columns.names != nil {
		q.fail(invalid("a query selects either columns or expressions, not both"))
	}
	q.body.Columns.aliases = append(q.body.Columns.aliases, [2]string{name, expr})
	return q
}

// Limit returns at most n rows (for searches: the n best). A scan without
// a limit returns every row.
func (q *Query) Limit(n int) *Query {
	if n < 0 {
		q.fail(invalid("limit %d is negative", n))
	}
	q.body.K = n
	return q
}

// Offset skips the first n rows.
func (q *Query) Offset(n int) *Query {
	if n < 0 {
		q.fail(invalid("offset %d is negative", n))
	}
	q.body.Offset = &n
	return q
}

// Column names the vector column to search, when the table has several.
func (q *Query) Column(name string) *Query {
	q.body.VectorColumn = &name
	return q
}

// DistanceType sets the metric of a vector search (the default is the
// index's, or l2).
func (q *Query) DistanceType(d DistanceType) *Query {
	q.body.DistanceType = optional(string(d))
	return q
}

// Nprobes sets how many IVF partitions a vector search probes.
func (q *Query) Nprobes(n int) *Query {
	q.body.Nprobes = &n
	return q
}

// RefineFactor re-ranks factor × limit candidates with exact distances.
func (q *Query) RefineFactor(factor int) *Query {
	f := int32(factor)
	q.body.RefineFactor = &f
	return q
}

// Ef sets the candidate list size of a search in an HNSW index.
func (q *Query) Ef(ef int) *Query {
	q.body.Ef = &ef
	return q
}

// Prefilter says whether Where applies before the vector search (true, the
// default: the limit counts matching rows) or to its results (false).
func (q *Query) Prefilter(before bool) *Query {
	q.body.Prefilter = &before
	return q
}

// DistanceRange keeps vector results with lower ≤ distance < upper; nil
// leaves that end open.
func (q *Query) DistanceRange(lower, upper *float32) *Query {
	q.body.LowerBound, q.body.UpperBound = lower, upper
	return q
}

// BypassVectorIndex computes exact distances even where an index exists.
func (q *Query) BypassVectorIndex() *Query {
	q.body.BypassVectorIndex = Ptr(true)
	return q
}

// FastSearch searches only rows an index covers.
func (q *Query) FastSearch() *Query {
	q.body.FastSearch = Ptr(true)
	return q
}

// WithRowID adds the column _rowid, each row's stable id.
func (q *Query) WithRowID() *Query {
	q.body.WithRowId = Ptr(true)
	return q
}

// OrderBy sorts the rows of a scan by the keys, in order of priority.
func (q *Query) OrderBy(keys ...SortKey) *Query {
	q.body.OrderBy = append(q.body.OrderBy, keys...)
	return q
}

func (q *Query) fail(err error) {
	if q.err == nil {
		q.err = err
	}
}

// request returns the query's JSON and the table's path, or the first
// error a step recorded.
func (q *Query) request() ([]byte, string, error) {
	if q.err != nil {
		return nil, "", q.err
	}
	path, err := q.t.c.pathID(q.t.id)
	if err != nil {
		return nil, "", err
	}
	body := q.body
	body.Id = &q.t.id
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
	accept := func(_ context.Context, req *http.Request) error {
		req.Header.Set("Accept", mimeArrowStream+", "+mimeArrowFile)
		return nil
	}
	res, err := q.t.c.api.QueryTableWithBody(ctx, path, &gen.QueryTableParams{Delimiter: &q.t.c.delimiter}, "application/json", bytes.NewReader(b), accept)
	if err != nil {
		return nil, err
	}
	if res.StatusCode/100 != 2 {
		defer res.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
		return nil, checkResponse(res, body)
	}
	if strings.HasPrefix(res.Header.Get("Content-Type"), mimeArrowStream) {
		r, err := ipc.NewReader(res.Body)
		if err != nil {
			res.Body.Close()
			return nil, err
		}
		return &streamReader{Reader: r, body: res.Body}, nil
	}
	// An Arrow IPC file, the spec's answer, needs all its bytes.
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, err
	}
	fr, err := ipc.NewFileReader(bytes.NewReader(body))
	if err != nil {
		return nil, err
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
			return nil, err
		}
		rec.Retain()
		batches = append(batches, rec)
	}
	return array.NewRecordReader(fr.Schema(), batches)
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
	b, path, err := q.request()
	if err != nil {
		return "", err
	}
	body, _ := json.Marshal(struct {
		Query   json.RawMessage `json:"query"`
		Verbose bool            `json:"verbose"`
	}{b, verbose})
	resp, err := q.t.c.api.ExplainTableQueryPlanWithBodyWithResponse(ctx, path, &gen.ExplainTableQueryPlanParams{Delimiter: &q.t.c.delimiter},
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

// Analyze runs the query and returns its plan with what each step took
// (time, rows). Returns the errors of Reader.
func (q *Query) Analyze(ctx context.Context) (string, error) {
	b, path, err := q.request()
	if err != nil {
		return "", err
	}
	resp, err := q.t.c.api.AnalyzeTableQueryPlanWithBodyWithResponse(ctx, path, &gen.AnalyzeTableQueryPlanParams{Delimiter: &q.t.c.delimiter},
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
