package engine

import (
	"context"
	"strconv"
	"time"

	"github.com/lancens/lancens/lance/table"
	"github.com/lancens/lancens/store"
)

// Retention of old versions, and optimize. The catalog is the source of
// truth for which versions exist, so a cleanup has two steps, both under
// the table's write lock in this process and its commit lock across every
// process sharing the catalog (the one commits take while they put a
// manifest in place and record it):
//
//  1. the version records the retention rules let go (committed before
//     the cutoff; not the latest of a branch, tagged, or forked from) are
//     deleted (store.EngineCatalog.RemoveOldVersions): from then on those
//     versions answer TableVersionNotFound (11);
//  2. on main and on every branch, lance/table's Cleanup removes the
//     manifests of the versions older than the latest recorded one that
//     the catalog no longer records (these, and those DeleteTableVersions
//     removed earlier), then every data, deletion, transaction and index
//     file no remaining version (of the branch, or of a branch made from
//     it) refers to. Manifests go before files, so a cleanup cut short
//     leaves no version whose files are gone; files no version refers to
//     that are younger than table.UnverifiedAge stay (they may be a write
//     in progress).
//
// Versions Lance's own tag files name are kept too. A read of a removed
// version that began before the cleanup may fail (as in Lance); the
// retention period (--retain-versions-for, a week by default) is what
// keeps that from happening.
//
// Optimize compacts first (lance/table's Compact: small fragments merged,
// deleted rows dropped, as one Rewrite version committed like any write),
// then cleans up: with a cutoff of now, only what something keeps stays.

// CleanupVersions implements store.VersionCleanup. It returns
// TableNotFound (4), and InvalidTableState (19) for a table without data
// or one whose versions its storage keeps rather than the catalog (Lance's
// own cleanup applies to it).
func (e *Engine) CleanupVersions(ctx context.Context, id []string, before time.Time) (store.CleanupResult, string, error) {
	main := &Engine{shared: e.shared}
	r, err := main.cleanable(ctx, id)
	if err != nil {
		return store.CleanupResult{}, "", err
	}
	res, err := main.cleanup(ctx, r, before)
	if err != nil {
		return res, "", err
	}
	txID, err := e.cat.RecordWork(ctx, r.t.UUID, store.JobCleanupVersions, store.TxSucceeded, cleanupProperties(res), nil)
	return res, txID, err
}

// cleanable returns table id for a cleanup: see CleanupVersions.
func (e *Engine) cleanable(ctx context.Context, id []string) (*tableRef, error) {
	r, err := e.findData(ctx, id)
	if err != nil {
		return nil, err
	}
	if !r.t.ManagedVersioning {
		return nil, notDataTable(r.t, "keeps its versions in storage, not in the catalog; clean it up with Lance (cleanup_old_versions)")
	}
	return r, nil
}

// cleanupProperties are the properties of the transaction recording a
// cleanup or an optimize.
func cleanupProperties(res store.CleanupResult) map[string]string {
	return map[string]string{
		"versions_removed": strconv.FormatInt(res.Versions, 10), "rows_removed": strconv.FormatInt(res.Rows, 10),
		"bytes_freed": strconv.FormatInt(res.BytesFreed, 10), "fragments_removed": strconv.FormatInt(res.FragmentsRemoved, 10),
		"fragments_added": strconv.FormatInt(res.FragmentsAdded, 10),
	}
}

// QueueCleanups implements store.VersionCleanup: the catalog queues them
// (store.EngineCatalog.QueueVersionCleanups).
func (e *Engine) QueueCleanups(ctx context.Context, before time.Time) (int, error) {
	return e.cat.QueueVersionCleanups(ctx, before)
}

// RunCleanup implements store.VersionCleanup. A table dropped meanwhile,
// or no longer one the retention applies to, is no error.
func (e *Engine) RunCleanup(ctx context.Context, job store.CleanupVersions) (store.CleanupResult, error) {
	t, err := e.cat.DescribeTableByUUID(ctx, job.TableUUID)
	if store.ErrorCode(err) == store.CodeTableNotFound {
		return store.CleanupResult{}, nil
	}
	if err != nil {
		return store.CleanupResult{}, err
	}
	main := &Engine{shared: e.shared}
	r, err := main.cleanable(ctx, t.ID)
	switch store.ErrorCode(err) {
	case store.CodeTableNotFound, store.CodeInvalidTableState:
		return store.CleanupResult{}, nil
	}
	if err != nil {
		return store.CleanupResult{}, err
	}
	var before time.Time
	if job.BeforeMillis > 0 {
		before = time.UnixMilli(job.BeforeMillis)
	}
	return main.cleanup(ctx, r, before)
}

// Optimize implements store.VersionCleanup: it compacts table id, removes
// the versions committed before before that nothing keeps, and queues a
// rebuild of the indexes that no longer cover every fragment. It returns
// the errors of each step; the steps before a failed one stay done.
func (e *Engine) Optimize(ctx context.Context, id []string, before time.Time) (store.CleanupResult, string, error) {
	main := &Engine{shared: e.shared}
	r, err := main.cleanable(ctx, id)
	if err != nil {
		return store.CleanupResult{}, "", err
	}
	stats, err := retryConflicts(ctx, func() (table.CompactStats, error) { return main.compact(ctx, r) })
	if err != nil {
		return store.CleanupResult{}, "", err
	}
	res, err := main.cleanup(ctx, r, before)
	if err != nil {
		return res, "", err
	}
	res.FragmentsRemoved, res.FragmentsAdded = int64(stats.FragmentsRemoved), int64(stats.FragmentsAdded)
	if _, err := main.OptimizeIndexes(ctx, id); err != nil {
		return res, "", err
	}
	txID, err := e.cat.RecordWork(ctx, r.t.UUID, "OptimizeTable", store.TxSucceeded, cleanupProperties(res), nil)
	return res, txID, err
}

// compact rewrites the small fragments of the latest version of table r,
// and those with many deleted rows, as one new version (nothing when there
// is nothing to rewrite).
func (e *Engine) compact(ctx context.Context, r *tableRef) (table.CompactStats, error) {
	unlock := e.writers.lock(r.t.UUID)
	defer unlock()
	s, err := e.open(ctx, r, nil)
	if err != nil {
		return table.CompactStats{}, err
	}
	c := &committer{e: e, ref: r}
	_, stats, err := s.ds.WithOptions(e.writeOptions(r, c)).Compact(ctx, table.CompactOptions{
		TargetRows: e.maxRows, File: e.fileOptions(s.ds.Manifest())})
	return stats, dataError(r.id, err)
}

// cleanup removes the versions of table r committed before before that
// nothing keeps, on every branch, and the files no remaining version
// refers to (see above).
func (e *Engine) cleanup(ctx context.Context, r *tableRef, before time.Time) (store.CleanupResult, error) {
	var res store.CleanupResult
	unlock := e.writers.lock(r.t.UUID)
	defer unlock()
	unlockCommits, err := e.commits.Lock(ctx, r.t.Location)
	if err != nil {
		return res, err
	}
	defer unlockCommits()
	if !before.IsZero() {
		if res.Versions, err = e.cat.RemoveOldVersions(ctx, r.t.UUID, before); err != nil {
			return res, err
		}
	}
	branches, err := e.branchNames(ctx, r.id)
	if err != nil {
		return res, err
	}
	for _, b := range branches {
		rb := *r
		rb.branch = b
		stats, err := e.sweep(ctx, &rb, before)
		res.Rows += int64(stats.Rows)
		res.BytesFreed += stats.Bytes
		if err != nil {
			return res, err
		}
	}
	return res, nil
}

// branchNames returns main ("") and the branches the catalog has of table
// id.
func (e *Engine) branchNames(ctx context.Context, id []string) ([]string, error) {
	out := []string{""}
	page := store.Page{}
	for {
		bs, next, err := e.cat.ListBranches(ctx, id, page)
		if err != nil {
			return nil, err
		}
		for _, b := range bs {
			out = append(out, b.Name)
		}
		if next == "" {
			return out, nil
		}
		page.Token = next
	}
}

// recordedVersions returns the versions the catalog records of the
// table's branch.
func (e *Engine) recordedVersions(ctx context.Context, r *tableRef) (map[uint64]bool, uint64, error) {
	out := map[uint64]bool{}
	var latest uint64
	page := store.Page{}
	for {
		vs, next, err := e.cat.ListVersions(ctx, r.id, r.branch, false, page)
		if err != nil {
			return nil, 0, err
		}
		for _, v := range vs {
			out[uint64(v.Version)] = true
			latest = max(latest, uint64(v.Version))
		}
		if next == "" {
			return out, latest, nil
		}
		page.Token = next
	}
}

// sweep removes the manifests of the versions of the table's branch older
// than its latest recorded one that the catalog does not record, and the
// files no remaining version refers to; files no version refers to go
// when they are older than before and than table.UnverifiedAge.
func (e *Engine) sweep(ctx context.Context, r *tableRef, before time.Time) (table.CleanupStats, error) {
	recorded, latest, err := e.recordedVersions(ctx, r)
	if err != nil || latest == 0 {
		return table.CleanupStats{}, err // a branch not made yet has no files
	}
	ds, err := table.OpenVersion(ctx, r.root, r.branch, latest, e.readOptions(r))
	if err != nil {
		return table.CleanupStats{}, dataError(r.id, err)
	}
	stats, err := ds.Cleanup(ctx, table.CleanupOptions{Before: before, Remove: func(v uint64) bool {
		return v < latest && !recorded[v]
	}})
	return stats, dataError(r.id, err)
}
