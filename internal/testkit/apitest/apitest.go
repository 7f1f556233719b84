// Package apitest starts lancens on a loopback port for tests, backed by a
// SQLite file in t.TempDir(), a PostgreSQL database or a store the test
// gives, and checks every response it sends against openapi.yaml.
package apitest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/lancens/lancens/client"
	"github.com/lancens/lancens/coord"
	"github.com/lancens/lancens/engine"
	"github.com/lancens/lancens/gen"
	"github.com/lancens/lancens/internal/contract"
	"github.com/lancens/lancens/server"
	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/store/postgres"
	"github.com/lancens/lancens/store/sqlite"
	"github.com/lancens/lancens/warehouse"
)

// Options configure a test server.
type Options struct {
	// APIKeys turns authentication on; the test client sends the first one.
	APIKeys []string
	// DBPath reuses a database file (to test restarts); default: a new file
	// in t.TempDir().
	DBPath string
	// Store, when set, is the store the server uses instead of a SQLite
	// database (DBPath is then ignored); the test closes it.
	Store store.Backend
	// Postgres, when set, is the connection string of a PostgreSQL
	// database to keep the catalog on instead (Store and DBPath are then
	// ignored): the server is a replica, which others may share the
	// database with. Its store wakes the job runner as `lancens serve`'s
	// does, and closes when the server stops.
	Postgres string
	// Warehouse reuses a warehouse directory, or is an object-store
	// warehouse (s3://bucket/prefix, reached with StorageOptions);
	// default: a new directory in t.TempDir().
	Warehouse string
	// StorageOptions reach an object-store warehouse.
	StorageOptions map[string]string
	// Tune, when set, adjusts the server's configuration before it starts.
	Tune func(*server.Config)
	// TuneServices, when set, adjusts the configuration of the background
	// services (job runner, retention) before they start.
	TuneServices func(*coord.ServicesConfig)
	// ExternalRoots are where tables may lie besides the warehouse (see
	// warehouse.Open).
	ExternalRoots []string
}

// WithEngine returns st with the Lance engine serving the rows of its
// tables from wh, as lancens serve does, and the committer the server
// must share with it, for tests that build a server of their own.
func WithEngine(tb testing.TB, st store.Backend, wh *warehouse.Warehouse) (store.ManagedBackend, *coord.Committer) {
	tb.Helper()
	commits := coord.NewCommitter(st, wh, slog.New(slog.DiscardHandler))
	e, err := engine.New(engine.Options{Catalog: st, Warehouse: wh, Commits: commits})
	if err != nil {
		tb.Fatal(err)
	}
	return engine.WithBackend(st, e), commits
}

// Server is a running test server.
type Server struct {
	URL string
	// API is the server itself, for requests that bypass HTTP and the
	// response validation.
	API *server.Server
	// DB is the SQLite database, nil when the test gave a Store.
	DB    *sqlite.DB
	Store store.Backend
	// Data serves the rows of tables as the server does: the Lance
	// engine over Store.
	Data      store.ManagedBackend
	Warehouse *warehouse.Warehouse
	Client    *client.Client
	// HTTP sends raw requests; responses are validated like the client's.
	HTTP *http.Client
	stop func()
}

// Start starts a server for the test and stops it when the test ends.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	var db *sqlite.DB
	jobsQueued := coord.NewSignal()
	st := opts.Store
	var closeStore func()
	switch {
	case opts.Postgres != "":
		pg, err := postgres.Open(context.Background(), opts.Postgres, postgres.Options{OnJobQueued: jobsQueued.Notify})
		if err != nil {
			t.Fatal(err)
		}
		st, closeStore = pg, func() { pg.Close() }
	case st == nil:
		path := opts.DBPath
		if path == "" {
			path = t.TempDir() + "/lancens.db"
		}
		var err error
		if db, err = sqlite.Open(context.Background(), path, sqlite.Options{Synchronous: "NORMAL", OnJobQueued: jobsQueued.Notify}); err != nil {
			t.Fatal(err)
		}
		st, closeStore = db, func() { db.Close() }
	}
	whPath := opts.Warehouse
	if whPath == "" {
		whPath = t.TempDir()
	}
	wh, err := warehouse.OpenStore(context.Background(), whPath, opts.StorageOptions, opts.ExternalRoots...)
	if err != nil {
		t.Fatal(err)
	}
	served, commits := WithEngine(t, st, wh)
	scfg := coord.ServicesConfig{Store: served, Warehouse: wh, Committer: commits, JobsQueued: jobsQueued}
	if opts.TuneServices != nil {
		opts.TuneServices(&scfg)
	}
	services := coord.NewServices(scfg)
	cfg := server.Config{Store: served, Warehouse: wh, Services: services, APIKeys: opts.APIKeys}
	if opts.Tune != nil {
		opts.Tune(&cfg)
	}
	srv, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	services.Start()
	hs := httptest.NewServer(NewValidator(t).Wrap(srv))
	s := &Server{URL: hs.URL, API: srv, DB: db, Store: st, Warehouse: wh, HTTP: hs.Client()}
	s.Data = served
	var copts []client.Option
	if len(opts.APIKeys) > 0 {
		copts = append(copts, client.WithAPIKey(opts.APIKeys[0]))
	}
	s.Client, err = client.New(hs.URL, copts...)
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	s.stop = func() {
		once.Do(func() {
			hs.Close()
			services.Stop()
			if closeStore != nil {
				closeStore()
			}
		})
	}
	t.Cleanup(s.stop)
	return s
}

// Stop stops the server and closes its database before the test ends.
func (s *Server) Stop() { s.stop() }

// Validator checks responses against openapi.yaml and reports violations as
// test errors.
type Validator struct {
	t           testing.TB
	router      routers.Router
	errorSchema *openapi3.Schema
}

// NewValidator loads the embedded spec.
func NewValidator(t testing.TB) *Validator {
	t.Helper()
	doc, err := gen.GetSpec()
	if err != nil {
		t.Fatal(err)
	}
	doc.Servers = nil
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	return &Validator{t: t, router: router, errorSchema: doc.Components.Schemas["ErrorResponse"].Value}
}

// Wrap returns a handler that serves through h and validates each response.
func (v *Validator) Wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		res := rec.Result()
		body := rec.Body.Bytes()
		if err := v.Check(r, res.StatusCode, res.Header, body); err != nil {
			v.t.Errorf("response to %s %s violates openapi.yaml: %v\nbody: %.500s", r.Method, r.URL.RequestURI(), err, body)
		}
		for k, vals := range res.Header {
			w.Header()[k] = vals
		}
		w.WriteHeader(res.StatusCode)
		_, _ = w.Write(body)
	})
}

// Check validates one response to request r. A status the operation
// documents is validated in full. Any other status must carry an
// ErrorResponse whose code maps to that status (the spec's per-route lists
// are not exhaustive). A request the spec has no route for must fail with
// an ErrorResponse: 404 or 405 with code 0 for an unknown route, or the
// status of its code (a path with an empty {id}, for example, is a route
// with a missing parameter: 400, code 13).
//
// The operational endpoints (/healthz, /readyz, /metrics) and CORS
// preflights are outside the spec: only their error answers are checked.
func (v *Validator) Check(r *http.Request, status int, header http.Header, body []byte) error {
	if server.IsOperationalPath(r.URL.Path) || isPreflight(r) {
		if status >= 400 {
			return contract.CheckErrorResponse(v.errorSchema, status, header, body, server.StatusAllowed)
		}
		return nil
	}
	route, params, err := v.findRoute(r)
	if err != nil {
		if server.IsDialectRoute(r.Method, r.URL.EscapedPath()) && status < 300 {
			return contract.CheckEmptyObject(header, body)
		}
		if server.IsExtensionRoute(r.Method, r.URL.EscapedPath()) && status < 300 {
			return checkObject(header, body)
		}
		if status < 400 {
			return fmt.Errorf("no route in the spec, yet status %d", status)
		}
		return contract.CheckErrorResponse(v.errorSchema, status, header, body, server.StatusAllowed)
	}
	if route.Operation.Responses.Status(status) == nil && status < 500 {
		return contract.CheckErrorResponse(v.errorSchema, status, header, body, server.StatusAllowed)
	}
	if route.Operation.OperationID == "QueryTable" && status == http.StatusOK &&
		strings.Contains(r.Header.Get("Accept"), mimeArrowStream) && header.Get("Content-Type") == mimeArrowStream {
		// Beyond the spec: a client that asks for an IPC stream gets one.
		return contract.CheckArrowStream(body)
	}
	if route.Operation.OperationID == "QueryTable" && status == http.StatusOK &&
		strings.HasPrefix(r.Header.Get("Accept"), "application/json") && strings.HasPrefix(header.Get("Content-Type"), "application/json") {
		// Beyond the spec: a client that asks for JSON gets an array of rows.
		var rows []map[string]json.RawMessage
		if err := json.Unmarshal(body, &rows); err != nil || rows == nil {
			return fmt.Errorf("a JSON query answer must be an array of row objects: %v", err)
		}
		return nil
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: r, PathParams: params, Route: route},
		Status:                 status,
		Header:                 header,
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	in.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		return err
	}
	if status >= 300 {
		return contract.CheckErrorResponse(v.errorSchema, status, header, body, server.StatusAllowed)
	}
	return nil
}

const mimeArrowStream = "application/vnd.apache.arrow.stream"

// isPreflight reports whether r is a CORS preflight request.
func isPreflight(r *http.Request) bool {
	return r.Method == http.MethodOptions && r.Header.Get("Origin") != "" && r.Header.Get("Access-Control-Request-Method") != ""
}

// checkObject checks that an extension route answered a JSON object.
func checkObject(header http.Header, body []byte) error {
	if ct := header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		return fmt.Errorf("extension route answered Content-Type %q, want JSON", ct)
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil || m == nil {
		return fmt.Errorf("extension route answered %.200s, want a JSON object", body)
	}
	return nil
}

// findRoute finds the spec operation for r the way the server does: one
// trailing slash is ignored and read-only routes take either GET or POST.
func (v *Validator) findRoute(r *http.Request) (*routers.Route, map[string]string, error) {
	u := *r.URL
	if len(u.Path) > 1 && strings.HasSuffix(u.Path, "/") {
		u.Path = strings.TrimSuffix(u.Path, "/")
		u.RawPath = strings.TrimSuffix(u.RawPath, "/")
	}
	req := r.Clone(r.Context())
	req.URL = &u
	route, params, err := v.router.FindRoute(req)
	if err == routers.ErrMethodNotAllowed {
		if req.Method == http.MethodGet {
			req.Method = http.MethodPost
		} else {
			req.Method = http.MethodGet
		}
		route, params, err = v.router.FindRoute(req)
	}
	return route, params, err
}

// Do sends a raw request to the server; body may be nil. It returns the
// status, the body and the response headers, failing the test on transport
// errors.
func (s *Server) Do(t testing.TB, method, path string, header http.Header, body []byte) (int, []byte, http.Header) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, s.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	for k, vals := range header {
		req.Header[k] = vals
	}
	res, err := s.HTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, out, res.Header
}

// ErrorCode returns the Lance code of an ErrorResponse body, or -1.
func ErrorCode(body []byte) int { return contract.ErrorCode(body) }
