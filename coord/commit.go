package coord

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"go.opentelemetry.io/otel/trace"

	"github.com/lancens/lancens/lance/manifestname"
	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/warehouse"
)

// CommitStore is what the commit coordinator needs of a store.Backend: the
// catalog decides whether a commit happens (put-if-not-exists, strict
// chain), and its location locks keep the processes sharing it apart.
type CommitStore interface {
	DescribeTable(ctx context.Context, id []string) (*store.Table, error)
	store.VersionFinder
	CommitVersion(ctx context.Context, id []string, c store.VersionCommit) (*store.TableVersion, string, error)
	CommitBatch(ctx context.Context, ops []store.BatchOperation) ([]store.BatchResult, string, error)
	store.LocationLocker
}

// Manifests puts the manifests Lance clients stage under their final
// names, on local disk or on object storage; *warehouse.Warehouse is one.
type Manifests interface {
	// Reaches reports whether lancens publishes the manifests of the
	// table at location (on local disk, or on the warehouse's object
	// store).
	Reaches(location string) bool
	// Prepare checks a staged manifest and returns its publication, nil
	// for a table whose files lancens does not reach (the staged path is
	// recorded as given); it returns InvalidInput (13) for one the
	// warehouse refuses, and reads and writes nothing.
	Prepare(location, stagedPath, branch string, v int64, scheme manifestname.Scheme) (*warehouse.Publication, error)
	// Publish puts a prepared manifest at its final name with a
	// conditional write; a different file there, left by an earlier
	// failed attempt, is replaced only with replaceOrphan (and, on object
	// storage, only if lancens published it), otherwise it is
	// ConcurrentModification (14). A store failure is ServiceUnavailable
	// (17) or Internal (18).
	Publish(ctx context.Context, p *warehouse.Publication, replaceOrphan bool) error
	// Settle removes the staged manifest once the version is recorded.
	Settle(ctx context.Context, p *warehouse.Publication) error
	// Discard removes a published manifest whose version was refused, if
	// it is still the one Publish wrote.
	Discard(ctx context.Context, p *warehouse.Publication) error
}

// Committer coordinates version commits of external tables: it turns the
// manifest a Lance client staged into the version's final manifest file and
// records the version, so that the two never disagree.
//
// The store decides whether a commit happens (put-if-not-exists, strict
// chain); the final manifest is put in place before the record, with a
// conditional write (put-if-absent), under a lock per table location, and
// removed again when the record is refused; the staged manifest goes once
// the record is committed. A final manifest of a version that has no
// record is never trusted: the next commit of that version replaces it,
// unless it holds the very content being committed — on object storage
// only when lancens published it, so a manifest another writer put in the
// bucket is never overwritten. The lock of a location whose manifests
// lancens publishes (on local disk or on the warehouse's object store) is
// also the store's (store.LocationLocker), which every process sharing the
// store respects (replicas on PostgreSQL): otherwise two replicas could
// each publish a manifest for one version, and the loser replace or remove
// the winner's. (A SQLite store is served by one process only, which holds
// an OS lock on it: its location locks have nobody else to keep out, and
// this process's lock covers every commit.) The conditional put alone already
// lets only one of racing first publications through; the lock is what
// makes replacing or removing a manifest safe.
//
// The order holds whatever the commit durability (store.CommitDurability)
// of the warehouse and the store. With full durability the manifest is
// synced before the record is written, and the record synced before the
// commit is acknowledged: after a power loss a record never names a
// manifest that is gone. With process durability neither is synced, and
// the order still holds against a crash of the process: the manifest's
// link is in the kernel when Publish returns, before the record is even
// written, and a process that dies takes nothing of the kernel's with it,
// so the record, once SQLite has handed it to the kernel, never survives
// without its manifest (after a power loss it may, which is what that
// setting accepts).
//
// A table's location is looked up before its lock can be taken; the
// committer notes where it found each table. The first commit of a table
// then reads the catalog under the lock: the table's entry, which must
// still be at that location, and the version's record. A later commit of
// its main branch locks the noted location at once and reads nothing
// first: a final manifest name that is free means the version has no
// record, so it publishes with a put-if-absent, and the record's own
// transaction checks that the table still lies there
// (store.VersionCommit.Location). A name already taken, or a table
// dropped and declared again elsewhere, sends it the first way (see
// commitAtNotedPlace).
type Committer struct {
	store     CommitStore
	manifests Manifests
	log       *slog.Logger
	// shared locks locations across every process sharing the store.
	shared store.LocationLocker
	mu     sync.Mutex
	locks  map[string]*lockEntry
	// places notes the location each table was last found at, by its
	// identifier's names joined with NUL; at most maxPlaces.
	places map[string]string
}

// maxPlaces bounds the table locations a Committer notes: when it is
// full, it forgets them all and starts again.
const maxPlaces = 4096

// maxMoves bounds how many times one commit follows its table to another
// location before it gives up (ConcurrentModification (14)).
const maxMoves = 3

type lockEntry struct {
	sync.Mutex
	users int
}

// NewCommitter returns a commit coordinator over st and m that logs to log.
// Commits lock table locations in this process and, through st's
// LockLocations, across every process sharing st.
func NewCommitter(st CommitStore, m Manifests, log *slog.Logger) *Committer {
	return &Committer{store: st, manifests: m, log: log, shared: st, locks: map[string]*lockEntry{}, places: map[string]string{}}
}

// placeKey is the key of table id in Committer.places.
func placeKey(id []string) string { return strings.Join(id, "\x00") }

// place returns where table id was last found, or looks it up. It returns
// the store's errors (TableNotFound (4), ...).
func (m *Committer) place(ctx context.Context, id []string) (string, error) {
	m.mu.Lock()
	loc, ok := m.places[placeKey(id)]
	m.mu.Unlock()
	if ok {
		return loc, nil
	}
	t, err := m.store.DescribeTable(ctx, id)
	if err != nil {
		return "", err
	}
	return t.Location, nil
}

// notePlace notes that table id lies at location; "" forgets it.
func (m *Committer) notePlace(id []string, location string) {
	key := placeKey(id)
	m.mu.Lock()
	defer m.mu.Unlock()
	if location == "" {
		delete(m.places, key)
		return
	}
	if _, ok := m.places[key]; !ok && len(m.places) >= maxPlaces {
		clear(m.places)
	}
	m.places[key] = location
}

// lock takes the commit locks of the given locations, in a fixed order, and
// returns the function that releases them: this process's, and, for
// locations whose manifests lancens publishes, the shared store's. It
// returns the error of the shared store's locks (ctx's when ctx ends
// first).
func (m *Committer) lock(ctx context.Context, locations []string) (func(), error) {
	unlock := m.lockHere(locations)
	var reached []string
	for _, loc := range locations {
		if m.manifests.Reaches(loc) {
			reached = append(reached, loc)
		}
	}
	if len(reached) == 0 {
		return unlock, nil
	}
	unlockShared, err := m.shared.LockLocations(ctx, reached)
	if err != nil {
		unlock()
		return nil, err
	}
	return func() {
		unlockShared()
		unlock()
	}, nil
}

// Lock takes the commit lock of the table at location, in this process
// and across every process sharing the store, as a commit does, and
// returns the function that releases it: work that must not run beside a
// commit of the table (removing its old versions) holds it. It returns
// the error of the shared store's locks (ctx's when ctx ends first).
func (m *Committer) Lock(ctx context.Context, location string) (func(), error) {
	return m.lock(ctx, []string{location})
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
	scheme   manifestname.Scheme
	// newTable is set when the batch itself declares the table, which so
	// has no versions yet.
	newTable bool
	// checked is set once the version was looked up under the lock, and
	// recorded says whether the store holds it.
	checked, recorded bool
	// published is the final manifest put in place for this commit, if
	// any.
	published *warehouse.Publication
}

// prepare puts the staged manifest of a commit whose version is not
// recorded yet at its final name, and fills in the path, size and entity
// tag to record (see Manifests.Prepare). It returns the preparing's and the
// publishing's errors, and touches nothing when the staged manifest is
// refused.
func (m *Committer) prepare(ctx context.Context, p *pendingCommit) error {
	c := p.commit
	c.ManifestPath = c.StagedPath
	pub, err := m.manifests.Prepare(p.location, c.StagedPath, c.Branch, c.Version, p.scheme)
	if err != nil || pub == nil {
		return err
	}
	c.ManifestPath = pub.ManifestPath
	if !p.newTable && !p.checked {
		err := m.check(ctx, p)
		switch {
		case errors.Is(err, store.ErrTableNotFound), errors.Is(err, store.ErrTableBranchNotFound):
			// The table or branch is missing: the commit reports it.
			return nil
		case err != nil:
			// The store could not say (busy, unreachable, cancelled):
			// recording the final path without publishing to it could
			// record a version whose manifest does not exist.
			return err
		}
	}
	if p.recorded {
		// The version is committed: the store answers the retry or the
		// conflict.
		return nil
	}
	pctx, span := tracer().Start(ctx, "coord.PublishManifest", trace.WithAttributes(attrTable.String(strings.Join(p.id, "$")),
		attrVersion.Int64(c.Version), attrManifest.String(pub.ManifestPath)))
	err = m.manifests.Publish(pctx, pub, !p.newTable)
	endSpan(span, err)
	if err != nil {
		return err
	}
	p.published = pub
	c.ManifestSize = &pub.Size
	if pub.ETag != "" {
		c.ETag = &pub.ETag
	}
	return nil
}

// check looks up the version of p, under its location's lock, and sets
// p.checked and p.recorded. It returns the store's errors (TableNotFound
// (4), TableBranchNotFound (22), ...), and ConcurrentModification (14)
// when the table no longer lies at p.location (it was dropped and declared
// again since its location was looked up).
func (m *Committer) check(ctx context.Context, p *pendingCommit) error {
	t, v, err := m.store.FindVersion(ctx, p.id, p.commit.Branch, p.commit.Version)
	switch {
	case errors.Is(err, store.ErrTableNotFound):
		m.notePlace(p.id, "")
		return err
	case err != nil:
		return err
	}
	m.notePlace(p.id, t.Location)
	if t.Location != p.location {
		return store.Errorf(store.CodeConcurrentModification, "table %s moved to %s while its version %d was committed; retry the commit",
			strings.Join(p.id, "$"), t.Location, p.commit.Version)
	}
	p.checked, p.recorded = true, v != nil
	return nil
}

// finish ends the publications of commits after the store answered
// failed (nil: the versions are recorded): for recorded ones the staged
// manifests go, for refused ones the final manifests published for them —
// unless the store may hold the version with that manifest after all: a
// commit can land although its answer was lost (a request cancelled while
// PostgreSQL commits), and removing its manifest would lose the version.
// A refusal that carries the store's own reason (any code but
// ServiceUnavailable (17) and Internal (18)) rolled the transaction back:
// that manifest goes without asking.
func (m *Committer) finish(ctx context.Context, pending []*pendingCommit, failed error) {
	ctx = context.WithoutCancel(ctx)
	for _, p := range pending {
		if p.published == nil {
			continue
		}
		if failed == nil {
			if err := m.manifests.Settle(ctx, p.published); err != nil {
				m.log.Warn("remove staged manifest", slog.String("location", p.location), slog.Any("error", err))
			}
			continue
		}
		if mayHaveLanded(failed) && m.recorded(ctx, p) {
			m.log.Warn("a refused commit's version is recorded with its manifest: keeping the manifest",
				slog.String("location", p.location), slog.Int64("version", p.commit.Version))
			continue
		}
		if err := m.manifests.Discard(ctx, p.published); err != nil {
			m.log.Warn("remove final manifest", slog.String("location", p.location), slog.Any("error", err))
		}
	}
}

// mayHaveLanded reports whether a commit the store answered with err may
// be recorded all the same: unless err is the store's refusal for a reason
// of its own, it may have failed after the transaction committed.
func mayHaveLanded(err error) bool {
	var se *store.Error
	if !errors.As(err, &se) {
		return true
	}
	return se.Code == store.CodeServiceUnavailable || se.Code == store.CodeInternal
}

// recorded reports whether the store holds the version of p with the
// manifest p published (its name, size and, on object storage, entity
// tag). When the store cannot tell, it reports true: a
// manifest left in place is replaced by the next commit of the version,
// a removed one cannot be brought back.
func (m *Committer) recorded(ctx context.Context, p *pendingCommit) bool {
	c := p.commit
	_, v, err := m.store.FindVersion(ctx, p.id, c.Branch, c.Version)
	switch {
	case errors.Is(err, store.ErrTableNotFound), errors.Is(err, store.ErrTableBranchNotFound):
		return false
	case err != nil:
		return true
	case v == nil:
		return false
	}
	pub := p.published
	return v.ManifestPath == pub.ManifestPath && (v.ManifestSize == nil || *v.ManifestSize == pub.Size) &&
		(pub.ETag == "" || v.ETag != nil && *v.ETag == pub.ETag)
}

// Commit records version c of table id, whose final manifest is named by
// scheme, and returns the version and the transaction id. It returns the
// store's errors (TableNotFound (4), a conflict, ...) and the
// warehouse's (InvalidInput (13) for a staged manifest it refuses).
func (m *Committer) Commit(ctx context.Context, id []string, c store.VersionCommit, scheme manifestname.Scheme) (*store.TableVersion, string, error) {
	if v, txID, done, err := m.commitAtNotedPlace(ctx, id, c, scheme); done {
		return v, txID, err
	}
	p, unlock, err := m.lockCommit(ctx, id, &c, scheme)
	if err != nil {
		return nil, "", err
	}
	defer unlock()
	if err := m.prepare(ctx, p); err != nil {
		return nil, "", err
	}
	v, txID, err := m.store.CommitVersion(ctx, id, c)
	m.finish(ctx, []*pendingCommit{p}, err)
	return v, txID, err
}

// commitAtNotedPlace commits version c of table id, on its main branch, at
// the location the committer noted for the table, without reading the
// catalog first: under the location's lock it puts the staged manifest at
// its final name with a put-if-absent, and when that name was free the
// version has no record (a version is recorded only once its final
// manifest is in place, and under the lock nobody else records one), so the
// manifest may stay; the record then checks, in its own transaction, that
// the table still lies at that location (VersionCommit.Location). It
// saves the read of the version that lockCommit makes. done is false, with
// nothing of the attempt left behind, whenever that does not apply: no
// noted location, a branch, a table lancens does not publish for, a final
// name already taken or a publication that failed, a table that moved;
// Commit then reads first. Otherwise it returns what Commit returns.
func (m *Committer) commitAtNotedPlace(ctx context.Context, id []string, c store.VersionCommit, scheme manifestname.Scheme) (v *store.TableVersion, txID string, done bool, err error) {
	if c.Branch != "" {
		return nil, "", false, nil
	}
	m.mu.Lock()
	loc, ok := m.places[placeKey(id)]
	m.mu.Unlock()
	if !ok {
		return nil, "", false, nil
	}
	pub, err := m.manifests.Prepare(loc, c.StagedPath, c.Branch, c.Version, scheme)
	if err != nil || pub == nil {
		return nil, "", false, nil
	}
	unlock, err := m.lock(ctx, []string{loc})
	if err != nil {
		return nil, "", true, err
	}
	defer unlock()
	pctx, span := tracer().Start(ctx, "coord.PublishManifest", trace.WithAttributes(attrTable.String(strings.Join(id, "$")),
		attrVersion.Int64(c.Version), attrManifest.String(pub.ManifestPath)))
	err = m.manifests.Publish(pctx, pub, false)
	endSpan(span, err)
	if err != nil || !pub.Wrote() {
		return nil, "", false, nil
	}
	c.Location, c.ManifestPath, c.ManifestSize = loc, pub.ManifestPath, &pub.Size
	if pub.ETag != "" {
		c.ETag = &pub.ETag
	}
	p := &pendingCommit{id: id, location: loc, commit: &c, scheme: scheme, published: pub}
	v, txID, err = m.store.CommitVersion(ctx, id, c)
	m.finish(ctx, []*pendingCommit{p}, err)
	switch {
	case err == nil:
		return v, txID, true, nil
	case errors.Is(err, store.ErrTableNotFound):
		m.notePlace(id, "")
	case store.ErrorCode(err) == store.CodeConcurrentModification:
		// A conflict, or the table lies elsewhere now: then Commit
		// follows it there.
		if t, derr := m.store.DescribeTable(ctx, id); derr == nil && t.Location != loc {
			m.notePlace(id, "")
			return nil, "", false, nil
		}
	}
	return nil, "", true, err
}

// lockCommit takes the lock of the location of table id and looks up
// version c under it, following the table if it moved meanwhile; it
// returns the commit and the function that releases the lock. It returns
// the store's errors (TableNotFound (4), TableBranchNotFound (22), ...),
// and ConcurrentModification (14) for a table that keeps moving.
func (m *Committer) lockCommit(ctx context.Context, id []string, c *store.VersionCommit, scheme manifestname.Scheme) (*pendingCommit, func(), error) {
	loc, err := m.place(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	for moves := 0; ; moves++ {
		unlock, err := m.lock(ctx, []string{loc})
		if err != nil {
			return nil, nil, err
		}
		p := &pendingCommit{id: id, location: loc, commit: c, scheme: scheme}
		err = m.check(ctx, p)
		if err == nil {
			return p, unlock, nil
		}
		unlock()
		if store.ErrorCode(err) != store.CodeConcurrentModification || moves == maxMoves {
			return nil, nil, err
		}
		if loc, err = m.place(ctx, id); err != nil {
			return nil, nil, err
		}
	}
}

// CommitBatch applies a batch in one store transaction and returns the
// results of its operations and the transaction id; schemes holds the
// naming scheme of each version commit, at the index of its operation. It
// returns the errors Commit does; on any, nothing of the batch stays.
func (m *Committer) CommitBatch(ctx context.Context, ops []store.BatchOperation, schemes []manifestname.Scheme) ([]store.BatchResult, string, error) {
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
			m.finish(ctx, pending, err)
			return nil, "", err
		}
	}
	results, txID, err := m.store.CommitBatch(ctx, ops)
	m.finish(ctx, pending, err)
	return results, txID, err
}
