package mcptools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lancens/lancens/client"
	"github.com/lancens/lancens/gen/apiclient"
	"github.com/lancens/lancens/internal/tableio"
	"github.com/lancens/lancens/store"
)

// Inputs of the tools. The jsonschema tags describe the arguments to the
// agent.

type listNamespacesIn struct {
	Parent    []string `json:"parent,omitempty" jsonschema:"the namespace whose child namespaces to list, as an array of names from the root; omit for the root"`
	PageToken string   `json:"page_token,omitempty" jsonschema:"page_token of the previous answer, to go on"`
	Limit     int      `json:"limit,omitempty" jsonschema:"most names to answer"`
}

type listTablesIn struct {
	Namespace []string `json:"namespace,omitempty" jsonschema:"the namespace whose tables to list, as an array of names from the root; omit for the root"`
	PageToken string   `json:"page_token,omitempty" jsonschema:"page_token of the previous answer, to go on"`
	Limit     int      `json:"limit,omitempty" jsonschema:"most names to answer"`
}

type describeTableIn struct {
	Table   []string `json:"table" jsonschema:"the table: the names of its namespaces, then its own, such as [\"prod\", \"docs\"]"`
	Version *int64   `json:"version,omitempty" jsonschema:"version to describe; the latest when omitted"`
}

// readIn are the arguments every read of rows takes.
type readIn struct {
	Table   []string `json:"table" jsonschema:"the table: the names of its namespaces, then its own, such as [\"prod\", \"docs\"]"`
	Filter  string   `json:"filter,omitempty" jsonschema:"SQL condition the rows meet, such as \"year > 2020 AND lang = 'en'\""`
	Columns []string `json:"columns,omitempty" jsonschema:"columns to answer, in order; all when omitted"`
	Version *int64   `json:"version,omitempty" jsonschema:"version to read; the latest when omitted"`
}

type queryTableIn struct {
	readIn
	Limit  int `json:"limit,omitempty" jsonschema:"most rows to answer (default 10, at most 1000)"`
	Offset int `json:"offset,omitempty" jsonschema:"rows to skip first"`
}

type vectorSearchIn struct {
	readIn
	Vector       []float32 `json:"vector" jsonschema:"the query vector, as many numbers as the vector column holds"`
	Column       string    `json:"column,omitempty" jsonschema:"the vector column to search; needed when the table has several"`
	K            int       `json:"k,omitempty" jsonschema:"how many nearest rows to answer (default 10, at most 1000)"`
	DistanceType string    `json:"distance_type,omitempty" jsonschema:"l2, cosine, dot or hamming; the index's (or l2) when omitted"`
}

type fullTextSearchIn struct {
	readIn
	Query         string   `json:"query" jsonschema:"the words to search for"`
	SearchColumns []string `json:"search_columns,omitempty" jsonschema:"the text columns to search; every column with a full-text index when omitted"`
	K             int      `json:"k,omitempty" jsonschema:"how many best rows to answer (default 10, at most 1000)"`
}

type insertRowsIn struct {
	Table []string         `json:"table" jsonschema:"the table: the names of its namespaces, then its own, such as [\"prod\", \"docs\"]"`
	Rows  []map[string]any `json:"rows" jsonschema:"the rows, one JSON object each, members named after the table's columns (describe the table first); vectors as arrays of numbers, timestamps as RFC 3339 strings"`
}

// maxInsertRows bounds the rows of one insert_rows call.
const maxInsertRows = 10_000

func (t *tools) register(s *mcp.Server) {
	read := &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)}
	mcp.AddTool(s, &mcp.Tool{Name: "list_namespaces", Annotations: read,
		Description: "List the namespaces directly inside a namespace (the root by default)."}, t.listNamespaces)
	mcp.AddTool(s, &mcp.Tool{Name: "list_tables", Annotations: read,
		Description: "List the tables directly inside a namespace (the root by default)."}, t.listTables)
	mcp.AddTool(s, &mcp.Tool{Name: "describe_table", Annotations: read,
		Description: "Describe a table: its columns and their types, its version, location and properties."}, t.describeTable)
	mcp.AddTool(s, &mcp.Tool{Name: "query_table", Annotations: read,
		Description: "Read rows of a table, optionally only those meeting an SQL filter, as JSON objects."}, t.queryTable)
	mcp.AddTool(s, &mcp.Tool{Name: "vector_search", Annotations: read,
		Description: "Find the rows whose vectors are nearest to a query vector (with their _distance), optionally among those meeting an SQL filter."}, t.vectorSearch)
	mcp.AddTool(s, &mcp.Tool{Name: "full_text_search", Annotations: read,
		Description: "Find the rows whose text best matches a query (with their _score), in columns with a full-text index."}, t.fullTextSearch)
	mcp.AddTool(s, &mcp.Tool{Name: "insert_rows", Annotations: &mcp.ToolAnnotations{DestructiveHint: new(false), OpenWorldHint: new(false)},
		Description: "Append rows, given as JSON objects, to a table. Needs a key that may write."}, t.insertRows)
}

func (t *tools) listNamespaces(ctx context.Context, req *mcp.CallToolRequest, in listNamespacesIn) (*mcp.CallToolResult, any, error) {
	const op = "ListNamespaces"
	c, err := t.connect(ctx, req)
	if err != nil {
		return nil, nil, err
	}
	names, next, err := c.ListNamespacesPage(ctx, in.Parent, in.PageToken, in.Limit)
	if err != nil {
		return toolError(op, err), nil, nil
	}
	res, err := jsonResult(map[string]any{"namespaces": nonNil(names), "page_token": next})
	return res, nil, err
}

func (t *tools) listTables(ctx context.Context, req *mcp.CallToolRequest, in listTablesIn) (*mcp.CallToolResult, any, error) {
	const op = "ListTables"
	c, err := t.connect(ctx, req)
	if err != nil {
		return nil, nil, err
	}
	names, next, err := c.ListTablesPage(ctx, in.Namespace, in.PageToken, in.Limit, false)
	if err != nil {
		return toolError(op, err), nil, nil
	}
	res, err := jsonResult(map[string]any{"tables": nonNil(names), "page_token": next})
	return res, nil, err
}

// column describes one column to the agent.
type column struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	Nullable bool   `json:"nullable"`
}

func (t *tools) describeTable(ctx context.Context, req *mcp.CallToolRequest, in describeTableIn) (*mcp.CallToolResult, any, error) {
	const op = "DescribeTable"
	if err := checkTable(in.Table); err != nil {
		return toolError(op, err), nil, nil
	}
	c, err := t.connect(ctx, req)
	if err != nil {
		return nil, nil, err
	}
	d, err := c.DescribeTable(ctx, in.Table, &client.DescribeTableOptions{Version: in.Version, LoadDetailedMetadata: true})
	if err != nil {
		return toolError(op, err), nil, nil
	}
	out := map[string]any{"table": in.Table, "location": d.Location}
	if d.Version != nil {
		out["version"] = *d.Version
	}
	if len(d.Properties) > 0 {
		out["properties"] = d.Properties
	}
	if d.Schema != nil {
		cols := make([]column, d.Schema.NumFields())
		for i, f := range d.Schema.Fields() {
			cols[i] = column{Name: f.Name, Type: tableio.FormatType(f.Type), Nullable: f.Nullable}
		}
		out["columns"] = cols
	}
	res, err := jsonResult(out)
	return res, nil, err
}

func (t *tools) queryTable(ctx context.Context, req *mcp.CallToolRequest, in queryTableIn) (*mcp.CallToolResult, any, error) {
	body := in.request(clampRows(in.Limit))
	if in.Offset > 0 {
		body.Offset = &in.Offset
	}
	return t.query(ctx, req, in.Table, body)
}

func (t *tools) vectorSearch(ctx context.Context, req *mcp.CallToolRequest, in vectorSearchIn) (*mcp.CallToolResult, any, error) {
	if len(in.Vector) == 0 {
		return toolError("QueryTable", store.Errorf(store.CodeInvalidInput, "vector: give the query vector")), nil, nil
	}
	body := in.request(clampRows(in.K))
	body.Vector.SingleVector = &in.Vector
	if in.Column != "" {
		body.VectorColumn = &in.Column
	}
	if in.DistanceType != "" {
		body.DistanceType = &in.DistanceType
	}
	return t.query(ctx, req, in.Table, body)
}

func (t *tools) fullTextSearch(ctx context.Context, req *mcp.CallToolRequest, in fullTextSearchIn) (*mcp.CallToolResult, any, error) {
	if strings.TrimSpace(in.Query) == "" {
		return toolError("QueryTable", store.Errorf(store.CodeInvalidInput, "query: give the words to search for")), nil, nil
	}
	body := in.request(clampRows(in.K))
	body.FullTextQuery = &struct {
		StringQuery     *apiclient.StringFtsQuery     `json:"string_query,omitempty"`
		StructuredQuery *apiclient.StructuredFtsQuery `json:"structured_query,omitempty"`
	}{StringQuery: &apiclient.StringFtsQuery{Query: in.Query}}
	if len(in.SearchColumns) > 0 {
		body.FullTextQuery.StringQuery.Columns = &in.SearchColumns
	}
	return t.query(ctx, req, in.Table, body)
}

// request returns the query body of the common arguments, answering k
// rows.
func (in readIn) request(k int) apiclient.QueryTableRequest {
	body := apiclient.QueryTableRequest{K: k, Version: in.Version}
	body.Vector = &struct {
		MultiVector  *[][]float32 `json:"multi_vector,omitempty"`
		SingleVector *[]float32   `json:"single_vector,omitempty"`
	}{}
	if in.Filter != "" {
		body.Filter = &in.Filter
	}
	if len(in.Columns) > 0 {
		body.Columns = &struct {
			ColumnAliases *map[string]string `json:"column_aliases,omitempty"`
			ColumnNames   *[]string          `json:"column_names,omitempty"`
		}{ColumnNames: &in.Columns}
	}
	return body
}

// query runs a query of table id and answers its rows as the API writes
// them in JSON.
func (t *tools) query(ctx context.Context, req *mcp.CallToolRequest, id []string, body apiclient.QueryTableRequest) (*mcp.CallToolResult, any, error) {
	const op = "QueryTable"
	if err := checkTable(id); err != nil {
		return toolError(op, err), nil, nil
	}
	if body.Vector.SingleVector == nil {
		body.Vector = nil
	}
	path, err := pathID(id)
	if err != nil {
		return toolError(op, err), nil, nil
	}
	c, err := t.connect(ctx, req)
	if err != nil {
		return nil, nil, err
	}
	b, err := json.Marshal(body)
	if err != nil {
		return nil, nil, err
	}
	delim := "$"
	res, err := c.Raw().QueryTableWithBody(ctx, path, &apiclient.QueryTableParams{Delimiter: &delim}, "application/json", bytes.NewReader(b),
		func(_ context.Context, r *http.Request) error {
			r.Header.Set("Accept", "application/json")
			return nil
		})
	if err != nil {
		return nil, nil, err
	}
	defer res.Body.Close()
	answer, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, nil, err
	}
	if res.StatusCode/100 != 2 {
		return toolError(op, apiError(res.StatusCode, answer)), nil, nil
	}
	var rows []json.RawMessage
	if err := json.Unmarshal(answer, &rows); err != nil {
		return nil, nil, fmt.Errorf("the query's answer is not an array of rows: %w", err)
	}
	out, err := jsonResult(map[string]any{"rows": json.RawMessage(answer), "count": len(rows)})
	return out, nil, err
}

func (t *tools) insertRows(ctx context.Context, req *mcp.CallToolRequest, in insertRowsIn) (*mcp.CallToolResult, any, error) {
	const op = "InsertIntoTable"
	if err := checkTable(in.Table); err != nil {
		return toolError(op, err), nil, nil
	}
	if len(in.Rows) == 0 || len(in.Rows) > maxInsertRows {
		return toolError(op, store.Errorf(store.CodeInvalidInput, "rows: give 1 to %d rows", maxInsertRows)), nil, nil
	}
	c, err := t.connect(ctx, req)
	if err != nil {
		return nil, nil, err
	}
	table := c.Table(in.Table...)
	schema, err := table.Schema(ctx)
	if err != nil {
		return toolError("DescribeTable", err), nil, nil
	}
	if err := timesFromStrings(schema, in.Rows); err != nil {
		return toolError(op, err), nil, nil
	}
	w, err := table.Add(ctx, client.Maps(schema, in.Rows))
	if err != nil {
		return toolError(op, err), nil, nil
	}
	res, err := jsonResult(map[string]any{"table": in.Table, "version": w.Version, "inserted": w.Inserted})
	return res, nil, err
}

// timesFromStrings turns the strings given for timestamp and date columns
// (RFC 3339, YYYY-MM-DD) into the time.Time values client.Maps takes.
// Returns InvalidInput (13) for a string that is not a time.
func timesFromStrings(schema *arrow.Schema, rows []map[string]any) error {
	for _, f := range schema.Fields() {
		id := f.Type.ID()
		if id != arrow.TIMESTAMP && id != arrow.DATE32 && id != arrow.DATE64 {
			continue
		}
		for i, row := range rows {
			s, ok := row[f.Name].(string)
			if !ok {
				continue
			}
			layout := time.RFC3339Nano
			if id != arrow.TIMESTAMP {
				layout = time.DateOnly
			}
			tm, err := time.Parse(layout, s)
			if err != nil {
				return store.Errorf(store.CodeInvalidInput, "row %d, column %s: %q is not a time (%s)", i, f.Name, s, layout)
			}
			row[f.Name] = tm
		}
	}
	return nil
}

// pathID writes a table identifier for the path of a request, its names
// joined by "$". Returns InvalidInput (13) for a name holding "$".
func pathID(id []string) (string, error) {
	for _, name := range id {
		if strings.Contains(name, "$") {
			return "", store.Errorf(store.CodeInvalidInput, "table %q: names holding $ cannot be reached through this tool", joinID(id))
		}
	}
	return joinID(id), nil
}

// apiError reads the ErrorResponse of a failed call.
func apiError(status int, body []byte) error {
	var e apiclient.ErrorResponse
	if err := json.Unmarshal(body, &e); err != nil || e.Error == nil {
		return store.Errorf(store.CodeInternal, "the API answered %d", status)
	}
	return store.Errorf(store.Code(e.Code), "%s", *e.Error)
}

func nonNil(names []string) []string {
	if names == nil {
		return []string{}
	}
	return names
}
