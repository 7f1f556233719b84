package coord

import (
	"io"
	"log/slog"
	"time"

	"github.com/lancens/lancens/store"
)

// Services are the work of a server that goes on beside its requests: the
// commit coordinator, the job runner with the store's job kinds, and the
// retention of old versions of managed tables. The binary (cmd/lancens)
// builds and starts them, hands them to the server, and stops them once
// the server has stopped.
type Services struct {
	Committer *Committer
	Jobs      *Runner
	// Retention queues the cleanup of old versions.
	Retention *Retention
	retain    time.Duration
}

// Warehouse is what the services need of where table files live:
// publishing manifests and deleting the data of dropped tables;
// *warehouse.Warehouse is one.
type Warehouse interface {
	Manifests
	DataRemover
}

// ServicesConfig configures NewServices.
type ServicesConfig struct {
	// Store is the backend with the engine that serves its tables
	// (engine.WithBackend). Required.
	Store store.ManagedBackend
	// Warehouse is where table files live. Required.
	Warehouse Warehouse
	// Committer is the commit coordinator, for a store whose engine
	// commits through one it was built with (package engine), so that
	// both take the same lock per location. Default: a new one.
	Committer *Committer
	// JobsQueued wakes the job runner: the signal whose Notify the store
	// calls when it queues a job (sqlite.Options.OnJobQueued). Without it
	// the runner looks for jobs every DefaultPoll only.
	JobsQueued *Signal
	// Logger receives the services' logs. Default: discard.
	Logger *slog.Logger
	// ProgressInterval is how often, at most, the progress of a running
	// job is logged and recorded in its transaction. Default
	// DefaultProgressInterval.
	ProgressInterval time.Duration
	// RetainVersionsFor is how long the versions of managed tables are
	// kept besides those something keeps (the latest of each branch,
	// tagged versions, versions branches fork from). Default
	// store.DefaultRetainVersionsFor; negative: keep only those.
	RetainVersionsFor time.Duration
}

// NewServices builds the services of cfg.Store, not yet started.
func NewServices(cfg ServicesConfig) *Services {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.ProgressInterval <= 0 {
		cfg.ProgressInterval = DefaultProgressInterval
	}
	if cfg.RetainVersionsFor == 0 {
		cfg.RetainVersionsFor = store.DefaultRetainVersionsFor
	}
	if cfg.Committer == nil {
		cfg.Committer = NewCommitter(cfg.Store, cfg.Warehouse, cfg.Logger)
	}
	s := &Services{
		Committer: cfg.Committer,
		Jobs:      NewRunner(cfg.Store, cfg.JobsQueued, cfg.Logger),
		retain:    max(cfg.RetainVersionsFor, 0),
	}
	s.Jobs.ProgressEvery = cfg.ProgressInterval
	s.Retention = NewRetention(cfg.Store, cfg.RetainVersionsFor, cfg.Logger)
	RegisterStoreJobs(s.Jobs, cfg.Store, cfg.Warehouse)
	return s
}

// Start starts the job runner and the retention. Start them once.
func (s *Services) Start() {
	s.Jobs.Start()
	s.Retention.Start()
}

// Stop stops the retention and the job runner, waiting for the job in
// progress. Call it after the HTTP server has stopped.
func (s *Services) Stop() {
	s.Retention.Stop()
	s.Jobs.Stop()
}

// RetainVersionsFor returns how long versions of managed tables are kept
// besides those something keeps (0: only those).
func (s *Services) RetainVersionsFor() time.Duration { return s.retain }
