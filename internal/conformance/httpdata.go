package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancens/lancens/client"
	"github.com/lancens/lancens/store"
)

// HTTPTarget runs the whole suite over HTTP through the client package:
// each store method is answered by the matching call of client.Client
// (ClientTarget for the catalog), so every result and error the suite
// checks went through the client.
//
// A few results have no field in the API's answers and are read from
// elsewhere: the version a restore made (from a describe after it), the
// rows a delete removed and the version a query read (from lancens'
// X-Lancens-* headers, which the client reads, when present; else left
// zero). Queued work (Backfill, BuildIndex) is the server's own business
// and answers Unsupported (0). Prewarming an index is a route of the
// LanceDB dialect the client does not have, sent as a plain request.
type HTTPTarget struct {
	ClientTarget
	// base and doer send the requests of routes beyond the spec.
	base string
	doer Doer
}

var (
	_ DataTarget         = HTTPTarget{}
	_ store.BranchedData = HTTPTarget{}
)

// Doer sends one HTTP request: an *http.Client, or a wrapper that checks
// or records what passes (see internal/contract).
type Doer interface {
	Do(*http.Request) (*http.Response, error)
}

// NewHTTPTarget returns an HTTPTarget for the server at baseURL that sends
// every request through doer (nil: http.DefaultClient). It returns an
// error if baseURL is not a URL the client accepts.
func NewHTTPTarget(baseURL string, doer Doer) (HTTPTarget, error) {
	if doer == nil {
		doer = http.DefaultClient
	}
	// The suite checks the server's own answers: the client must neither
	// retry nor hide them.
	c, err := client.New(baseURL, client.WithHTTPClient(&http.Client{Transport: doerTransport{doer}}), client.WithRetry(client.RetryPolicy{}))
	if err != nil {
		return HTTPTarget{}, err
	}
	return HTTPTarget{ClientTarget: ClientTarget{C: c}, base: strings.TrimSuffix(baseURL, "/"), doer: doer}, nil
}

// doerTransport sends a request through a doer, as the http.RoundTripper
// of the client's *http.Client.
type doerTransport struct{ doer Doer }

func (d doerTransport) RoundTrip(req *http.Request) (*http.Response, error) { return d.doer.Do(req) }

// OnBranch implements store.BranchedData over HTTP: the same calls, on
// branch of each table (client.Client.OnBranch). Backfills follow main
// whatever the branch, as the contract says.
func (h HTTPTarget) OnBranch(branch string) store.ManagedData {
	h.ClientTarget = ClientTarget{C: h.C.OnBranch(branch)}
	return h
}

// writeResult returns what a write through the client reports.
func writeResult(r *client.WriteResult) store.WriteResult {
	return store.WriteResult{Version: r.Version, Inserted: r.Inserted, Updated: r.Updated, Deleted: r.Deleted, TransactionID: r.TransactionID}
}

// drain reads every batch of d's stream, in order, for a client call that
// takes them all; release gives them back once the call is done.
func drain(d store.Data) (batches []arrow.RecordBatch, release func(), err error) {
	release = func() {
		for _, b := range batches {
			b.Release()
		}
	}
	for d.Batches != nil {
		b, err := d.Batches.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			release()
			return nil, func() {}, err
		}
		batches = append(batches, b)
	}
	return batches, release, nil
}

// CreateTable implements store.ManagedData over HTTP.
func (h HTTPTarget) CreateTable(ctx context.Context, id []string, nt store.NewTable) (*store.Table, store.WriteResult, error) {
	batches, release, err := drain(nt.Data)
	if err != nil {
		return nil, store.WriteResult{}, err
	}
	defer release()
	created, err := h.C.CreateTable(ctx, id, nt.Data.Schema, batches, &client.CreateTableOptions{
		Mode: client.Mode(nt.Mode.String()), Properties: nt.Properties, StorageOptions: nt.StorageOptions})
	if err != nil {
		return nil, store.WriteResult{}, storeError(err)
	}
	t := &store.Table{ID: id, Location: created.Location, Properties: created.Properties}
	return t, store.WriteResult{Version: created.Version, TransactionID: created.TransactionID}, nil
}

// Insert implements store.ManagedData over HTTP.
func (h HTTPTarget) Insert(ctx context.Context, id []string, mode store.InsertMode, d store.Data) (store.WriteResult, error) {
	m := client.ModeAppend
	if mode == store.InsertOverwrite {
		m = client.ModeOverwrite
	}
	batches, release, err := drain(d)
	if err != nil {
		return store.WriteResult{}, err
	}
	defer release()
	res, err := h.C.Insert(ctx, id, d.Schema, batches, m)
	if err != nil {
		return store.WriteResult{}, storeError(err)
	}
	return writeResult(res), nil
}

// MergeInsert implements store.ManagedData over HTTP.
func (h HTTPTarget) MergeInsert(ctx context.Context, id []string, m store.Merge) (store.WriteResult, error) {
	batches, release, err := drain(m.Data)
	if err != nil {
		return store.WriteResult{}, err
	}
	defer release()
	res, err := h.C.MergeInsert(ctx, id, m.Data.Schema, batches, client.MergeInsertOptions{
		On: m.On, WhenMatchedUpdateAll: m.WhenMatchedUpdateAll, WhenMatchedUpdateAllFilter: m.WhenMatchedUpdateFilter,
		WhenNotMatchedInsertAll: m.WhenNotMatchedInsertAll, WhenNotMatchedBySourceDelete: m.WhenNotMatchedBySourceDelete,
		WhenNotMatchedBySourceDeleteFilter: m.WhenNotMatchedBySourceDeleteFilter,
	})
	if err != nil {
		return store.WriteResult{}, storeError(err)
	}
	return writeResult(res), nil
}

// Update implements store.ManagedData over HTTP.
func (h HTTPTarget) Update(ctx context.Context, id []string, updates []store.ColumnUpdate, predicate string) (store.WriteResult, error) {
	pairs := make([][2]string, len(updates))
	for i, u := range updates {
		pairs[i] = [2]string{u.Path, u.Expr}
	}
	res, err := h.C.Update(ctx, id, pairs, predicate)
	if err != nil {
		return store.WriteResult{}, storeError(err)
	}
	return writeResult(res), nil
}

// Delete implements store.ManagedData over HTTP.
func (h HTTPTarget) Delete(ctx context.Context, id []string, predicate string) (store.WriteResult, error) {
	res, err := h.C.Delete(ctx, id, predicate)
	if err != nil {
		return store.WriteResult{}, storeError(err)
	}
	return writeResult(res), nil
}

// CountRows implements store.ManagedData over HTTP; the version counted
// is the one asked for (0 for the latest, which the answer does not name).
func (h HTTPTarget) CountRows(ctx context.Context, id []string, version *int64, predicate string) (int64, int64, error) {
	n, err := h.C.CountRows(ctx, id, predicate, version)
	if err != nil {
		return 0, 0, storeError(err)
	}
	var counted int64
	if version != nil {
		counted = *version
	}
	return n, counted, nil
}

// queryRequest renders a store query as the client's request. Returns
// InvalidInput (13) for a single-vector search without exactly one vector.
func queryRequest(q store.Query) (client.QueryRequest, error) {
	r := client.QueryRequest{Version: q.Version, Filter: q.Filter, K: int(q.Limit), Offset: int(q.Offset), WithRowID: q.WithRowID,
		Columns: q.Projection.Columns}
	for _, a := range q.Projection.Aliases {
		r.Aliases = append(r.Aliases, client.ColumnAlias{Name: a.Name, Expr: a.Expr})
	}
	for _, k := range q.OrderBy {
		r.OrderBy = append(r.OrderBy, client.SortKey{Column: k.Column, Ascending: !k.Descending, NullsFirst: k.NullsFirst})
	}
	if v := q.Vector; v != nil {
		r.VectorColumn, r.DistanceType = v.Column, client.DistanceType(v.Metric)
		r.Nprobes, r.Ef, r.RefineFactor = v.Nprobes, v.Ef, v.RefineFactor
		r.FastSearch, r.BypassVectorIndex = v.FastSearch, v.BypassIndex
		r.LowerBound, r.UpperBound = v.LowerBound, v.UpperBound
		if v.Postfilter {
			r.Prefilter = new(bool)
		}
		switch {
		case v.Multi:
			r.Vectors = v.Vectors
		case len(v.Vectors) == 1:
			r.Vector = v.Vectors[0]
		default:
			return r, store.Errorf(store.CodeInvalidInput, "a search for one vector has %d", len(v.Vectors))
		}
	}
	if ts := q.Text; ts != nil {
		if m := ts.Query.Match; m != nil && m.Column == "" && m.Boost == 0 && m.Fuzziness == 0 && m.Operator == "" && m.PrefixLength == 0 {
			r.Text, r.TextColumns = m.Terms, ts.Columns
		} else {
			r.TextQuery = ftsQuery(ts.Query)
		}
	}
	return r, nil
}

func matchQuery(m store.FtsMatch) client.MatchQuery {
	return client.MatchQuery{Terms: m.Terms, Column: m.Column, Boost: m.Boost, Fuzziness: m.Fuzziness, MaxExpansions: m.MaxExpansions,
		Operator: m.Operator, PrefixLength: m.PrefixLength}
}

// ftsQuery renders a structured full-text query; an empty one is nil,
// which the client sends as an empty node.
func ftsQuery(q store.FtsQuery) client.FTSQuery {
	list := func(qs []store.FtsQuery) []client.FTSQuery {
		out := make([]client.FTSQuery, len(qs))
		for i, sub := range qs {
			out[i] = ftsQuery(sub)
		}
		return out
	}
	switch {
	case q.Match != nil:
		return matchQuery(*q.Match)
	case q.Phrase != nil:
		return client.PhraseQuery{Terms: q.Phrase.Terms, Column: q.Phrase.Column, Slop: q.Phrase.Slop}
	case q.MultiMatch != nil:
		mm := client.MultiMatchQuery{}
		for _, m := range q.MultiMatch.Matches {
			mm.Queries = append(mm.Queries, matchQuery(m))
		}
		return mm
	case q.Boost != nil:
		return client.BoostQuery{Positive: ftsQuery(q.Boost.Positive), Negative: ftsQuery(q.Boost.Negative), NegativeBoost: q.Boost.NegativeBoost}
	case q.Boolean != nil:
		return client.BooleanQuery{Must: list(q.Boolean.Must), Should: list(q.Boolean.Should), MustNot: list(q.Boolean.MustNot)}
	}
	return nil
}

// Query implements store.ManagedData over HTTP.
func (h HTTPTarget) Query(ctx context.Context, id []string, q store.Query) (*store.Result, error) {
	req, err := queryRequest(q)
	if err != nil {
		return nil, err
	}
	res, err := h.C.Query(ctx, id, req)
	if err != nil {
		return nil, storeError(err)
	}
	return &store.Result{Schema: res.Schema, Batches: res.Batches, Version: res.Version}, nil
}

// ExplainQuery implements store.ManagedData over HTTP.
func (h HTTPTarget) ExplainQuery(ctx context.Context, id []string, q store.Query, analyze bool) (string, error) {
	req, err := queryRequest(q)
	if err != nil {
		return "", err
	}
	if analyze {
		return wrap1(h.C.AnalyzeQuery(ctx, id, req))
	}
	return wrap1(h.C.ExplainQuery(ctx, id, req, false))
}

// latestVersion reads the latest version of a managed table from describe.
func (h HTTPTarget) latestVersion(ctx context.Context, id []string) (int64, error) {
	d, err := h.C.DescribeTable(ctx, id, nil)
	if err != nil {
		return 0, storeError(err)
	}
	if d.Version == nil {
		return 0, nil
	}
	return *d.Version, nil
}

// Restore implements store.ManagedData over HTTP.
func (h HTTPTarget) Restore(ctx context.Context, id []string, version int64) (store.WriteResult, error) {
	txID, err := h.C.RestoreTable(ctx, id, version)
	if err != nil {
		return store.WriteResult{}, storeError(err)
	}
	v, err := h.latestVersion(ctx, id)
	return store.WriteResult{Version: v, TransactionID: txID}, err
}

// Describe implements store.ManagedData over HTTP: version and schema from
// describe, the row count from count_rows.
func (h HTTPTarget) Describe(ctx context.Context, id []string, version *int64) (*store.TableData, error) {
	d, err := h.C.DescribeTable(ctx, id, &client.DescribeTableOptions{Version: version, LoadDetailedMetadata: true})
	if err != nil {
		return nil, storeError(err)
	}
	if d.Schema == nil || d.Version == nil {
		return nil, store.Errorf(store.CodeInvalidTableState, "describe of table %q reported no schema or version", id)
	}
	out := &store.TableData{Version: *d.Version, Schema: d.Schema}
	if d.Stats != nil {
		out.Deleted, out.Fragments = d.Stats.NumDeletedRows, d.Stats.NumFragments
	}
	out.NumRows, _, err = h.CountRows(ctx, id, d.Version, "")
	return out, err
}

// Stats implements store.ManagedData over HTTP; fragment sizes are not
// reported.
func (h HTTPTarget) Stats(ctx context.Context, id []string) (*store.TableStats, error) {
	s, err := h.C.TableStats(ctx, id)
	if err != nil {
		return nil, storeError(err)
	}
	return &store.TableStats{NumRows: s.NumRows, TotalBytes: s.TotalBytes, NumIndices: s.NumIndices}, nil
}

// AddColumns implements store.ManagedData over HTTP.
func (h HTTPTarget) AddColumns(ctx context.Context, id []string, cols []store.NewColumn) (store.WriteResult, error) {
	add := make([]client.NewColumn, len(cols))
	for i, c := range cols {
		add[i] = client.NewColumn{Name: c.Name, Expression: c.Expr, Computed: c.Computed}
	}
	v, err := h.C.AddColumns(ctx, id, add...)
	return store.WriteResult{Version: v}, storeError(err)
}

// QueueBackfill implements store.ManagedData over HTTP, on main whatever
// the target's branch.
func (h HTTPTarget) QueueBackfill(ctx context.Context, id []string, column, where string) (string, error) {
	return wrap1(h.C.OnBranch("").BackfillColumn(ctx, id, column, where))
}

// Backfill is the server's own work: Unsupported (0) over HTTP.
func (h HTTPTarget) Backfill(context.Context, store.BackfillColumn) (store.WriteResult, error) {
	return store.WriteResult{}, store.Errorf(store.CodeUnsupported, "backfills run inside the server")
}

// AlterColumns implements store.ManagedData over HTTP.
func (h HTTPTarget) AlterColumns(ctx context.Context, id []string, alts []store.ColumnAlteration) (store.WriteResult, error) {
	changes := make([]client.ColumnAlteration, len(alts))
	for i, a := range alts {
		changes[i] = client.ColumnAlteration{Path: a.Path, Nullable: a.Nullable, DataType: a.Type}
		if a.Rename != nil {
			changes[i].Rename = *a.Rename
		}
	}
	v, err := h.C.AlterColumns(ctx, id, changes...)
	return store.WriteResult{Version: v}, storeError(err)
}

// DropColumns implements store.ManagedData over HTTP.
func (h HTTPTarget) DropColumns(ctx context.Context, id []string, paths []string) (store.WriteResult, error) {
	v, err := h.C.DropColumns(ctx, id, paths...)
	return store.WriteResult{Version: v}, storeError(err)
}

// UpdateFieldMetadata implements store.ManagedData over HTTP.
func (h HTTPTarget) UpdateFieldMetadata(ctx context.Context, id []string, updates []store.FieldMetadataUpdate) (store.WriteResult, map[string]map[string]string, error) {
	changes := make([]client.FieldMetadataUpdate, len(updates))
	for i, u := range updates {
		changes[i] = client.FieldMetadataUpdate{Path: u.Path, Set: u.Metadata, Replace: u.Replace}
	}
	v, fields, err := h.C.UpdateFieldMetadata(ctx, id, changes...)
	return store.WriteResult{Version: v}, fields, storeError(err)
}

// UpdateSchemaMetadata implements store.ManagedData over HTTP; the answer
// carries no version, so the result reports none.
func (h HTTPTarget) UpdateSchemaMetadata(ctx context.Context, id []string, set map[string]string) (store.WriteResult, map[string]string, error) {
	md, err := h.C.UpdateSchemaMetadata(ctx, id, set)
	return store.WriteResult{}, md, storeError(err)
}

// indexConfig returns the client's form of an index spec, and whether it
// is a scalar index (built through create_scalar_index). Returns
// Unsupported (0) for a type the client has no config for.
func indexConfig(spec store.IndexSpec) (client.IndexConfig, bool, error) {
	v, d := spec.Vector, client.DistanceType(spec.Metric)
	switch strings.ToUpper(spec.Type) {
	case store.IndexBTree:
		return client.BTree{}, true, nil
	case store.IndexBitmap:
		return client.Bitmap{}, true, nil
	case store.IndexLabelList:
		return client.LabelList{}, true, nil
	case store.IndexIVFFlat:
		return client.IVFFlat{DistanceType: d, NumPartitions: v.NumPartitions, TargetPartitionSize: v.TargetPartitionSize,
			SampleRate: v.SampleRate, MaxIterations: v.MaxIterations}, false, nil
	case store.IndexIVFPQ:
		return client.IVFPQ{DistanceType: d, NumPartitions: v.NumPartitions, TargetPartitionSize: v.TargetPartitionSize,
			NumSubVectors: v.NumSubVectors, NumBits: v.NumBits, SampleRate: v.SampleRate, MaxIterations: v.MaxIterations}, false, nil
	case store.IndexIVFSQ:
		return client.IVFSQ{DistanceType: d, NumPartitions: v.NumPartitions, TargetPartitionSize: v.TargetPartitionSize,
			SampleRate: v.SampleRate, MaxIterations: v.MaxIterations}, false, nil
	case store.IndexIVFHNSWSQ:
		return client.IVFHNSWSQ{DistanceType: d, NumPartitions: v.NumPartitions, TargetPartitionSize: v.TargetPartitionSize,
			SampleRate: v.SampleRate, MaxIterations: v.MaxIterations, M: v.M, EfConstruction: v.EfConstruction}, false, nil
	case store.IndexIVFHNSWPQ:
		return client.IVFHNSWPQ{DistanceType: d, NumPartitions: v.NumPartitions, TargetPartitionSize: v.TargetPartitionSize,
			NumSubVectors: v.NumSubVectors, NumBits: v.NumBits, SampleRate: v.SampleRate, MaxIterations: v.MaxIterations,
			M: v.M, EfConstruction: v.EfConstruction}, false, nil
	case store.IndexInverted, string(client.IndexFTS):
		x := spec.Text
		return client.FTS{WithPosition: x.WithPosition, BaseTokenizer: x.BaseTokenizer, Language: x.Language, MaxTokenLength: x.MaxTokenLength,
			LowerCase: x.LowerCase, Stem: x.Stem, RemoveStopWords: x.RemoveStopWords, ASCIIFolding: x.ASCIIFolding}, false, nil
	}
	return nil, false, store.Errorf(store.CodeUnsupported, "the client has no index type %q", spec.Type)
}

// CreateIndex implements store.Indexes over HTTP: scalar index types go to
// create_scalar_index, the others to create_index.
func (h HTTPTarget) CreateIndex(ctx context.Context, id []string, spec store.IndexSpec) (string, error) {
	cfg, scalar, err := indexConfig(spec)
	if err != nil {
		return "", err
	}
	opts := &client.IndexOptions{Name: spec.Name}
	if scalar {
		return wrap1(h.C.CreateScalarIndex(ctx, id, spec.Column, cfg.(client.ScalarIndexConfig), opts))
	}
	return wrap1(h.C.CreateIndex(ctx, id, spec.Column, cfg, opts))
}

// BuildIndex is the server's own work: Unsupported (0) over HTTP.
func (h HTTPTarget) BuildIndex(context.Context, store.BuildIndex) error {
	return store.Errorf(store.CodeUnsupported, "index builds run inside the server")
}

func indexInfo(ix client.Index) store.IndexInfo {
	return store.IndexInfo{Name: ix.Name, UUID: ix.UUID, Columns: ix.Columns, Status: strings.ToUpper(ix.Status), Type: string(ix.Type),
		NumIndexedRows: ix.NumIndexedRows, NumUnindexedRows: ix.NumUnindexedRows, SizeBytes: ix.SizeBytes, CreatedAt: ix.CreatedAt,
		Details: ix.Details}
}

// ListIndices implements store.Indexes over HTTP.
func (h HTTPTarget) ListIndices(ctx context.Context, id []string, version *int64, page store.Page) ([]store.IndexInfo, string, error) {
	list, next, err := h.C.ListIndicesPage(ctx, id, version, page.Token, page.Limit)
	if err != nil {
		return nil, "", storeError(err)
	}
	out := make([]store.IndexInfo, len(list))
	for i, ix := range list {
		out[i] = indexInfo(ix)
	}
	return out, next, nil
}

// DescribeIndex implements store.Indexes over HTTP: the index's entry in
// the listing, with the counts and metric of its stats.
func (h HTTPTarget) DescribeIndex(ctx context.Context, id []string, name string, version *int64) (*store.IndexInfo, error) {
	stats, err := h.C.IndexStats(ctx, id, name, version)
	if err != nil {
		return nil, storeError(err)
	}
	info := &store.IndexInfo{Name: name}
	for ix, err := range h.C.ListIndices(ctx, id, version) {
		if err != nil {
			return nil, storeError(err)
		}
		if ix.Name == name {
			*info = indexInfo(ix)
		}
	}
	info.Type = string(stats.Type)
	info.Metric = strings.ToLower(string(stats.DistanceType))
	info.NumIndexedRows, info.NumUnindexedRows = stats.NumIndexedRows, stats.NumUnindexedRows
	return info, nil
}

// DropIndex implements store.Indexes over HTTP.
func (h HTTPTarget) DropIndex(ctx context.Context, id []string, name string) (string, error) {
	return wrap1(h.C.DropIndex(ctx, id, name))
}

// PrewarmIndex implements store.Indexes over the LanceDB remote dialect's
// POST /v1/table/{id}/index/{name}/prewarm, which the spec (and so the
// client) does not have: a server without it answers 404 code 0
// (Unsupported), a gap.
func (h HTTPTarget) PrewarmIndex(ctx context.Context, id []string, name string) error {
	escape := func(s string) string { return strings.ReplaceAll(url.PathEscape(s), "+", "%2B") }
	u := h.base + "/v1/table/" + escape(strings.Join(id, "$")) + "/index/" + escape(name) + "/prewarm"
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
	return httpError(res, body)
}

// httpError returns nil for a 2xx answer and otherwise a *store.Error with
// the answer's Lance code; a body that is no ErrorResponse is Internal (18).
func httpError(hr *http.Response, body []byte) error {
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
