package engine

import (
	"context"

	"github.com/lancens/lancens/store"
)

// The part of store.ManagedTables that comes next: indexes (vector,
// full-text, scalar: files beside the data, recorded against the
// fragments they cover). Until it lands, its operations answer
// Unsupported (0), and listings answer what is true today (no index).
// Materialized views (views.go), branches (branches.go), optimize and the
// retention of old versions (retention.go) and queued backfills
// (backfill.go) have landed. Where indexes plug in:
//
//   - a search that an index serves goes through reader.searchVectors
//     (search.go), which scans fragments exactly: an index covers a set of
//     fragments and the rest keep being scanned;
//   - an index keeps its files under the table's root and its facts where
//     the catalog or the manifest puts them, and its loaded structures in
//     the engine's cache, under the table's cache key;
//   - cleanup (retention.go) keeps every file a remaining version's
//     manifest refers to (its index section included) and removes, from
//     data/, _deletions/, _transactions/ and _indices/, the files only
//     removed versions referred to and those no version refers to once
//     they are older than table.UnverifiedAge: an index recorded
//     elsewhere must keep its files where cleanup does not look, or be
//     named by the manifest;
//   - optimize's compaction (lance/table's Compact) rewrites fragments
//     into new ones with new ids and row addresses, merging only
//     neighbours the manifest's indexes cover alike: an index recorded
//     elsewhere stops covering the fragments a compaction replaced.

func unsupported(what string) error {
	return store.Errorf(store.CodeUnsupported, "%s is not available on tables of the Lance engine yet", what)
}

// CreateIndex implements store.Indexes: Unsupported (0) until indexes land.
func (e *Engine) CreateIndex(ctx context.Context, id []string, spec store.IndexSpec) (string, error) {
	if _, err := e.findData(ctx, id); err != nil {
		return "", err
	}
	return "", unsupported("building an index")
}

// BuildIndex implements store.Indexes: Unsupported (0) until indexes land.
func (e *Engine) BuildIndex(ctx context.Context, job store.BuildIndex) error {
	return unsupported("building an index")
}

// ListIndices implements store.Indexes: the engine builds none yet.
func (e *Engine) ListIndices(ctx context.Context, id []string, version *int64, page store.Page) ([]store.IndexInfo, string, error) {
	if _, err := e.find(ctx, id); err != nil {
		return nil, "", err
	}
	return []store.IndexInfo{}, "", nil
}

// DescribeIndex implements store.Indexes: TableIndexNotFound (6), as the
// engine builds none yet.
func (e *Engine) DescribeIndex(ctx context.Context, id []string, name string, version *int64) (*store.IndexInfo, error) {
	if _, err := e.find(ctx, id); err != nil {
		return nil, err
	}
	return nil, store.Errorf(store.CodeTableIndexNotFound, "table %s has no index %s", displayID(id), name)
}

// DropIndex implements store.Indexes: TableIndexNotFound (6), as the
// engine builds none yet.
func (e *Engine) DropIndex(ctx context.Context, id []string, name string) (string, error) {
	_, err := e.DescribeIndex(ctx, id, name, nil)
	return "", err
}

// PrewarmIndex implements store.Indexes: TableIndexNotFound (6), as the
// engine builds none yet.
func (e *Engine) PrewarmIndex(ctx context.Context, id []string, name string) error {
	_, err := e.DescribeIndex(ctx, id, name, nil)
	return err
}
