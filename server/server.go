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

	"github.com/labstack/echo/v4"

	"github.com/lancens/lancens/gen"
	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/warehouse"
)

// Store is everything the server needs from storage.
type Store interface {
	store.Namespaces
	store.Tables
	store.Versions
	store.Batches
	store.Tags
	store.Branches
	store.Transactions
	store.Jobs
	store.ManagedData
	store.Indexes
}

// Config configures a Server.
type Config struct {
	// Store holds the catalog. Required.
	Store Store
	// Warehouse is where declared tables get their locations. Required.
	Warehouse *warehouse.Warehouse
	// APIKeys, when not empty, are the credentials a request must present.
	APIKeys []string
	// Logger receives request and error logs. Default: discard.
	Logger *slog.Logger
	// MaxJSONBody is the largest JSON request body accepted, in bytes.
	// Default 32 MiB.
	MaxJSONBody int64
	// MaxArrowBody is the largest Arrow request body accepted, in bytes.
	// Default 1 GiB.
	MaxArrowBody int64
}

// Server serves the Lance Namespace REST API. It implements
// gen.ServerInterface; operations lancens does not offer answer
// Unsupported (0).
type Server struct {
	cfg       Config
	store     Store
	warehouse *warehouse.Warehouse
	log       *slog.Logger
	echo      *echo.Echo
	ops       operationTable
	commits   *committer
	jobs      *jobRunner
}

var _ gen.ServerInterface = (*Server)(nil)

// New builds a Server and starts its background job runner; Close stops it.
// It returns an error if the configuration is incomplete or the embedded spec
// cannot be loaded.
func New(cfg Config) (*Server, error) {
	if cfg.Store == nil || cfg.Warehouse == nil {
		return nil, fmt.Errorf("server: a store and a warehouse are required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.MaxJSONBody <= 0 {
		cfg.MaxJSONBody = 32 << 20
	}
	if cfg.MaxArrowBody <= 0 {
		cfg.MaxArrowBody = 1 << 30
	}
	doc, err := gen.GetSpec()
	if err != nil {
		return nil, fmt.Errorf("server: load embedded spec: %w", err)
	}
	s := &Server{
		cfg: cfg, store: cfg.Store, warehouse: cfg.Warehouse, log: cfg.Logger, ops: newOperationTable(doc),
		commits: newCommitter(cfg.Store, cfg.Warehouse, cfg.Logger),
		jobs:    newJobRunner(cfg.Store, cfg.Warehouse, cfg.Logger),
	}
	e := echo.New()
	e.HideBanner = true
	e.HidePort = true
	e.HTTPErrorHandler = s.errorHandler
	e.Pre(remotePaths, stripTrailingSlash, aliasMethods)
	e.Use(assignRequestID, s.logRequests, s.recoverPanics, s.authenticate, s.remoteBodies, s.validateRequests)
	gen.RegisterHandlers(e, s)
	s.echo = e
	s.jobs.start()
	return s, nil
}

// Close stops the background job runner, waiting for the job in progress.
// Call it after the HTTP server has stopped.
func (s *Server) Close() {
	s.jobs.stop()
}

// ServeHTTP makes the Server an http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.echo.ServeHTTP(w, r)
}

// Routes returns "METHOD path" for every route the server registers.
func (s *Server) Routes() []string {
	var out []string
	for _, r := range s.echo.Routes() {
		out = append(out, r.Method+" "+r.Path)
	}
	return out
}
