// Package client is a typed Go client for any server that speaks the Lance
// Namespace REST API: lancens, LanceDB Cloud/Enterprise, or another
// implementation of the spec.
//
// Identifiers are []string (the names from the root, exclusive, to the
// object); the root namespace is an empty identifier. Errors from the server
// carry its Lance error code and match the sentinels of this package with
// errors.Is:
//
//	c, _ := client.New("http://localhost:2333", client.WithAPIKey(key))
//	_, err := c.DescribeNamespace(ctx, []string{"prod"})
//	if errors.Is(err, client.ErrNamespaceNotFound) { … }
package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/lancens/lancens/gen"
	"github.com/lancens/lancens/store"
)

// Client talks to one Lance Namespace REST server. It is safe for concurrent
// use.
type Client struct {
	api       *gen.ClientWithResponses
	delimiter string
}

type options struct {
	httpClient gen.HttpRequestDoer
	headers    http.Header
	delimiter  string
}

// Option configures a Client.
type Option func(*options)

// WithAPIKey sends key in the x-api-key header of every request.
func WithAPIKey(key string) Option {
	return func(o *options) { o.headers.Set("X-Api-Key", key) }
}

// WithBearerToken sends token as "Authorization: Bearer <token>".
func WithBearerToken(token string) Option {
	return func(o *options) { o.headers.Set("Authorization", "Bearer "+token) }
}

// WithHeader adds a header to every request.
func WithHeader(name, value string) Option {
	return func(o *options) { o.headers.Add(name, value) }
}

// WithHTTPClient makes requests through doer (an *http.Client, say) instead
// of http.DefaultClient.
func WithHTTPClient(doer gen.HttpRequestDoer) Option {
	return func(o *options) { o.httpClient = doer }
}

// WithDelimiter joins identifiers in request paths with d instead of "$".
// Use it when names contain "$".
func WithDelimiter(d string) Option {
	return func(o *options) { o.delimiter = d }
}

// New returns a client for the server at baseURL (for example
// "http://localhost:2333"). It returns an error if baseURL is not a valid URL.
func New(baseURL string, opts ...Option) (*Client, error) {
	o := options{headers: http.Header{}, delimiter: "$"}
	for _, opt := range opts {
		opt(&o)
	}
	if o.delimiter == "" {
		return nil, errors.New("client: empty delimiter")
	}
	if o.delimiter == "." || o.delimiter == ".." {
		// The root namespace is the delimiter alone, which URL resolution
		// would remove from the path.
		return nil, fmt.Errorf("client: delimiter %q cannot name the root namespace in a URL path", o.delimiter)
	}
	genOpts := []gen.ClientOption{gen.WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
		for name, values := range o.headers {
			req.Header[name] = append([]string(nil), values...)
		}
		escapePlus(req)
		return nil
	})}
	if o.httpClient != nil {
		genOpts = append(genOpts, gen.WithHTTPClient(o.httpClient))
	}
	api, err := gen.NewClientWithResponses(strings.TrimSuffix(baseURL, "/"), genOpts...)
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	return &Client{api: api, delimiter: o.delimiter}, nil
}

// escapePlus sends a literal "+" in the path as %2B: servers may read an
// unescaped "+" in an identifier as a space, as form encoding does.
func escapePlus(req *http.Request) {
	if p := req.URL.EscapedPath(); strings.Contains(p, "+") {
		req.URL.RawPath = strings.ReplaceAll(p, "+", "%2B")
	}
}

// pathID renders an identifier for a request path; the root is the delimiter.
// It returns an InvalidInput error if a name contains the delimiter, since the
// server could not split it back, or is "." or "..", which URL resolution
// would remove from the path.
func (c *Client) pathID(id []string) (string, error) {
	if len(id) == 0 {
		return c.delimiter, nil
	}
	for _, name := range id {
		if name == "" {
			return "", store.Errorf(store.CodeInvalidInput, "identifier %q has an empty name", id)
		}
		if name == "." || name == ".." {
			return "", store.Errorf(store.CodeInvalidInput, "identifier %q has the name %q, which a URL path cannot carry", id, name)
		}
		if strings.Contains(name, c.delimiter) {
			return "", store.Errorf(store.CodeInvalidInput, "name %q contains the delimiter %q; choose another with WithDelimiter", name, c.delimiter)
		}
	}
	return strings.Join(id, c.delimiter), nil
}

// Error is an error answered by the server. It unwraps to a *store.Error
// carrying the Lance code, so errors.Is works with this package's sentinels.
type Error struct {
	// StatusCode is the HTTP status of the response.
	StatusCode int
	// RequestID is the server's X-Request-Id for the request, if it sent one.
	RequestID string
	// Err holds the Lance code and the server's message.
	Err *store.Error
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("lance namespace error %d (%s, HTTP %d): %s", int(e.Err.Code), e.Err.Code, e.StatusCode, e.Err.Message)
	if e.RequestID != "" {
		msg += " [request " + e.RequestID + "]"
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// checkResponse returns nil for a 2xx response and an *Error otherwise. A
// body that is not an ErrorResponse is reported as Internal (18) with the
// status and the start of the body.
func checkResponse(hr *http.Response, body []byte) error {
	if hr.StatusCode >= 200 && hr.StatusCode < 300 {
		return nil
	}
	e := &Error{StatusCode: hr.StatusCode, RequestID: hr.Header.Get("X-Request-Id")}
	var er struct {
		Code  *int   `json:"code"`
		Error string `json:"error"`
	}
	if json.Unmarshal(body, &er) == nil && er.Code != nil {
		e.Err = &store.Error{Code: store.Code(*er.Code), Message: er.Error}
		return e
	}
	snippet := string(body)
	if len(snippet) > 200 {
		snippet = snippet[:200] + "…"
	}
	e.Err = store.Errorf(store.CodeInternal, "unexpected response %s: %s", hr.Status, snippet)
	return e
}

// Sentinels for errors.Is, one per Lance error code.
var (
	ErrUnsupported                = store.ErrUnsupported
	ErrNamespaceNotFound          = store.ErrNamespaceNotFound
	ErrNamespaceAlreadyExists     = store.ErrNamespaceAlreadyExists
	ErrNamespaceNotEmpty          = store.ErrNamespaceNotEmpty
	ErrTableNotFound              = store.ErrTableNotFound
	ErrTableAlreadyExists         = store.ErrTableAlreadyExists
	ErrTableIndexNotFound         = store.ErrTableIndexNotFound
	ErrTableIndexAlreadyExists    = store.ErrTableIndexAlreadyExists
	ErrTableTagNotFound           = store.ErrTableTagNotFound
	ErrTableTagAlreadyExists      = store.ErrTableTagAlreadyExists
	ErrTransactionNotFound        = store.ErrTransactionNotFound
	ErrTableVersionNotFound       = store.ErrTableVersionNotFound
	ErrTableColumnNotFound        = store.ErrTableColumnNotFound
	ErrInvalidInput               = store.ErrInvalidInput
	ErrConcurrentModification     = store.ErrConcurrentModification
	ErrPermissionDenied           = store.ErrPermissionDenied
	ErrUnauthenticated            = store.ErrUnauthenticated
	ErrServiceUnavailable         = store.ErrServiceUnavailable
	ErrInternal                   = store.ErrInternal
	ErrInvalidTableState          = store.ErrInvalidTableState
	ErrTableSchemaValidationError = store.ErrTableSchemaValidationError
	ErrThrottling                 = store.ErrThrottling
	ErrTableBranchNotFound        = store.ErrTableBranchNotFound
	ErrTableBranchAlreadyExists   = store.ErrTableBranchAlreadyExists
)
