package engine

import (
	"context"
	"time"

	"github.com/lancens/lancens/store"
)

// The parts of store.ManagedTables that come next, each with its own
// developer: materialized views and their refresh, branches with writes
// (OnBranch reads and writes a dataset branch already; creating one
// belongs to the catalog's CreateBranch), optimize and the retention of
// old versions, queued backfills. Until each lands, its operations answer
// Unsupported (0). Where they plug in:
//
//   - a view keeps its files under the table's root and its facts where
//     the catalog or the manifest puts them, and its loaded structures in
//     the engine's cache, under the table's cache key (as indexes do, see
//     index.go);
//   - cleanup removes versions (table.Dataset.Cleanup) under the table's
//     write lock (shared.writers) and the catalog's records with them;
//     index files (_lancens/indices/) are not the dataset's and stay;
//   - optimize rebuilds the indexes whose builds no longer cover every
//     fragment (Engine.OptimizeIndexes).

func unsupported(what string) error {
	return store.Errorf(store.CodeUnsupported, "%s is not available on tables of the Lance engine yet", what)
}

// QueueBackfill implements store.ManagedData. The engine has no queue of
// its own yet: the backfill runs before the call returns, as an update
// of the column to its binding over the rows matching where, and its
// transaction id is the one of the version it made.
func (e *Engine) QueueBackfill(ctx context.Context, id []string, column, where string) (string, error) {
	res, err := e.backfill(ctx, id, column, where)
	return res.TransactionID, err
}

// Backfill implements store.ManagedData. Backfills are not queued by this
// engine (see QueueBackfill); a job of the row store's is Unsupported (0).
func (e *Engine) Backfill(ctx context.Context, job store.BackfillColumn) (store.WriteResult, error) {
	return store.WriteResult{}, unsupported("a queued backfill")
}

// backfill fills computed column with its binding over the rows matching
// where. It returns TableColumnNotFound (12), InvalidInput (13) for a
// column that is not computed, and the errors of Update.
func (e *Engine) backfill(ctx context.Context, id []string, column, where string) (store.WriteResult, error) {
	main := &Engine{shared: e.shared}
	r, err := main.findData(ctx, id)
	if err != nil {
		return store.WriteResult{}, err
	}
	s, err := main.open(ctx, r, nil)
	if err != nil {
		return store.WriteResult{}, err
	}
	c, ok := lookupColumn(s.arrow, column)
	if !ok {
		return store.WriteResult{}, store.Errorf(store.CodeTableColumnNotFound, "column %s not found", column)
	}
	binding, ok := c.field.Metadata.GetValue(store.ComputedBinding)
	if !ok {
		return store.WriteResult{}, store.Errorf(store.CodeInvalidInput, "column %s is not a computed column", column)
	}
	return main.Update(ctx, id, []store.ColumnUpdate{{Path: column, Expr: binding}}, where)
}

// CreateView implements store.Views: Unsupported (0) until views land.
func (e *Engine) CreateView(ctx context.Context, id []string, def store.ViewDefinition, refresh bool) (*store.Table, store.WriteResult, string, error) {
	return nil, store.WriteResult{}, "", unsupported("materialized views")
}

// QueueRefresh implements store.Views: Unsupported (0) until views land.
func (e *Engine) QueueRefresh(ctx context.Context, id []string, sourceVersion *int64) (string, error) {
	return "", unsupported("materialized views")
}

// RefreshView implements store.Views: Unsupported (0) until views land.
func (e *Engine) RefreshView(ctx context.Context, job store.RefreshView) (store.WriteResult, error) {
	return store.WriteResult{}, unsupported("materialized views")
}

// CleanupVersions implements store.VersionCleanup: Unsupported (0) until
// the retention of Lance datasets lands.
func (e *Engine) CleanupVersions(ctx context.Context, id []string, before time.Time) (store.CleanupResult, string, error) {
	if _, err := e.findData(ctx, id); err != nil {
		return store.CleanupResult{}, "", err
	}
	return store.CleanupResult{}, "", unsupported("removing old versions")
}

// QueueCleanups implements store.VersionCleanup: nothing is queued until
// the retention of Lance datasets lands (old versions are kept).
func (e *Engine) QueueCleanups(ctx context.Context, before time.Time) (int, error) {
	return 0, nil
}

// RunCleanup implements store.VersionCleanup: Unsupported (0) until the
// retention of Lance datasets lands.
func (e *Engine) RunCleanup(ctx context.Context, job store.CleanupVersions) (store.CleanupResult, error) {
	return store.CleanupResult{}, unsupported("removing old versions")
}
