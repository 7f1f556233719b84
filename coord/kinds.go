package coord

import (
	"context"

	"github.com/lancens/lancens/store"
)

// JobStore is what the store's own job kinds need of it: the job-side
// methods of store.ManagedTables.
type JobStore interface {
	Backfill(ctx context.Context, job store.BackfillColumn) (store.WriteResult, error)
	BuildIndex(ctx context.Context, job store.BuildIndex) error
	RunCleanup(ctx context.Context, job store.CleanupVersions) (store.CleanupResult, error)
	RefreshView(ctx context.Context, job store.RefreshView) (store.WriteResult, error)
}

// DataRemover deletes the data of tables; *warehouse.Warehouse is one.
type DataRemover interface {
	// Remove deletes the files at location: a directory, or every object
	// under an object-store prefix.
	Remove(ctx context.Context, location string) error
}

// RegisterStoreJobs registers the handlers of the job kinds the store
// queues (see store/jobs.go): deleting a dropped table's data from wh,
// backfilling computed columns, building indexes, cleaning up old versions
// and refreshing materialized views in st. With a nil wh, data deletions
// are not registered, and stay queued.
func RegisterStoreJobs(r *Runner, st JobStore, wh DataRemover) {
	if wh != nil {
		r.Register(store.JobDeleteTableData, Decode(func(ctx context.Context, p store.DeleteTableData) error {
			return wh.Remove(ctx, p.Location)
		}))
	}
	r.Register(store.JobBackfillColumn, Decode(func(ctx context.Context, p store.BackfillColumn) error {
		_, err := st.Backfill(ctx, p)
		return err
	}))
	r.Register(store.JobBuildIndex, Decode(st.BuildIndex))
	r.Register(store.JobCleanupVersions, Decode(func(ctx context.Context, p store.CleanupVersions) error {
		_, err := st.RunCleanup(ctx, p)
		return err
	}))
	r.Register(store.JobRefreshView, Decode(func(ctx context.Context, p store.RefreshView) error {
		_, err := st.RefreshView(ctx, p)
		return err
	}))
}
