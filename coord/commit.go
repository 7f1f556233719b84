package coord

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/warehouse"
)

// CommitStore is what the commit coordinator needs of the catalog: it
// decides whether a commit happens (put-if-not-exists, strict chain).
type CommitStore interface {
	DescribeTable(ctx context.Context, id []string) (*store.Table, error)
	DescribeVersion(ctx context.Context, id []string, branch string, v *int64) (*store.TableVersion, error)
	CommitVersion(ctx context.Context, id []string, c store.VersionCommit) (*store.TableVersion, string, error)
	CommitBatch(ctx context.Context, ops []store.BatchOperation) ([]store.BatchResult, string, error)
}

// Manifests puts the manifests Lance clients stage under their final
// names; *warehouse.Warehouse is one.
type Manifests interface {
	// PlanManifest checks a staged manifest and says where it goes; it
	// returns InvalidInput (13) for one the warehouse refuses.
	PlanManifest(location, stagedPath, branch string, v int64, scheme warehouse.NamingScheme) (warehouse.ManifestPlan, error)
	// Publish puts a planned manifest in place, replacing a file an
	// earlier failed attempt left when replace is set; without it, an
	// existing file is ConcurrentModification (14).
	Publish(p warehouse.ManifestPlan, replace bool) (*warehouse.Manifest, error)
	// Discard removes a published manifest whose version was refused.
	Discard(m *warehouse.Manifest) error
}

// Committer coordinates version commits of external tables: it turns the
// manifest a Lance client staged into the version's final manifest file and
// records the version, so that the two never disagree.
//
// The store decides whether a commit happens (put-if-not-exists, strict
// chain); the final manifest is put in place before the record, under a lock
// per table location, and removed again when the record is refused. A final
// manifest of a version that has no record is never trusted: the next
// commit of that version replaces it. When several processes share the
// store (replicas on PostgreSQL), the lock of a location on local disk is
// also the store's, which every replica respects: otherwise two replicas
// could each publish a manifest for one version, and the loser replace or
// remove the winner's.
type Committer struct {
	store     CommitStore
	manifests Manifests
	log       *slog.Logger
	// shared, when the store is shared by several processes, locks
	// locations across all of them.
	shared store.LocationLocker
	mu     sync.Mutex
	locks  map[string]*lockEntry
}

type lockEntry struct {
	sync.Mutex
	users int
}

// NewCommitter returns a commit coordinator over st and m that logs to log.
// When st is shared by several processes it should implement
// store.LocationLocker: commits then lock table locations across all of
// them.
func NewCommitter(st CommitStore, m Manifests, log *slog.Logger) *Committer {
	shared, _ := st.(store.LocationLocker)
	return &Committer{store: st, manifests: m, log: log, shared: shared, locks: map[string]*lockEntry{}}
}

// lock takes the commit locks of the given locations, in a fixed order, and
// returns the function that releases them: this process's, and, for
// locations on local disk, the shared store's. It returns the error of the
// shared store's locks (ctx's when ctx ends first).
func (m *Committer) lock(ctx context.Context, locations []string) (func(), error) {
	unlock := m.lockHere(locations)
	if m.shared == nil {
		return unlock, nil
	}
	var local []string
	for _, loc := range locations {
		if _, ok := warehouse.LocalPath(loc); ok {
			local = append(local, loc)
		}
	}
	if len(local) == 0 {
		return unlock, nil
	}
	unlockShared, err := m.shared.LockLocations(ctx, local)
	if err != nil {
		unlock()
		return nil, err
	}
	return func() {
		unlockShared()
		unlock()
	}, nil
}

// lockHere takes this process's commit locks of the given locations, in a
// fixed order, and returns the function that releases them.
func (m *Committer) lockHere(locations []string) func() {
	keys := slices.Compact(slices.Sorted(slices.Values(locations)))
	entries := make([]*lockEntry, len(keys))
	m.mu.Lock()
	for i, k := range keys {
		e := m.locks[k]
		if e == nil {
			e = &lockEntry{}
			m.locks[k] = e
		}
		e.users++
		entries[i] = e
	}
	m.mu.Unlock()
	for _, e := range entries {
		e.Lock()
	}
	return func() {
		for _, e := range entries {
			e.Unlock()
		}
		m.mu.Lock()
		for i, e := range entries {
			if e.users--; e.users == 0 {
				delete(m.locks, keys[i])
			}
		}
		m.mu.Unlock()
	}
}

// pendingCommit is one version to commit, with where its table lives.
type pendingCommit struct {
	id       []string
	location string // "" when the table does not exist (the store reports it)
	commit   *store.VersionCommit
	scheme   warehouse.NamingScheme
	// newTable is set when the batch itself declares the table, which so
	// has no versions yet.
	newTable bool
	// published is the manifest put in place for this commit, if any.
	published *warehouse.Manifest
}

// prepare puts the staged manifest of a commit whose version is not
// recorded yet at its final name, and fills in the paths to record (see
// Manifests.PlanManifest). It returns the planning's and the publishing's
// errors, and touches nothing when the plan is refused.
func (m *Committer) prepare(ctx context.Context, p *pendingCommit) error {
	c := p.commit
	c.ManifestPath = c.StagedPath
	plan, err := m.manifests.PlanManifest(p.location, c.StagedPath, c.Branch, c.Version, p.scheme)
	if err != nil {
		return err
	}
	c.ManifestPath = plan.Path
	if !plan.Pending() {
		return nil
	}
	if !p.newTable {
		_, err := m.store.DescribeVersion(ctx, p.id, c.Branch, &c.Version)
		if !errors.Is(err, store.ErrTableVersionNotFound) {
			// Either the version is committed (the store answers the retry
			// or the conflict) or the table or branch is missing (the
			// commit reports it).
			return nil
		}
	}
	man, err := m.manifests.Publish(plan, !p.newTable)
	if err != nil {
		return err
	}
	p.published = man
	c.ManifestSize = &man.Size
	return nil
}

// discard removes the final manifests published for commits that were
// then refused.
func (m *Committer) discard(pending []*pendingCommit) {
	for _, p := range pending {
		if p.published == nil {
			continue
		}
		if err := m.manifests.Discard(p.published); err != nil {
			m.log.Warn("remove manifest file", slog.String("path", p.published.LocalPath), slog.Any("error", err))
		}
	}
}

// Commit records version c of table id, whose final manifest is named by
// scheme, and returns the version and the transaction id. It returns the
// store's errors (TableNotFound (4), a conflict, ...) and the
// warehouse's (InvalidInput (13) for a staged manifest it refuses).
func (m *Committer) Commit(ctx context.Context, id []string, c store.VersionCommit, scheme warehouse.NamingScheme) (*store.TableVersion, string, error) {
	t, err := m.store.DescribeTable(ctx, id)
	if err != nil {
		return nil, "", err
	}
	p := &pendingCommit{id: id, location: t.Location, commit: &c, scheme: scheme}
	unlock, err := m.lock(ctx, []string{t.Location})
	if err != nil {
		return nil, "", err
	}
	defer unlock()
	if err := m.prepare(ctx, p); err != nil {
		return nil, "", err
	}
	v, txID, err := m.store.CommitVersion(ctx, id, c)
	if err != nil {
		m.discard([]*pendingCommit{p})
	}
	return v, txID, err
}

// CommitBatch applies a batch in one store transaction and returns the
// results of its operations and the transaction id; schemes holds the
// naming scheme of each version commit, at the index of its operation. It
// returns the errors Commit does; on any, nothing of the batch stays.
func (m *Committer) CommitBatch(ctx context.Context, ops []store.BatchOperation, schemes []warehouse.NamingScheme) ([]store.BatchResult, string, error) {
	declared := map[string]string{}
	var pending []*pendingCommit
	var locations []string
	for i, op := range ops {
		key := strings.Join(op.ID, "\x00")
		switch {
		case op.Declare != nil:
			declared[key] = op.Declare.Location
			locations = append(locations, op.Declare.Location)
		case op.CommitVersion != nil:
			loc, isNew := declared[key]
			if !isNew {
				t, err := m.store.DescribeTable(ctx, op.ID)
				if err != nil {
					continue // the batch fails on this operation
				}
				loc = t.Location
			}
			locations = append(locations, loc)
			pending = append(pending, &pendingCommit{id: op.ID, location: loc, commit: op.CommitVersion, scheme: schemes[i], newTable: isNew})
		}
	}
	unlock, err := m.lock(ctx, locations)
	if err != nil {
		return nil, "", err
	}
	defer unlock()
	for _, p := range pending {
		if err := m.prepare(ctx, p); err != nil {
			m.discard(pending)
			return nil, "", err
		}
	}
	results, txID, err := m.store.CommitBatch(ctx, ops)
	if err != nil {
		m.discard(pending)
	}
	return results, txID, err
}
