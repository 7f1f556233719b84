package store

import (
	"context"
	"time"
)

// DefaultRetainVersionsFor is how long the versions of managed tables are
// kept when nothing else keeps them.
const DefaultRetainVersionsFor = 7 * 24 * time.Hour

// CleanupResult reports what a cleanup of a managed table removed.
type CleanupResult struct {
	// Versions counts the version records removed.
	Versions int64
	// Rows counts the rows of the data files removed: files no remaining
	// version reads.
	Rows int64
	// BytesFreed is how much storage the cleanup gave back: the size of
	// the files removed.
	BytesFreed int64
	// FragmentsRemoved and FragmentsAdded count the fragments an
	// Optimize's compaction rewrote and the ones it wrote instead (0 for a
	// cleanup alone, and for a backend whose tables have no fragments).
	FragmentsRemoved, FragmentsAdded int64
}

// VersionCleanup bounds how much managed tables keep of their past. A
// version is kept while it is newer than the retention period, is the
// latest of its branch, carries a tag, or is the version a branch forks
// from; the others go, and with them the files no remaining version
// reads. A read that started before a cleanup keeps seeing what it saw.
type VersionCleanup interface {
	// CleanupVersions removes, now, the versions of managed table id
	// committed before before that nothing keeps, on every branch, then
	// the files no remaining version reads, and gives the space back. It
	// returns what went and the id of the transaction recording it.
	// Returns TableNotFound (4), InvalidTableState (19) for a table
	// without data, one whose versions its storage keeps rather than the
	// catalog, or an earlier release's table not converted yet.
	CleanupVersions(ctx context.Context, id []string, before time.Time) (CleanupResult, string, error)

	// QueueCleanups queues a JobCleanupVersions for every managed table
	// with a version committed before before that nothing keeps, unless
	// one is queued already. It returns how many it queued.
	QueueCleanups(ctx context.Context, before time.Time) (int, error)

	// RunCleanup does the cleanup a queued job describes. A table dropped
	// meanwhile is no error.
	RunCleanup(ctx context.Context, job CleanupVersions) (CleanupResult, error)

	// Optimize compacts managed table id — its small fragments, and those
	// with many deleted rows, are rewritten into fewer holding only live
	// rows, as one new version when there is anything to rewrite — then
	// cleans it up as CleanupVersions does, and returns what both did and
	// the id of the transaction recording it. Returns the errors of
	// CleanupVersions, and ConcurrentModification (14) when concurrent
	// writes keep changing the fragments to compact.
	Optimize(ctx context.Context, id []string, before time.Time) (CleanupResult, string, error)
}
