package client

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancens/lancens/gen/apiclient"
)

const (
	mimeArrowStream = "application/vnd.apache.arrow.stream"
	// Headers of lancens's answers that the spec does not have: the rows a
	// delete removed, the version a query read.
	headerDeletedRows  = "X-Lancens-Deleted-Rows"
	headerTableVersion = "X-Lancens-Table-Version"
)

// streamBody opens data and returns it as an Arrow IPC stream, produced as
// the request body is sent. Returns an InvalidInput (13) error if data
// cannot be converted to Arrow; should the reader fail later, the request
// fails.
func streamBody(data Data) (io.Reader, error) {
	if data.open == nil {
		return nil, invalid("no rows given: make Data with Structs, Maps, Records or FromReader")
	}
	r, err := data.open()
	if err != nil {
		return nil, err
	}
	pr, pw := io.Pipe()
	go func() {
		pw.CloseWithError(writeStream(pw, r))
	}()
	return pr, nil
}

// CreateTableOptions are the optional parts of CreateTable.
type CreateTableOptions struct {
	// Mode is ModeCreate (the default: fail if it exists), ModeExistOK or
	// ModeOverwrite.
	Mode           Mode
	Properties     map[string]string
	StorageOptions map[string]string
}

// CreatedTable is what CreateTable reports.
type CreatedTable struct {
	Location       string
	Version        int64
	Properties     map[string]string
	StorageOptions map[string]string
	TransactionID  string
}

// CreateTable creates table id, whose rows the server keeps, with the
// schema and rows given (batches may be empty). opts may be nil. Returns
// ErrTableAlreadyExists (with ModeCreate), ErrNamespaceNotFound.
func (c *Client) CreateTable(ctx context.Context, id []string, schema *arrow.Schema, batches []arrow.RecordBatch, opts *CreateTableOptions) (*CreatedTable, error) {
	return c.createTable(ctx, id, Records(schema, batches...), opts)
}

func (c *Client) createTable(ctx context.Context, id []string, data Data, opts *CreateTableOptions) (*CreatedTable, error) {
	path, err := c.pathID(id)
	if err != nil {
		return nil, err
	}
	params := &apiclient.CreateTableParams{Delimiter: &c.delimiter}
	if opts != nil {
		params.Mode = optional(string(opts.Mode))
		if params.Properties, err = jsonParam(opts.Properties); err != nil {
			return nil, err
		}
		if params.StorageOptions, err = jsonParam(opts.StorageOptions); err != nil {
			return nil, err
		}
	}
	body, err := streamBody(data)
	if err != nil {
		return nil, err
	}
	resp, err := c.api.CreateTableWithBodyWithResponse(ctx, path, params, mimeArrowStream, body)
	if err != nil {
		return nil, err
	}
	if err := checkResponse(resp.HTTPResponse, resp.Body); err != nil {
		return nil, err
	}
	r := resp.JSON200
	return &CreatedTable{Location: deref(r.Location), Version: deref(r.Version), Properties: propertiesOf(r.Properties),
		StorageOptions: propertiesOf(r.StorageOptions), TransactionID: deref(r.TransactionId)}, nil
}

func jsonParam(m map[string]string) (*string, error) {
	if m == nil {
		return nil, nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	s := string(b)
	return &s, nil
}

// WriteResult reports a write.
type WriteResult struct {
	Version       int64
	Inserted      int64
	Updated       int64
	Deleted       int64
	TransactionID string
}

// Insert appends rows to table id (mode ModeAppend, or ""), or replaces its
// rows (ModeOverwrite). Returns ErrTableSchemaValidationError when the rows
// do not fit the table's schema.
func (c *Client) Insert(ctx context.Context, id []string, schema *arrow.Schema, batches []arrow.RecordBatch, mode Mode) (*WriteResult, error) {
	return c.insert(ctx, id, Records(schema, batches...), mode)
}

func (c *Client) insert(ctx context.Context, id []string, data Data, mode Mode) (*WriteResult, error) {
	path, err := c.pathID(id)
	if err != nil {
		return nil, err
	}
	body, err := streamBody(data)
	if err != nil {
		return nil, err
	}
	resp, err := c.api.InsertIntoTableWithBodyWithResponse(ctx, path, &apiclient.InsertIntoTableParams{Delimiter: &c.delimiter, Branch: c.branchParam(), Mode: optional(string(mode))},
		mimeArrowStream, body)
	if err != nil {
		return nil, err
	}
	if err := checkResponse(resp.HTTPResponse, resp.Body); err != nil {
		return nil, err
	}
	r := resp.JSON200
	return &WriteResult{Version: deref(r.Version), Inserted: deref(r.NumInsertedRows), TransactionID: deref(r.TransactionId)}, nil
}

// MergeInsertOptions say how MergeInsert matches and applies rows.
type MergeInsertOptions struct {
	// On are the key columns (one or more).
	On                                 []string
	WhenMatchedUpdateAll               bool
	WhenMatchedUpdateAllFilter         string
	WhenNotMatchedInsertAll            bool
	WhenNotMatchedBySourceDelete       bool
	WhenNotMatchedBySourceDeleteFilter string
	// Timeout bounds the merge on the server.
	Timeout time.Duration
	// UseIndex lets the server use an index on the key columns (nil: its
	// default).
	UseIndex *bool
}

// MergeInsert merges rows into table id by key. Returns
// ErrTableColumnNotFound for an unknown key column, ErrInvalidInput when
// several source rows match one target row.
func (c *Client) MergeInsert(ctx context.Context, id []string, schema *arrow.Schema, batches []arrow.RecordBatch, o MergeInsertOptions) (*WriteResult, error) {
	return c.mergeInsert(ctx, id, Records(schema, batches...), o)
}

func (c *Client) mergeInsert(ctx context.Context, id []string, data Data, o MergeInsertOptions) (*WriteResult, error) {
	path, err := c.pathID(id)
	if err != nil {
		return nil, err
	}
	if len(o.On) == 0 {
		return nil, invalid("merge insert needs at least one key column")
	}
	params := &apiclient.MergeInsertIntoTableParams{
		Delimiter: &c.delimiter, Branch: c.branchParam(), On: o.On[0],
		WhenMatchedUpdateAll: &o.WhenMatchedUpdateAll, WhenMatchedUpdateAllFilt: optional(o.WhenMatchedUpdateAllFilter),
		WhenNotMatchedInsertAll: &o.WhenNotMatchedInsertAll, WhenNotMatchedBySourceDelete: &o.WhenNotMatchedBySourceDelete,
		WhenNotMatchedBySourceDeleteFilt: optional(o.WhenNotMatchedBySourceDeleteFilter), UseIndex: o.UseIndex,
	}
	if o.Timeout > 0 {
		params.Timeout = optional(o.Timeout.String())
	}
	// Further key columns repeat the on parameter.
	extraKeys := func(_ context.Context, req *http.Request) error {
		q := req.URL.Query()
		for _, k := range o.On[1:] {
			q.Add("on", k)
		}
		req.URL.RawQuery = q.Encode()
		return nil
	}
	body, err := streamBody(data)
	if err != nil {
		return nil, err
	}
	resp, err := c.api.MergeInsertIntoTableWithBodyWithResponse(ctx, path, params, mimeArrowStream, body, extraKeys)
	if err != nil {
		return nil, err
	}
	if err := checkResponse(resp.HTTPResponse, resp.Body); err != nil {
		return nil, err
	}
	r := resp.JSON200
	return &WriteResult{Version: deref(r.Version), Inserted: deref(r.NumInsertedRows), Updated: deref(r.NumUpdatedRows),
		Deleted: deref(r.NumDeletedRows), TransactionID: deref(r.TransactionId)}, nil
}

// Update sets columns (pairs of column and SQL expression) of the rows
// matching predicate ("" for all). Returns ErrTableColumnNotFound for an
// unknown column, ErrInvalidInput for a malformed expression.
func (c *Client) Update(ctx context.Context, id []string, updates [][2]string, predicate string) (*WriteResult, error) {
	path, err := c.pathID(id)
	if err != nil {
		return nil, err
	}
	body := apiclient.UpdateTableRequest{Id: &id, Branch: c.branchParam(), Predicate: optional(predicate), Updates: make([][]string, len(updates))}
	for i, u := range updates {
		body.Updates[i] = []string{u[0], u[1]}
	}
	resp, err := c.api.UpdateTableWithResponse(ctx, path, &apiclient.UpdateTableParams{Delimiter: &c.delimiter}, body)
	if err != nil {
		return nil, err
	}
	if err := checkResponse(resp.HTTPResponse, resp.Body); err != nil {
		return nil, err
	}
	return &WriteResult{Version: resp.JSON200.Version, Updated: resp.JSON200.UpdatedRows, TransactionID: deref(resp.JSON200.TransactionId)}, nil
}

// Delete deletes the rows of table id matching predicate. Deleted is set
// when the server reports it (lancens does).
func (c *Client) Delete(ctx context.Context, id []string, predicate string) (*WriteResult, error) {
	path, err := c.pathID(id)
	if err != nil {
		return nil, err
	}
	resp, err := c.api.DeleteFromTableWithResponse(ctx, path, &apiclient.DeleteFromTableParams{Delimiter: &c.delimiter},
		apiclient.DeleteFromTableRequest{Id: &id, Branch: c.branchParam(), Predicate: predicate})
	if err != nil {
		return nil, err
	}
	if err := checkResponse(resp.HTTPResponse, resp.Body); err != nil {
		return nil, err
	}
	out := &WriteResult{Version: deref(resp.JSON200.Version), TransactionID: deref(resp.JSON200.TransactionId)}
	out.Deleted, _ = strconv.ParseInt(resp.HTTPResponse.Header.Get(headerDeletedRows), 10, 64)
	return out, nil
}

// CountRows counts the rows of table id matching predicate ("" for all) at
// a version (nil: latest).
func (c *Client) CountRows(ctx context.Context, id []string, predicate string, version *int64) (int64, error) {
	path, err := c.pathID(id)
	if err != nil {
		return 0, err
	}
	resp, err := c.api.CountTableRowsWithResponse(ctx, path, &apiclient.CountTableRowsParams{Delimiter: &c.delimiter},
		apiclient.CountTableRowsRequest{Id: &id, Branch: c.branchParam(), Predicate: optional(predicate), Version: version})
	if err != nil {
		return 0, err
	}
	if err := checkResponse(resp.HTTPResponse, resp.Body); err != nil {
		return 0, err
	}
	if resp.JSON200 == nil {
		return 0, errMissing("count")
	}
	return *resp.JSON200, nil
}

// QueryResult is the Arrow result of a query.
type QueryResult struct {
	Schema  *arrow.Schema
	Batches []arrow.RecordBatch
	// Version is the version of the table the query read, when the server
	// reports it (lancens does, in the header X-Lancens-Table-Version);
	// 0 otherwise.
	Version int64
}

// NumRows returns the number of rows in r.
func (r *QueryResult) NumRows() int64 {
	var n int64
	for _, b := range r.Batches {
		n += b.NumRows()
	}
	return n
}

// Release releases the batches of r.
func (r *QueryResult) Release() {
	for _, b := range r.Batches {
		b.Release()
	}
}

// Query runs query r on table id and returns all its rows. Most callers
// build queries with Table.Search, Table.FullTextSearch and Table.Query
// instead; QueryRequest reaches every member of the API's request. Returns
// the server's error (ErrTableNotFound, ErrTableColumnNotFound for an
// unknown column, ErrInvalidInput for a malformed filter, …), or
// ErrInvalidInput for members of r that exclude each other.
func (c *Client) Query(ctx context.Context, id []string, r QueryRequest) (*QueryResult, error) {
	b, path, err := c.queryRequest(id, r)
	if err != nil {
		return nil, err
	}
	rr, header, err := c.queryReader(ctx, path, b)
	if err != nil {
		return nil, err
	}
	defer rr.Release()
	out := &QueryResult{Schema: rr.Schema()}
	out.Version, _ = strconv.ParseInt(header.Get(headerTableVersion), 10, 64)
	for rr.Next() {
		rec := rr.RecordBatch()
		rec.Retain()
		out.Batches = append(out.Batches, rec)
	}
	if err := rr.Err(); err != nil {
		out.Release()
		return nil, err
	}
	return out, nil
}

// RestoreTable makes the rows and schema of version of table id its new
// latest version and returns the transaction id. Returns
// ErrTableVersionNotFound if there is no such version.
func (c *Client) RestoreTable(ctx context.Context, id []string, version int64) (string, error) {
	path, err := c.pathID(id)
	if err != nil {
		return "", err
	}
	resp, err := c.api.RestoreTableWithResponse(ctx, path, &apiclient.RestoreTableParams{Delimiter: &c.delimiter},
		apiclient.RestoreTableRequest{Id: &id, Branch: c.branchParam(), Version: version})
	if err != nil {
		return "", err
	}
	if err := checkResponse(resp.HTTPResponse, resp.Body); err != nil {
		return "", err
	}
	return deref(resp.JSON200.TransactionId), nil
}

// TableStats are the size statistics of a table.
type TableStats struct {
	NumRows    int64
	TotalBytes int64
	NumIndices int64
	// NumFragments is how many data fragments hold the rows, and
	// NumSmallFragments how many of them are small.
	NumFragments, NumSmallFragments int64
	// FragmentRows summarise the row counts of the fragments.
	FragmentRows FragmentRows
}

// FragmentRows summarise the row counts of a table's fragments.
type FragmentRows struct {
	Min, Max, Mean, P25, P50, P75, P99 int64
}

// TableStats returns the size statistics of table id.
func (c *Client) TableStats(ctx context.Context, id []string) (*TableStats, error) {
	path, err := c.pathID(id)
	if err != nil {
		return nil, err
	}
	resp, err := c.api.GetTableStatsWithResponse(ctx, path, &apiclient.GetTableStatsParams{Delimiter: &c.delimiter}, apiclient.GetTableStatsRequest{Id: &id, Branch: c.branchParam()})
	if err != nil {
		return nil, err
	}
	if err := checkResponse(resp.HTTPResponse, resp.Body); err != nil {
		return nil, err
	}
	r := resp.JSON200
	f := r.FragmentStats
	return &TableStats{
		NumRows: r.NumRows, TotalBytes: r.TotalBytes, NumIndices: r.NumIndices,
		NumFragments: f.NumFragments, NumSmallFragments: f.NumSmallFragments,
		FragmentRows: FragmentRows{Min: f.Lengths.Min, Max: f.Lengths.Max, Mean: f.Lengths.Mean, P25: f.Lengths.P25,
			P50: f.Lengths.P50, P75: f.Lengths.P75, P99: f.Lengths.P99},
	}, nil
}
