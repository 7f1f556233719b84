package client

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/lancens/lancens/gen"
)

const mimeArrowStream = "application/vnd.apache.arrow.stream"

// streamBody encodes a schema and record batches as an Arrow IPC stream,
// produced as the request body is sent.
func streamBody(schema *arrow.Schema, batches []arrow.RecordBatch) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		w := ipc.NewWriter(pw, ipc.WithSchema(schema))
		for _, b := range batches {
			if err := w.Write(b); err != nil {
				pw.CloseWithError(err)
				return
			}
		}
		pw.CloseWithError(w.Close())
	}()
	return pr
}

// CreateTableOptions are the optional parts of CreateTable.
type CreateTableOptions struct {
	// Mode is "Create" (default), "ExistOk" or "Overwrite".
	Mode           string
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

// CreateTable creates table id with the schema and rows given (batches may
// be empty). opts may be nil.
func (c *Client) CreateTable(ctx context.Context, id []string, schema *arrow.Schema, batches []arrow.RecordBatch, opts *CreateTableOptions) (*CreatedTable, error) {
	path, err := c.pathID(id)
	if err != nil {
		return nil, err
	}
	params := &gen.CreateTableParams{Delimiter: &c.delimiter}
	if opts != nil {
		params.Mode = optional(opts.Mode)
		if params.Properties, err = jsonParam(opts.Properties); err != nil {
			return nil, err
		}
		if params.StorageOptions, err = jsonParam(opts.StorageOptions); err != nil {
			return nil, err
		}
	}
	resp, err := c.api.CreateTableWithBodyWithResponse(ctx, path, params, mimeArrowStream, streamBody(schema, batches))
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

// Insert appends rows to table id, or with mode "overwrite" replaces them.
func (c *Client) Insert(ctx context.Context, id []string, schema *arrow.Schema, batches []arrow.RecordBatch, mode string) (*WriteResult, error) {
	path, err := c.pathID(id)
	if err != nil {
		return nil, err
	}
	resp, err := c.api.InsertIntoTableWithBodyWithResponse(ctx, path, &gen.InsertIntoTableParams{Delimiter: &c.delimiter, Mode: optional(mode)},
		mimeArrowStream, streamBody(schema, batches))
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
	Timeout                            time.Duration
}

// MergeInsert merges rows into table id by key.
func (c *Client) MergeInsert(ctx context.Context, id []string, schema *arrow.Schema, batches []arrow.RecordBatch, o MergeInsertOptions) (*WriteResult, error) {
	path, err := c.pathID(id)
	if err != nil {
		return nil, err
	}
	if len(o.On) == 0 {
		return nil, ErrInvalidInput
	}
	params := &gen.MergeInsertIntoTableParams{
		Delimiter: &c.delimiter, On: o.On[0],
		WhenMatchedUpdateAll: &o.WhenMatchedUpdateAll, WhenMatchedUpdateAllFilt: optional(o.WhenMatchedUpdateAllFilter),
		WhenNotMatchedInsertAll: &o.WhenNotMatchedInsertAll, WhenNotMatchedBySourceDelete: &o.WhenNotMatchedBySourceDelete,
		WhenNotMatchedBySourceDeleteFilt: optional(o.WhenNotMatchedBySourceDeleteFilter),
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
	resp, err := c.api.MergeInsertIntoTableWithBodyWithResponse(ctx, path, params, mimeArrowStream, streamBody(schema, batches), extraKeys)
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
// matching predicate ("" for all).
func (c *Client) Update(ctx context.Context, id []string, updates [][2]string, predicate string) (*WriteResult, error) {
	path, err := c.pathID(id)
	if err != nil {
		return nil, err
	}
	body := gen.UpdateTableRequest{Id: &id, Predicate: optional(predicate), Updates: make([][]string, len(updates))}
	for i, u := range updates {
		body.Updates[i] = []string{u[0], u[1]}
	}
	resp, err := c.api.UpdateTableWithResponse(ctx, path, &gen.UpdateTableParams{Delimiter: &c.delimiter}, body)
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
	resp, err := c.api.DeleteFromTableWithResponse(ctx, path, &gen.DeleteFromTableParams{Delimiter: &c.delimiter},
		gen.DeleteFromTableRequest{Id: &id, Predicate: predicate})
	if err != nil {
		return nil, err
	}
	if err := checkResponse(resp.HTTPResponse, resp.Body); err != nil {
		return nil, err
	}
	out := &WriteResult{Version: deref(resp.JSON200.Version), TransactionID: deref(resp.JSON200.TransactionId)}
	out.Deleted, _ = strconv.ParseInt(resp.HTTPResponse.Header.Get("X-Lancens-Deleted-Rows"), 10, 64)
	return out, nil
}

// CountRows counts the rows of table id matching predicate ("" for all) at
// a version (nil: latest).
func (c *Client) CountRows(ctx context.Context, id []string, predicate string, version *int64) (int64, error) {
	path, err := c.pathID(id)
	if err != nil {
		return 0, err
	}
	resp, err := c.api.CountTableRowsWithResponse(ctx, path, &gen.CountTableRowsParams{Delimiter: &c.delimiter},
		gen.CountTableRowsRequest{Id: &id, Predicate: optional(predicate), Version: version})
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
}

// NumRows returns the number of rows in r.
func (r *QueryResult) NumRows() int64 {
	var n int64
	for _, b := range r.Batches {
		n += b.NumRows()
	}
	return n
}

// Query runs a query on table id and returns its rows.
func (c *Client) Query(ctx context.Context, id []string, q gen.QueryTableRequest) (*QueryResult, error) {
	path, err := c.pathID(id)
	if err != nil {
		return nil, err
	}
	q.Id = &id
	resp, err := c.api.QueryTableWithResponse(ctx, path, &gen.QueryTableParams{Delimiter: &c.delimiter}, q)
	if err != nil {
		return nil, err
	}
	if err := checkResponse(resp.HTTPResponse, resp.Body); err != nil {
		return nil, err
	}
	r, err := ipc.NewFileReader(bytes.NewReader(resp.Body))
	if err != nil {
		return nil, err
	}
	defer r.Close()
	out := &QueryResult{Schema: r.Schema()}
	for i := 0; i < r.NumRecords(); i++ {
		rec, err := r.RecordBatch(i)
		if err != nil {
			return nil, err
		}
		rec.Retain()
		out.Batches = append(out.Batches, rec)
	}
	return out, nil
}
