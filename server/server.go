// Package server is the HTTP face of lancens: Echo wiring for every route of
// the Lance Namespace REST API, request validation against openapi.yaml, one
// error handler, authentication, and handlers that translate between the
// generated API types and the store.
package server

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/lancens/lancens/auth"
	"github.com/lancens/lancens/console"
	"github.com/lancens/lancens/coord"
	"github.com/lancens/lancens/gen"
	"github.com/lancens/lancens/internal/budget"
	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/vend"
	"github.com/lancens/lancens/warehouse"
)

// Config configures a Server.
type Config struct {
	// Store holds the catalog, with package engine's Lance engine serving
	// the rows of its tables (engine.WithBackend). Required.
	Store store.ManagedBackend
	// Warehouse is where declared tables get their locations. Required.
	Warehouse *warehouse.Warehouse
	// Vendor decides the storage options answered for tables on the
	// warehouse's object store (declare, describe); nil answers only the
	// options recorded with each table.
	Vendor *vend.Vendor
	// Services are the commit coordinator, job runner and retention of the
	// Store, built by coord.NewServices (with the committer a Lance engine
	// serving Store's managed tables commits through, so that both take
	// one lock per table location). Required. The server commits through
	// them; whoever built them starts them and stops them after
	// the server has stopped.
	Services *coord.Services
	// APIKeys are admin keys without a scope (--api-key). With neither
	// APIKeys nor Auth, access is open: every request acts as an admin.
	APIKeys []string
	// Auth configures access control (--auth-config): keys with roles and
	// namespace scopes, and JWT bearer tokens. See the auth package.
	Auth *auth.Config
	// RouteDatabases serves a LanceDB remote-dialect request that names a
	// database (x-lancedb-database: NAME) inside top-level namespace NAME,
	// as if NAME were the root (--route-databases).
	RouteDatabases bool
	// Logger receives request and error logs. Default: discard.
	Logger *slog.Logger
	// MaxJSONBody is the largest JSON request body accepted, in bytes.
	// Default 32 MiB.
	MaxJSONBody int64
	// MaxArrowBody is the largest Arrow request body accepted, in bytes.
	// Default 1 GiB.
	MaxArrowBody int64
	// MaxArrowDecodedBytes bounds the memory one Arrow request body may
	// decode to, counted after decompression. Default 1 GiB, the same as
	// MaxArrowBody: compression then never lets a request cost more than
	// an uncompressed body of the largest accepted size would.
	MaxArrowDecodedBytes int64
	// MaxArrowRows bounds the rows of one Arrow request body. Default 10
	// million: a write of that size already takes SQLite tens of seconds,
	// and larger loads can be sent as several requests.
	MaxArrowRows int64
	// DecodeBudget is the memory all requests together may hold decoding
	// what they sent (Arrow batches, large JSON bodies, SQL being parsed);
	// see memory.go. Default 1 GiB.
	DecodeBudget int64
	// DecodeWait is how long a request waits for room in DecodeBudget
	// before it answers ServiceUnavailable (17). Default 2 s.
	DecodeWait time.Duration
	// MaxFilterBytes bounds each SQL text a request sends (filters,
	// predicates, expressions, column names); a longer one is
	// InvalidInput (13). Default 256 KiB.
	MaxFilterBytes int
	// MaxPageSize is the largest `limit` a listing accepts; a larger one is
	// InvalidInput (13). A listing without a limit answers pages of
	// store.DefaultPageSize items (or MaxPageSize, when smaller). Default
	// and ceiling store.MaxPageSize.
	MaxPageSize int
	// MaxSearchRows bounds the rows one vector or full-text search may
	// answer: k (at most the rows of the table) times the number of query
	// vectors. A search past it is InvalidInput (13). Default 100,000.
	MaxSearchRows int64
	// QueryTimeout bounds how long query, count_rows, explain_plan and
	// analyze_plan may run; one that runs longer answers
	// ServiceUnavailable (17, HTTP 503). Default 60 s; negative: no bound.
	QueryTimeout time.Duration
	// NoMetricsRoute leaves /metrics out of the API, for a server whose
	// metrics are served by MetricsHandler on a listener of their own.
	NoMetricsRoute bool
	// CORSOrigins, when not empty, are the origins browsers may call the
	// API from ("*" for any); preflight requests are answered for them.
	CORSOrigins []string
	// MinBodyRate is the least rate, in bytes per second, at which a
	// request body must arrive once the server has waited BodyRateGrace
	// for it (--min-body-rate); a slower client is cut off with
	// InvalidInput (13). 0: DefaultMinBodyRate; negative: no minimum.
	MinBodyRate int64
	// AllowedHosts are the host names (beyond IP addresses, "localhost"
	// and names under it) that a server without credentials answers
	// requests for (--allowed-host): the name of its listen address, and
	// the names it is reached by. A request for any other name is refused,
	// as DNS rebinding would send it (see crosssite.go). A server with
	// credentials answers every name.
	AllowedHosts []string
	// TableMetricsLimit is how many tables get per-table metrics series of
	// their own (see tablemetrics.go); the others are summed into one.
	// Default DefaultTableMetricsLimit; negative: none of their own.
	TableMetricsLimit int
	// TableMetricsInterval is how often the per-table metrics are gathered,
	// in the background. Default DefaultTableMetricsInterval; negative:
	// never (no per-table metrics).
	TableMetricsInterval time.Duration
}

// Defaults of the Config bounds.
const (
	DefaultMaxJSONBody          = 32 << 20
	DefaultMaxArrowBody         = 1 << 30
	DefaultMaxArrowDecodedBytes = 1 << 30
	DefaultMaxArrowRows         = 10_000_000
	DefaultMaxSearchRows        = 100_000
	DefaultQueryTimeout         = 60 * time.Second
)

// Server serves the Lance Namespace REST API. It implements
// gen.ServerInterface; operations lancens does not offer answer
// Unsupported (0).
type Server struct {
	cfg       Config
	store     store.ManagedBackend
	warehouse *warehouse.Warehouse
	log       *slog.Logger
	echo      *echo.Echo
	ops       operationTable
	auth      *auth.Authenticator
	services  *coord.Services
	uploads   uploads
	// decode is the decode budget; returner gives memory back after its
	// peaks (memory.go).
	decode   *budget.Budget
	returner *memoryReturner
	metrics  *metrics
	// tableMetrics gathers the per-table metrics; nil when they are off.
	tableMetrics *tableMetrics
	readiness    readiness
	probes       http.Handler
	console      http.Handler
	crossSite    crossSitePolicy
}

var _ gen.ServerInterface = (*Server)(nil)

// New builds a Server over the store and services of cfg. It returns an
// error if the configuration is incomplete or the embedded spec cannot be
// loaded.
func New(cfg Config) (*Server, error) {
	if cfg.Store == nil || cfg.Warehouse == nil || cfg.Services == nil {
		return nil, fmt.Errorf("server: a store, a warehouse and the services (coord.NewServices) are required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.MaxJSONBody <= 0 {
		cfg.MaxJSONBody = DefaultMaxJSONBody
	}
	if cfg.MaxArrowBody <= 0 {
		cfg.MaxArrowBody = DefaultMaxArrowBody
	}
	if cfg.MaxArrowDecodedBytes <= 0 {
		cfg.MaxArrowDecodedBytes = DefaultMaxArrowDecodedBytes
	}
	if cfg.MaxArrowRows <= 0 {
		cfg.MaxArrowRows = DefaultMaxArrowRows
	}
	if cfg.DecodeBudget <= 0 {
		cfg.DecodeBudget = DefaultDecodeBudget
	}
	if cfg.DecodeWait <= 0 {
		cfg.DecodeWait = DefaultDecodeWait
	}
	if cfg.MaxFilterBytes <= 0 {
		cfg.MaxFilterBytes = DefaultMaxFilterBytes
	}
	if cfg.MaxPageSize <= 0 {
		cfg.MaxPageSize = store.MaxPageSize
	}
	if cfg.MaxPageSize > store.MaxPageSize {
		return nil, fmt.Errorf("server: the largest page size is %d, not %d", store.MaxPageSize, cfg.MaxPageSize)
	}
	if cfg.MaxSearchRows <= 0 {
		cfg.MaxSearchRows = DefaultMaxSearchRows
	}
	if cfg.QueryTimeout == 0 {
		cfg.QueryTimeout = DefaultQueryTimeout
	}
	if cfg.MinBodyRate == 0 {
		cfg.MinBodyRate = DefaultMinBodyRate
	}
	if cfg.TableMetricsLimit == 0 {
		cfg.TableMetricsLimit = DefaultTableMetricsLimit
	}
	if cfg.TableMetricsInterval == 0 {
		cfg.TableMetricsInterval = DefaultTableMetricsInterval
	}
	st := cfg.Store
	doc, err := gen.GetSpec()
	if err != nil {
		return nil, fmt.Errorf("server: load embedded spec: %w", err)
	}
	if err := checkRules(doc); err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	authn, err := auth.New(cfg.Auth, cfg.APIKeys, nil)
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	s := &Server{
		cfg: cfg, store: st, warehouse: cfg.Warehouse, log: cfg.Logger, ops: newOperationTable(doc), auth: authn,
		services: cfg.Services, crossSite: newCrossSitePolicy(cfg),
	}
	s.returner = newMemoryReturner()
	s.decode = budget.New(cfg.DecodeBudget, cfg.DecodeWait, s.returner.peaked)
	e := echo.New()
	e.HideBanner = true
	e.HidePort = true
	e.HTTPErrorHandler = s.errorHandler
	if len(cfg.CORSOrigins) > 0 {
		e.Pre(allowOrigins(cfg.CORSOrigins))
	}
	e.Pre(remotePaths, s.routeDatabases, stripTrailingSlash, aliasMethods)
	// trackUploads wraps the body limitBodies has already bounded; with the
	// two swapped, an oversized upload hung (TestArrowBodyTooLarge).
	e.Use(assignRequestID, s.traceRequests, s.observeRequests, s.logRequests, s.enforceBodyRate, s.holdBudget, s.limitBodies, s.trackUploads, s.recoverPanics,
		s.checkHost, s.refuseForeignOrigins, s.authenticate)
	e.Use(s.refuseOtherMediaTypes, s.remoteBodies, s.validateRequests, s.authorize, s.remoteFreshness, s.limitQueryTime)
	gen.RegisterHandlers(e, s)
	s.dialectRoutes(e)
	if !cfg.NoMetricsRoute {
		e.GET(MetricsPath, s.serveMetrics)
	}
	s.extensionRoutes(e)
	e.GET(PrincipalPath, s.DescribePrincipal)
	s.mcpRoutes(e)
	if err := checkRoutes(e.Routes(), s.ops); err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	s.echo = e
	s.console = console.Handler()
	if cfg.TableMetricsInterval > 0 {
		s.tableMetrics = newTableMetrics(s, max(cfg.TableMetricsLimit, 0), cfg.TableMetricsInterval)
	}
	s.metrics = newMetrics(s)
	s.probes = s.ProbeHandler()
	if s.tableMetrics != nil {
		s.tableMetrics.start()
	}
	return s, nil
}

// Close stops the gathering of per-table metrics, the one background task
// the server runs itself (the coord services it was given are stopped by
// whoever built them). Call it after the HTTP server has stopped.
func (s *Server) Close() {
	if s.tableMetrics != nil {
		s.tableMetrics.close()
	}
}

// ServeHTTP makes the Server an http.Handler. The health and readiness
// probes are answered first, without authentication, logging or any other
// middleware; so are the web console's files (console.Path): the page asks
// for credentials and sends them with each API call it makes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if p := r.URL.Path; p == HealthPath || p == ReadyPath {
		s.probes.ServeHTTP(w, r)
		return
	}
	if console.Serves(r.URL.Path) {
		s.console.ServeHTTP(w, r)
		return
	}
	s.echo.ServeHTTP(w, r)
}

// AccessControlled reports whether requests need credentials.
func (s *Server) AccessControlled() bool {
	return s.auth.Enabled()
}

// Routes returns "METHOD path" for every route the server registers.
func (s *Server) Routes() []string {
	var out []string
	for _, r := range s.echo.Routes() {
		out = append(out, r.Method+" "+r.Path)
	}
	return out
}
