package server

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

// committer coordinates version commits of external tables: it turns the
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
type committer struct {
	store     Store
	warehouse *warehouse.Warehouse
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

// newCommitter returns the commit coordinator of st; shared, when not nil,
// locks locations across the processes sharing st.
func newCommitter(st Store, shared store.LocationLocker, wh *warehouse.Warehouse, log *slog.Logger) *committer {
	return &committer{store: st, shared: shared, warehouse: wh, log: log, locks: map[string]*lockEntry{}}
}

// lock takes the commit locks of the given locations, in a fixed order, and
// returns the function that releases them: this process's, and, for
// locations on local disk, the shared store's. It returns the error of the
// shared store's locks (ctx's when ctx ends first).
func (m *committer) lock(ctx context.Context, locations []string) (func(), error) {
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
func (m *committer) lockHere(locations []string) func() {
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
	scheme   store.NamingScheme
	// newTable is set when the batch itself declares the table, which so
	// has no versions yet.
	newTable bool
	// finalized is the manifest written for this commit, if any.
	finalized *warehouse.Manifest
}

// prepare moves the staged manifest of a commit whose table is on local disk
// and whose version is not recorded yet to its final name, and fills in the
// paths to record. Commits on remote storage record the staged path as
// given. The staged file must lie inside the table's location, reached
// through no symbolic link, and the location inside the warehouse or an
// external root: otherwise it returns InvalidInput (13) and touches nothing.
func (m *committer) prepare(ctx context.Context, p *pendingCommit) error {
	c := p.commit
	c.ManifestPath = c.StagedPath
	dir, local := warehouse.LocalPath(p.location)
	if !local {
		return nil
	}
	staged, err := warehouse.StagedManifest(dir, c.StagedPath)
	if err != nil {
		return err
	}
	if err := m.warehouse.CheckStaged(dir, staged); err != nil {
		return err
	}
	final := warehouse.ManifestPath(dir, c.Branch, c.Version, p.scheme)
	c.ManifestPath = warehouse.ObjectPath(final)
	if staged == final {
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
	man, err := m.warehouse.Finalize(dir, staged, final, !p.newTable)
	if err != nil {
		return err
	}
	p.finalized = man
	c.ManifestSize = &man.Size
	return nil
}

// discard removes the final manifests written for commits that were then
// refused.
func (m *committer) discard(pending []*pendingCommit) {
	for _, p := range pending {
		if p.finalized == nil {
			continue
		}
		if err := m.warehouse.Discard(p.finalized); err != nil {
			m.log.Warn("remove manifest file", slog.String("path", p.finalized.LocalPath), slog.Any("error", err))
		}
	}
}

// commit records one version of table id.
func (m *committer) commit(ctx context.Context, id []string, c store.VersionCommit, scheme store.NamingScheme) (*store.TableVersion, string, error) {
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

// commitBatch applies a batch; schemes holds the naming scheme of each
// version commit, at the index of its operation.
func (m *committer) commitBatch(ctx context.Context, ops []store.BatchOperation, schemes []store.NamingScheme) ([]store.BatchResult, string, error) {
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
