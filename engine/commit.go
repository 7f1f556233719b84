package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	mathrand "math/rand/v2"
	"net/url"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/lancens/lancens/lance/blob"
	"github.com/lancens/lancens/lance/manifestname"
	"github.com/lancens/lancens/lance/table"
	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/warehouse"
)

// committer publishes the versions an engine write makes exactly as
// lancens publishes those of Lance clients in namespace mode (coord's
// Committer): the write's data, deletion and transaction files are
// stored first (lance/table does that before it calls Commit); the
// manifest is staged beside the table's versions; the commit coordinator
// then, under the table location's lock, puts it at its final name with a
// conditional write and records the version in the catalog, which is the
// source of truth for the newest version. So the catalog and the files
// never disagree, and a crash at any instant loses no acknowledged write:
// before the record, the version does not exist for any reader (a final
// manifest without a record is an orphan the next commit of that version
// replaces); after it, every file the version needs is in place.
//
// A version number another writer took first (a commit through another
// replica, or a Lance client's) comes back from the catalog as
// ConcurrentModification; Commit reports it as table.ErrVersionExists,
// so that lance/table checks the commits made meanwhile against this one
// by Lance's rules and publishes it again on top of them, or fails with a
// conflict.
//
// A table whose commits the catalog does not coordinate (registered
// without managed versioning) is committed as Lance commits it: a
// put-if-absent of the manifest at its final name.
type committer struct {
	e   *Engine
	ref *tableRef
	// declare, when set, declares the table in the same catalog
	// transaction that records its first version (CreateTable of a table
	// the catalog does not have yet).
	declare *store.TableDeclaration
	// viewSource, when set, is the source version a refresh of a
	// materialized view read: the catalog records it with the version.
	viewSource *int64
	// txID is the transaction id of the last version recorded.
	txID string
	// recorded is the catalog's record of the last version committed.
	recorded *store.TableVersion
}

var (
	_ table.Committer       = (*committer)(nil)
	_ table.VersionResolver = (*committer)(nil)
)

// Commit implements table.Committer.
func (c *committer) Commit(ctx context.Context, cm *table.Commit) error {
	if !c.ref.t.ManagedVersioning && c.declare == nil {
		return table.PutIfAbsentCommitter{}.Commit(ctx, cm)
	}
	staged := stagedName(cm.Version)
	// Staged without a sync: publishing links the staged file under its
	// final name and syncs it (with full commit durability), which makes
	// its content durable with that name, before the catalog records it.
	// A sync here would cost a second flush of the disk for nothing.
	if err := blob.PutUnsynced(ctx, cm.Store, staged, cm.Manifest); err != nil {
		return fmt.Errorf("staging the manifest of version %d: %w", cm.Version, err)
	}
	vc := store.VersionCommit{Branch: cm.Branch, Version: int64(cm.Version), StagedPath: c.stagedPath(cm.Branch, staged), ViewSourceVersion: c.viewSource}
	scheme := manifestname.V2
	if cm.Path == table.ManifestPath(cm.Version, table.NamingV1) {
		scheme = manifestname.V1
	}
	var err error
	if c.declare != nil {
		var results []store.BatchResult
		results, c.txID, err = c.e.commits.CommitBatch(ctx, []store.BatchOperation{
			{ID: c.ref.id, Declare: c.declare},
			{ID: c.ref.id, CommitVersion: &vc},
		}, []manifestname.Scheme{0, scheme})
		if err == nil {
			c.ref.t, c.recorded = results[0].Table, results[1].Version
			c.declare = nil
		}
	} else {
		c.recorded, c.txID, err = c.e.commits.Commit(ctx, c.ref.id, vc, scheme)
	}
	if err == nil {
		return nil
	}
	// The staged manifest is the engine's own: no client will retry with
	// it. (A recorded version's is removed by the coordinator.)
	if derr := cm.Store.Delete(context.WithoutCancel(ctx), staged); derr != nil {
		c.e.log.Warn("remove a staged manifest", "table", displayID(c.ref.id), "path", staged, "error", derr)
	}
	if store.ErrorCode(err) == store.CodeConcurrentModification {
		return fmt.Errorf("%w: %w", table.ErrVersionExists, err)
	}
	return err
}

// LatestVersion implements table.VersionResolver: the catalog's newest
// version of branch.
func (c *committer) LatestVersion(ctx context.Context, branch string) (uint64, error) {
	if !c.ref.t.ManagedVersioning {
		ds, err := table.OpenBranch(ctx, c.ref.root, branch, c.e.readOptions(c.ref))
		if err != nil {
			return 0, err
		}
		return ds.Version(), nil
	}
	v, err := c.e.cat.DescribeVersion(ctx, c.ref.id, branch, nil)
	if errors.Is(err, store.ErrTableVersionNotFound) {
		return 0, fmt.Errorf("%w: %v", table.ErrNotFound, err)
	}
	if err != nil {
		return 0, err
	}
	return uint64(v.Version), nil
}

// stagedName returns a fresh name, below the branch's root, for the
// manifest of version v before it is published: in _versions/, where
// Lance stages its own, but not a name Lance takes for a version.
func stagedName(v uint64) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("_versions/.lancens-staged-%d-%s.manifest", v, hex.EncodeToString(b[:]))
}

// stagedPath returns the staged manifest at rel below the branch's root
// as Lance clients name the manifests they stage, which is also the form
// of the manifest path the catalog records (and Lance clients in namespace
// mode read back): an object-store path, that is, the absolute path
// without its leading "/" on local disk and the key in the bucket on
// object storage.
func (c *committer) stagedPath(branch, rel string) string {
	key := branchPrefix(branch) + rel
	loc := c.ref.t.Location
	if dir, ok := warehouse.LocalPath(loc); ok {
		return warehouse.ObjectPath(filepath.Join(dir, filepath.FromSlash(key)))
	}
	u, err := url.Parse(loc)
	if err != nil {
		return loc + "/" + key // the coordinator refuses it with a clear error
	}
	return path.Join(strings.TrimPrefix(u.Path, "/"), key)
}

// writeOptions are the options a write opens its dataset with: commits go
// through c.
func (e *Engine) writeOptions(r *tableRef, c *committer) table.Options {
	o := e.readOptions(r)
	o.Committer = c
	return o
}

// maxWriteAttempts bounds how often a write that conflicts with a
// concurrent commit (another process's, on the same table) is redone from
// the start before it answers ConcurrentModification (14), as Lance's own
// conflict retries do.
const maxWriteAttempts = 10

// retryConflicts runs write until it succeeds, fails with something other
// than a conflict another attempt may resolve, or has tried
// maxWriteAttempts times. Between attempts it waits a random while that
// doubles each time (from a few milliseconds), so that writers racing on
// one table do not keep meeting.
func retryConflicts[T any](ctx context.Context, write func() (T, error)) (T, error) {
	for attempt := 1; ; attempt++ {
		out, err := write()
		var ce *table.ConflictError
		if err == nil || !errors.As(err, &ce) || !ce.Retryable || attempt == maxWriteAttempts {
			return out, err
		}
		wait := time.Duration(mathrand.Int64N(int64(5*time.Millisecond) << min(attempt, 7)))
		select {
		case <-ctx.Done():
			return out, err
		case <-time.After(wait):
		}
	}
}
