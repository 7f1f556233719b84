package coord

import (
	"context"
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
	// Retention queues the cleanup of old versions; nil when the store
	// keeps no managed tables.
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
	// Store is the backend. Required.
	Store store.Backend
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

// NewServices builds the services of cfg.Store, not yet started. A store
// that is a store.ManagedBackend (asked once, here) gets the retention of
// old versions and runs the job kinds of managed tables; another answers
// those jobs Unsupported (0), which it never queues.
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
	var jobs JobStore = noManagedTables{}
	if managed, ok := cfg.Store.(store.ManagedBackend); ok {
		jobs = managed
		s.Retention = NewRetention(managed, cfg.RetainVersionsFor, cfg.Logger)
	}
	RegisterStoreJobs(s.Jobs, jobs, cfg.Warehouse)
	return s
}

// Start starts the job runner and the retention. Start them once.
func (s *Services) Start() {
	s.Jobs.Start()
	if s.Retention != nil {
		s.Retention.Start()
	}
}

// Stop stops the retention and the job runner, waiting for the job in
// progress. Call it after the HTTP server has stopped.
func (s *Services) Stop() {
	if s.Retention != nil {
		s.Retention.Stop()
	}
	s.Jobs.Stop()
}

// RetainVersionsFor returns how long versions of managed tables are kept
// besides those something keeps (0: only those).
func (s *Services) RetainVersionsFor() time.Duration { return s.retain }

// noManagedTables is the JobStore of a store that keeps no managed tables.
type noManagedTables struct{}

func errNoManagedTables() error {
	return store.Errorf(store.CodeUnsupported, "this store keeps no managed tables")
}

func (noManagedTables) Backfill(context.Context, store.BackfillColumn) (store.WriteResult, error) {
	return store.WriteResult{}, errNoManagedTables()
}

func (noManagedTables) BuildIndex(context.Context, store.BuildIndex) error {
	return errNoManagedTables()
}

func (noManagedTables) RunCleanup(context.Context, store.CleanupVersions) (store.CleanupResult, error) {
	return store.CleanupResult{}, errNoManagedTables()
}

func (noManagedTables) RefreshView(context.Context, store.RefreshView) (store.WriteResult, error) {
	return store.WriteResult{}, errNoManagedTables()
}
