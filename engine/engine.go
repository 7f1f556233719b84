package engine

import (
	"errors"
	"io"
	"log/slog"
	"sync"

	"github.com/lancens/lancens/coord"
	"github.com/lancens/lancens/internal/memcache"
	"github.com/lancens/lancens/lance/file"
	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/warehouse"
)

// Options configure an Engine.
type Options struct {
	// Catalog holds the tables and their version records. Required.
	Catalog store.Backend
	// Warehouse is where tables get their locations and how their files
	// are reached. Required.
	Warehouse *warehouse.Warehouse
	// Commits publishes and records versions. Pass the committer the
	// server's namespace-mode commits go through, so that both take one
	// lock per table location; nil makes one for the engine alone.
	Commits *coord.Committer
	// Cache keeps decoded columns, deletion files, opened data files and
	// manifests; nil makes one of DefaultCacheBytes.
	Cache *memcache.Cache
	// Logger receives what the engine reports on its own (cleanup that
	// failed after a write). Default: discard.
	Logger *slog.Logger
	// File are the options data files are written with (the format
	// version, the page size).
	File file.WriteOptions
	// MaxRowsPerFile starts a new fragment after this many rows of one
	// write; 0 is Lance's default (table.DefaultMaxRowsPerFile).
	MaxRowsPerFile uint64
}

// DefaultCacheBytes is the read cache of an Engine whose Options give none.
const DefaultCacheBytes = 256 << 20

// Engine serves the rows of tables stored as Lance datasets: the
// store.ManagedTables part of the backend contract over any
// store.Backend's catalog. Its methods are safe for concurrent use.
type Engine struct {
	*shared
	// branch is the branch the data operations act on ("" is main); see
	// OnBranch.
	branch string
}

// shared is what every branch's view of an Engine shares.
type shared struct {
	cat      store.Backend
	wh       *warehouse.Warehouse
	commits  *coord.Committer
	cache    *memcache.Cache
	log      *slog.Logger
	fileOpts file.WriteOptions
	maxRows  uint64
	// writers serialises the writes to each table in this process (by
	// table uuid); other processes are kept apart by the commit protocol.
	writers keyedMutex
}

// New returns an Engine over opts.Catalog and opts.Warehouse. It returns
// an error when either is missing.
func New(opts Options) (*Engine, error) {
	if opts.Catalog == nil || opts.Warehouse == nil {
		return nil, errors.New("engine: a catalog and a warehouse are required")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.Commits == nil {
		opts.Commits = coord.NewCommitter(opts.Catalog, opts.Warehouse, opts.Logger)
	}
	if opts.Cache == nil {
		opts.Cache = memcache.New(DefaultCacheBytes)
	}
	return &Engine{shared: &shared{
		cat: opts.Catalog, wh: opts.Warehouse, commits: opts.Commits, cache: opts.Cache, log: opts.Logger,
		fileOpts: opts.File, maxRows: opts.MaxRowsPerFile, writers: keyedMutex{locks: map[string]*keyedLock{}},
	}}, nil
}

// OnBranch implements store.BranchedData: the data operations on branch
// ("" is main).
func (e *Engine) OnBranch(branch string) store.ManagedData {
	return &Engine{shared: e.shared, branch: branch}
}

// CacheBytes returns the bytes the engine's read cache holds, for
// operators' figures.
func (e *Engine) CacheBytes() int64 { return e.cache.Stats().Bytes }

// CacheBudget returns the read cache's budget in bytes.
func (e *Engine) CacheBudget() int64 { return e.cache.Stats().Budget }

// Backend is a store.Backend whose managed tables an Engine serves: what
// the server runs on when the Lance engine serves the data operations.
type Backend struct {
	store.Backend
	*Engine
}

var _ store.ManagedBackend = Backend{}

// WithBackend returns the store.ManagedBackend of b's catalog with e
// serving the rows of its tables.
func WithBackend(b store.Backend, e *Engine) Backend {
	return Backend{Backend: b, Engine: e}
}

// keyedMutex holds one mutex per key, dropped when nobody holds or waits
// for it.
type keyedMutex struct {
	mu    sync.Mutex
	locks map[string]*keyedLock
}

type keyedLock struct {
	sync.Mutex
	users int
}

// lock takes the mutex of key and returns the function that releases it.
func (k *keyedMutex) lock(key string) func() {
	k.mu.Lock()
	l := k.locks[key]
	if l == nil {
		l = &keyedLock{}
		k.locks[key] = l
	}
	l.users++
	k.mu.Unlock()
	l.Lock()
	return func() {
		l.Unlock()
		k.mu.Lock()
		if l.users--; l.users == 0 {
			delete(k.locks, key)
		}
		k.mu.Unlock()
	}
}
