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
// chain); the final manifest is put in place before the record, with a
// conditional write (put-if-absent), under a lock per table location, and
// removed again when the record is refused; the staged manifest goes once
// the record is committed. A final manifest of a version that has no record
// is never trusted: the next commit of that version replaces it, unless it
// holds the very content being committed.
type committer struct {
	store     Store
	warehouse *warehouse.Warehouse
	log       *slog.Logger
	mu        sync.Mutex
	locks     map[string]*lockEntry
}

type lockEntry struct {
	sync.Mutex
	users int
}

func newCommitter(st Store, wh *warehouse.Warehouse, log *slog.Logger) *committer {
	return &committer{store: st, warehouse: wh, log: log, locks: map[string]*lockEntry{}}
}

// lock takes the commit locks of the given locations, in a fixed order, and
// returns the function that releases them.
func (m *committer) lock(locations []string) func() {
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
	// published is the final manifest put in place for this commit, if
	// any.
	published *warehouse.Publication
}

// prepare puts the staged manifest of a commit whose version is not
// recorded yet at its final name, when lancens reaches the table's files
// (on local disk, or on the object store of the warehouse), and fills in
// the path, size and tag to record. Other commits record the staged path
// as given. The staged manifest must lie inside the table's location
// (reached through no symbolic link on local disk), and the location
// inside the warehouse or an external root: otherwise it returns
// InvalidInput (13) and touches nothing. A store failure is
// ServiceUnavailable (17) or Internal (18).
func (m *committer) prepare(ctx context.Context, p *pendingCommit) error {
	c := p.commit
	c.ManifestPath = c.StagedPath
	pub, err := m.warehouse.Prepare(p.location, c.StagedPath, c.Branch, c.Version, p.scheme)
	if err != nil || pub == nil {
		return err
	}
	c.ManifestPath = pub.ManifestPath
	if !p.newTable {
		_, err := m.store.DescribeVersion(ctx, p.id, c.Branch, &c.Version)
		if !errors.Is(err, store.ErrTableVersionNotFound) {
			// Either the version is committed (the store answers the retry
			// or the conflict) or the table or branch is missing (the
			// commit reports it).
			return nil
		}
	}
	if err := m.warehouse.Publish(ctx, pub, !p.newTable); err != nil {
		return err
	}
	p.published = pub
	c.ManifestSize = &pub.Size
	if pub.ETag != "" {
		c.ETag = &pub.ETag
	}
	return nil
}

// finish ends the publications of commits: for recorded ones the staged
// manifests go, for refused ones the final manifests written for them.
func (m *committer) finish(ctx context.Context, pending []*pendingCommit, recorded bool) {
	ctx = context.WithoutCancel(ctx)
	for _, p := range pending {
		if p.published == nil {
			continue
		}
		what, err := "staged", m.warehouse.Settle(ctx, p.published)
		if !recorded {
			what, err = "final", m.warehouse.Discard(ctx, p.published)
		}
		if err != nil {
			m.log.Warn("remove "+what+" manifest", slog.String("location", p.location), slog.Any("error", err))
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
	unlock := m.lock([]string{t.Location})
	defer unlock()
	if err := m.prepare(ctx, p); err != nil {
		return nil, "", err
	}
	v, txID, err := m.store.CommitVersion(ctx, id, c)
	m.finish(ctx, []*pendingCommit{p}, err == nil)
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
	unlock := m.lock(locations)
	defer unlock()
	for _, p := range pending {
		if err := m.prepare(ctx, p); err != nil {
			m.finish(ctx, pending, false)
			return nil, "", err
		}
	}
	results, txID, err := m.store.CommitBatch(ctx, ops)
	m.finish(ctx, pending, err == nil)
	return results, txID, err
}
