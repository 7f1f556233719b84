package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancens/lancens/internal/memcache"
	"github.com/lancens/lancens/lance/blob"
	"github.com/lancens/lancens/lance/table"
	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/warehouse"
)

// tableRef is a table as the catalog describes it, with where its files
// are and the branch an operation acts on.
type tableRef struct {
	id     []string
	t      *store.Table
	branch string
	root   blob.Store
	// local is set for a table on local disk, where a read costs little;
	// on object storage each request costs milliseconds.
	local bool
}

// find returns table id as the data operations see it. It returns
// NamespaceNotFound (1) and TableNotFound (4) from the catalog,
// InvalidTableState (19) for a table whose rows an earlier release keeps
// (store.Managed: `lancens migrate` converts them) or whose location
// lancens does not reach, and InvalidInput (13) for a location the
// warehouse refuses.
func (e *Engine) find(ctx context.Context, id []string) (*tableRef, error) {
	t, err := e.cat.DescribeTable(ctx, id)
	if err != nil {
		return nil, err
	}
	if t.Kind == store.Managed {
		return nil, notDataTable(t, "keeps its rows in the row store of an earlier lancens, which this engine does not read; convert it with lancens migrate")
	}
	root, ok, err := e.wh.Blobs(t.Location)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, notDataTable(t, fmt.Sprintf("is at %s, where lancens does not reach its files (only the warehouse's disk or object store)", t.Location))
	}
	_, local := warehouse.LocalPath(t.Location)
	return &tableRef{id: t.ID, t: t, branch: e.branch, root: root, local: local}, nil
}

// findData returns table id as find does, and InvalidTableState (19) for a
// table declared without data yet.
func (e *Engine) findData(ctx context.Context, id []string) (*tableRef, error) {
	r, err := e.find(ctx, id)
	if err != nil {
		return nil, err
	}
	if r.t.Declared {
		return nil, notDataTable(r.t, "is declared but has no data yet; create it or insert into it first")
	}
	return r, nil
}

// uri is the table's location as Lance records it in base paths.
func (r *tableRef) uri() string { return r.t.Location }

// cacheKey returns the prefix of the cache keys of the table's values: its
// uuid, so that a table dropped and made again under its name shares
// nothing with the old one.
func (r *tableRef) cacheKey() string { return r.t.UUID + "/" }

// readOptions are the options datasets are opened with for reading.
func (e *Engine) readOptions(r *tableRef) table.Options {
	return table.Options{URI: r.uri(), OpenBase: e.openBase}
}

// openBase opens the store of a base path outside the table's own root
// (the source of a shallow clone). It returns an error wrapping
// table.ErrUnsupported for a path lancens does not reach.
func (e *Engine) openBase(_ context.Context, p string) (blob.Store, error) {
	s, ok, err := e.wh.Blobs(p)
	if err != nil {
		return nil, fmt.Errorf("%w: base path %s: %v", table.ErrUnsupported, p, err)
	}
	if !ok {
		return nil, fmt.Errorf("%w: base path %s is not where lancens reaches files", table.ErrUnsupported, p)
	}
	return s, nil
}

// latest returns the newest version of the table's branch: the catalog's
// record when the catalog coordinates its commits (managed versioning),
// the newest manifest in storage otherwise. It returns
// TableVersionNotFound (11) when the catalog has no version of the branch,
// TableBranchNotFound (22) for a branch the table lacks, and
// InvalidTableState (19) when storage holds no dataset.
func (e *Engine) latest(ctx context.Context, r *tableRef) (uint64, error) {
	v, _, err := e.latestRecord(ctx, r)
	return v, err
}

// latestRecord returns what latest does and the stamp of the version's
// catalog record (see datasetKey; 0 for a table versioned by its storage).
// A branch the catalog has but that has no version yet is made first (see
// forkBranch).
func (e *Engine) latestRecord(ctx context.Context, r *tableRef) (uint64, int64, error) {
	if r.t.ManagedVersioning {
		v, err := e.cat.DescribeVersion(ctx, r.id, r.branch, nil)
		if r.branch != "" && errors.Is(err, store.ErrTableVersionNotFound) {
			if err = e.forkBranch(ctx, r); err == nil {
				v, err = e.cat.DescribeVersion(ctx, r.id, r.branch, nil)
			}
		}
		if err != nil {
			return 0, 0, err
		}
		return uint64(v.Version), recordStamp(v), nil
	}
	ds, err := table.OpenBranch(ctx, r.root, r.branch, e.readOptions(r))
	if errors.Is(err, table.ErrNotFound) {
		return 0, 0, notDataTable(r.t, fmt.Sprintf("has no Lance dataset (branch %s) at %s", store.BranchName(r.branch), r.t.Location))
	}
	if err != nil {
		return 0, 0, dataError(r.id, err)
	}
	e.cache.Put(r.datasetKey(ds.Version(), 0), newSnapshot(ds))
	return ds.Version(), 0, nil
}

// recordStamp tells apart the catalog records one version number of a
// branch has had: a version whose record was deleted (a branch deleted
// and made again, a rolled-back commit) may be committed again with other
// content.
func recordStamp(v *store.TableVersion) int64 { return v.Timestamp.UnixMilli() }

// snapshot is one version of a table, opened for reading: its dataset and
// the Arrow form of its schema. Snapshots are cached by table, branch and
// version, and never change.
type snapshot struct {
	ds    *table.Dataset
	arrow *arrow.Schema
	err   error // the schema's conversion error
	size  int64
}

func newSnapshot(ds *table.Dataset) *snapshot {
	s := &snapshot{ds: ds}
	s.arrow, s.err = ds.Manifest().Schema.ToArrow()
	s.size = 4096 + 2*ds.ManifestInfo().Size
	return s
}

// CacheBytes implements memcache.Value.
func (s *snapshot) CacheBytes() int64 { return s.size }

// datasetKey is the cache key of the snapshot of version v of the
// table's branch whose catalog record has stamp (see recordStamp).
func (r *tableRef) datasetKey(v uint64, stamp int64) string {
	return fmt.Sprintf("%sds/%s/%d@%d", r.cacheKey(), r.branch, v, stamp)
}

// open returns the snapshot of version v (nil: the newest) of the table's
// branch. A version the catalog has no record of is not read even when
// its manifest exists (a commit that failed after publishing it). It
// returns TableVersionNotFound (11) for a missing version,
// InvalidTableState (19) for a recorded one whose manifest is missing,
// and the errors of latest and of reading the manifest (dataError).
func (e *Engine) open(ctx context.Context, r *tableRef, version *int64) (*snapshot, error) {
	var v uint64
	var stamp int64
	switch {
	case version == nil:
		var err error
		if v, stamp, err = e.latestRecord(ctx, r); err != nil {
			return nil, err
		}
	case *version < 1:
		return nil, store.Errorf(store.CodeTableVersionNotFound, "table %s has no version %d", displayID(r.id), *version)
	default:
		if r.t.ManagedVersioning {
			rec, err := e.cat.DescribeVersion(ctx, r.id, r.branch, version)
			if r.branch != "" && errors.Is(err, store.ErrTableVersionNotFound) {
				// A branch not made yet has its fork version once made.
				if _, _, err = e.latestRecord(ctx, r); err == nil {
					rec, err = e.cat.DescribeVersion(ctx, r.id, r.branch, version)
				}
			}
			if err != nil {
				return nil, err
			}
			stamp = recordStamp(rec)
		}
		v = uint64(*version)
	}
	val, err := e.cache.Get(ctx, r.datasetKey(v, stamp), func() (memcache.Value, error) {
		ds, err := table.OpenVersion(ctx, r.root, r.branch, v, e.readOptions(r))
		if err != nil {
			return nil, err
		}
		return newSnapshot(ds), nil
	})
	switch {
	case errors.Is(err, table.ErrNotFound) && r.t.ManagedVersioning:
		// The catalog has the version: its manifest should be there.
		return nil, notDataTable(r.t, fmt.Sprintf("has no manifest of version %d (branch %s) at %s", v, store.BranchName(r.branch), r.t.Location))
	case errors.Is(err, table.ErrNotFound):
		return nil, store.Errorf(store.CodeTableVersionNotFound, "table %s has no version %d on branch %s", displayID(r.id), v, store.BranchName(r.branch))
	}
	if err != nil {
		return nil, dataError(r.id, err)
	}
	s := val.(*snapshot)
	if s.err != nil {
		return nil, dataError(r.id, s.err)
	}
	return s, nil
}

// branchPrefix is where a branch's files are below the table's root.
func branchPrefix(branch string) string {
	if branch == "" {
		return ""
	}
	return "tree/" + strings.Trim(branch, "/") + "/"
}
