// Package mcptools offers the tables of a Lance Namespace REST API to AI
// agents as tools of the Model Context Protocol (MCP), over its streamable
// HTTP transport: list namespaces and tables, describe a table, query it
// with a filter, search it by vector or full text, and insert rows.
//
// Each tool performs one operation of the API (Operations names it), and
// performs it by calling the API itself, in process, with the credentials
// of the MCP request: an x-api-key or Authorization header is passed on as
// it came. Authentication, the access decision, validation, limits, logs
// and metrics are therefore those of the REST route, and a tool is allowed
// exactly when its operation is. insert_rows first describes the table, to
// turn the JSON rows into Arrow of the table's schema.
//
// The transport is stateless and answers JSON (no server-sent events): each
// POST carries one JSON-RPC message and gets its answer, so the endpoint
// keeps no sessions and any replica can serve any request. A tool that
// fails answers a tool error (isError) whose structured content holds the
// Lance error code and message of the API's answer.
package mcptools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lancens/lancens/client"
	"github.com/lancens/lancens/store"
)

// Operations maps each tool to the operation of the API it performs (the
// spec's operationId).
var Operations = map[string]string{
	"list_namespaces":  "ListNamespaces",
	"list_tables":      "ListTables",
	"describe_table":   "DescribeTable",
	"query_table":      "QueryTable",
	"vector_search":    "QueryTable",
	"full_text_search": "QueryTable",
	"insert_rows":      "InsertIntoTable",
}

// Config configures the MCP endpoint.
type Config struct {
	// API serves the REST API the tools call, in process. Required.
	API http.Handler
	// Version is the server's version, reported to clients.
	Version string
	// Logger receives the transport's errors. Default: discard.
	Logger *slog.Logger
	// MaxBodyBytes bounds an MCP request's body. Default 32 MiB.
	MaxBodyBytes int64
}

// Bounds of the tools' answers.
const (
	defaultRows = 10
	maxRows     = 1000
)

// New returns the handler of the MCP endpoint. It answers POST only; its
// refusals outside JSON-RPC (a wrong content type or Accept header, an
// oversized body) are plain text, with the status the transport gives
// them.
func New(cfg Config) http.Handler {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = 32 << 20
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "lancens", Title: "lancens: Lance tables", Version: cfg.Version},
		&mcp.ServerOptions{Instructions: instructions, Logger: cfg.Logger})
	t := &tools{api: cfg.API}
	t.register(srv)
	// The transport's own check of Host headers on loopback listeners is
	// off: it would refuse every request a reverse proxy passes to a
	// server on 127.0.0.1, and the API's requests face the server's
	// checks of credentials (and Host, Origin) alike, /mcp included.
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, Logger: cfg.Logger, MaxRequestBodyBytes: cfg.MaxBodyBytes,
			DisableLocalhostProtection: true})
}

const instructions = `Tables of a Lance database (LanceDB). Identifiers are arrays of names from the root: ["prod", "docs"] is table docs in namespace prod; [] is the root namespace. Filters are SQL conditions (Lance's DataFusion dialect), such as "year > 2020 AND lang = 'en'". Describe a table to learn its columns before querying it.`

// tools holds what the tool handlers share.
type tools struct {
	api http.Handler
}

// connect returns a client that calls the API in process with the
// credentials (and Host, see WithHost) of the MCP request.
func (t *tools) connect(ctx context.Context, req *mcp.CallToolRequest) (*client.Client, error) {
	var opts []client.Option
	if h := req.Extra; h != nil && h.Header != nil {
		for _, name := range []string{"X-Api-Key", "Authorization"} {
			if v := h.Header.Get(name); v != "" {
				opts = append(opts, client.WithHeader(name, v))
			}
		}
		if id := h.Header.Get("X-Request-Id"); id != "" && len(id) < 150 {
			opts = append(opts, client.WithHeader("X-Request-Id", id+"/"+req.Params.Name))
		}
	}
	opts = append(opts, client.WithHTTPClient(&http.Client{Transport: inProcess{t.api}}), client.WithRetry(client.RetryPolicy{}))
	host, _ := ctx.Value(hostKey{}).(string)
	if host == "" {
		host = "lancens.internal"
	}
	return client.New("http://"+host, opts...)
}

type hostKey struct{}

// WithHost returns a context whose MCP requests' tools call the API with
// Host host: the MCP request's own, so that the API's checks of Host
// headers treat both alike.
func WithHost(ctx context.Context, host string) context.Context {
	return context.WithValue(ctx, hostKey{}, host)
}

// inProcess serves a client's requests with an http.Handler, without a
// network.
type inProcess struct{ h http.Handler }

func (p inProcess) RoundTrip(r *http.Request) (res *http.Response, err error) {
	defer func() {
		// The API ends a request whose client went away without an
		// answer, by this panic.
		if v := recover(); v != nil {
			if v != http.ErrAbortHandler {
				panic(v)
			}
			res, err = nil, r.Context().Err()
			if err == nil {
				err = errors.New("the API abandoned the request")
			}
		}
	}()
	if r.Body == nil {
		r.Body = http.NoBody
	}
	r.RequestURI = r.URL.RequestURI()
	w := &recorder{header: http.Header{}}
	p.h.ServeHTTP(w, r)
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return &http.Response{StatusCode: w.status, Status: http.StatusText(w.status), Header: w.header, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Body: io.NopCloser(bytes.NewReader(w.body.Bytes())), ContentLength: int64(w.body.Len()), Request: r}, nil
}

// recorder keeps an answer in memory.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (w *recorder) Header() http.Header { return w.header }
func (w *recorder) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.body.Write(b)
}
func (w *recorder) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}
func (w *recorder) Flush() {}

// toolError is the result of a tool whose operation failed: the Lance code
// and message, as text and as structured content.
func toolError(op string, err error) *mcp.CallToolResult {
	code, msg := store.ErrorCode(err), store.ErrorMessage(err)
	var ce *client.Error
	if errors.As(err, &ce) {
		code, msg = store.Code(ce.Code()), ce.Message()
	}
	body := map[string]any{"operation": op, "code": int(code), "error": msg}
	res := &mcp.CallToolResult{IsError: true, StructuredContent: body,
		Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%s failed: %s (Lance error code %d, %s)", op, msg, int(code), code)}}}
	return res
}

// jsonResult answers v as the tool's structured content and as its JSON
// text.
func jsonResult(v any) (*mcp.CallToolResult, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return &mcp.CallToolResult{StructuredContent: json.RawMessage(b), Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil
}

// joinID writes an identifier for messages.
func joinID(id []string) string { return strings.Join(id, "$") }

// checkTable returns an error for an identifier that names no table.
func checkTable(id []string) error {
	if len(id) == 0 {
		return store.Errorf(store.CodeInvalidInput, "table: give the table's identifier, such as [\"docs\"] or [\"prod\", \"docs\"]")
	}
	return nil
}

// clampRows returns the rows a tool answers: n, or the default for 0, at
// most maxRows.
func clampRows(n int) int {
	switch {
	case n <= 0:
		return defaultRows
	case n > maxRows:
		return maxRows
	}
	return n
}
