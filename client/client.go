package client

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/lancens/lancens/gen/apiclient"
)

// Client talks to one Lance Namespace REST server. It is safe for concurrent
// use.
type Client struct {
	api       *apiclient.ClientWithResponses
	delimiter string
	// branch is the branch of the tables that data operations act on; ""
	// is main (see OnBranch).
	branch string
}

type options struct {
	httpClient *http.Client
	headers    http.Header
	delimiter  string
	retry      RetryPolicy
	timeout    time.Duration
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

// WithHTTPClient sends requests through hc instead of http.DefaultClient,
// for its transport, TLS settings or proxy.
func WithHTTPClient(hc *http.Client) Option {
	return func(o *options) { o.httpClient = hc }
}

// WithDelimiter joins identifiers in request paths with d instead of "$".
// Use it when names contain "$".
func WithDelimiter(d string) Option {
	return func(o *options) { o.delimiter = d }
}

// RetryPolicy says how calls that read (and so may be repeated safely) are
// retried when the server answers 429 Too Many Requests or 503 Service
// Unavailable. Calls that change something are never retried.
type RetryPolicy struct {
	// MaxRetries is how many times a call is repeated; 0 turns retries off.
	MaxRetries int
	// BaseDelay is the wait before the first retry; each further retry
	// waits up to twice as long, with random jitter, at most MaxDelay. A
	// Retry-After header from the server raises the wait, up to MaxDelay.
	BaseDelay time.Duration
	MaxDelay  time.Duration
}

// DefaultRetryPolicy is what a Client uses unless WithRetry says otherwise.
var DefaultRetryPolicy = RetryPolicy{MaxRetries: 3, BaseDelay: 100 * time.Millisecond, MaxDelay: 5 * time.Second}

// WithRetry replaces DefaultRetryPolicy; RetryPolicy{} turns retries off.
func WithRetry(p RetryPolicy) Option {
	return func(o *options) { o.retry = p }
}

// WithTimeout bounds each HTTP attempt, reading its response included, to
// d. The context passed to a call bounds the call as a whole.
func WithTimeout(d time.Duration) Option {
	return func(o *options) { o.timeout = d }
}

// New returns a client for the server at baseURL, for example
// "http://localhost:2333" or "https://lance.example.com/prefix". A trailing
// "/v1" is dropped, since every request path starts with it. It returns an
// error if baseURL is not an absolute http or https URL with a host, or has
// a query or fragment, or if an option is invalid.
func New(baseURL string, opts ...Option) (*Client, error) {
	o := options{headers: http.Header{}, delimiter: "$", retry: DefaultRetryPolicy, httpClient: http.DefaultClient}
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
	if o.retry.MaxRetries < 0 || o.retry.BaseDelay < 0 || o.retry.MaxDelay < o.retry.BaseDelay {
		return nil, fmt.Errorf("client: invalid retry policy %+v", o.retry)
	}
	if o.httpClient == nil {
		return nil, errors.New("client: nil *http.Client")
	}
	server, err := serverURL(baseURL)
	if err != nil {
		return nil, err
	}
	doer := &transport{client: o.httpClient, headers: o.headers, retry: o.retry, timeout: o.timeout}
	api, err := apiclient.NewClientWithResponses(server, apiclient.WithHTTPClient(doer))
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	return &Client{api: api, delimiter: o.delimiter}, nil
}

// serverURL checks baseURL and returns it without a trailing "/v1" or
// slash. Returns an error naming what is wrong.
func serverURL(baseURL string) (string, error) {
	u, err := url.Parse(baseURL)
	if err != nil {
		return "", fmt.Errorf("client: invalid server URL %q: %w", baseURL, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("client: server URL %q must start with http:// or https://", baseURL)
	}
	if u.Host == "" {
		return "", fmt.Errorf("client: server URL %q has no host", baseURL)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", fmt.Errorf("client: server URL %q must not carry a query, fragment or user info", baseURL)
	}
	u.Path = strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), "/v1")
	u.RawPath = ""
	return strings.TrimSuffix(u.String(), "/"), nil
}

// OnBranch returns a client whose operations on the rows, schemas and
// indexes of tables (Insert, MergeInsert, Update, Delete, CountRows, Query,
// ExplainQuery, AnalyzeQuery, RestoreTable, TableStats, the column and
// metadata changes, the index calls, DescribeTable and the handles of
// Table) act on branch name of each table instead of main ("" is main).
// The catalog calls that name a branch themselves (tags, versions,
// branches) take it as their argument, whatever the client's branch. The
// two clients share their connection and settings.
func (c *Client) OnBranch(name string) *Client {
	b := *c
	b.branch = name
	return &b
}

// branchParam returns the client's branch for a request, nil for main.
func (c *Client) branchParam() *string { return optional(c.branch) }

// Branch returns the branch the client's data operations act on ("" is
// main).
func (c *Client) Branch() string { return c.branch }

// Raw returns the generated client this Client wraps, for requests this
// package has no method for (such as fields it does not expose). Identifiers
// in its paths are joined with the delimiter (see WithDelimiter), and the
// caller checks responses.
func (c *Client) Raw() *apiclient.ClientWithResponses { return c.api }

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
			return "", errorf(CodeInvalidInput, "identifier %q has an empty name", id)
		}
		if name == "." || name == ".." {
			return "", errorf(CodeInvalidInput, "identifier %q has the name %q, which a URL path cannot carry", id, name)
		}
		if strings.Contains(name, c.delimiter) {
			return "", errorf(CodeInvalidInput, "name %q contains the delimiter %q; choose another with WithDelimiter", name, c.delimiter)
		}
	}
	return strings.Join(id, c.delimiter), nil
}
