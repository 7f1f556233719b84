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
	// Rows counts the row versions removed: rows no remaining version shows.
	Rows int64
	// BytesFreed is how much the database file shrank.
	BytesFreed int64
}

// VersionCleanup bounds how much managed tables keep of their past. A
// version is kept while it is newer than the retention period, is the
// latest of its branch, carries a tag, or is the version a branch forks
// from; the others go, and with them the row versions no remaining version
// shows. A read that started before a cleanup keeps seeing what it saw.
type VersionCleanup interface {
	// CleanupVersions removes, now, the versions of managed table id
	// committed before before that nothing keeps, on every branch, then
	// the rows no remaining version shows, and gives the space back. It
	// returns what went and the id of the transaction recording it.
	// Returns TableNotFound (4), InvalidTableState (19) for a table whose
	// rows lancens does not keep.
	CleanupVersions(ctx context.Context, id []string, before time.Time) (CleanupResult, string, error)

	// QueueCleanups queues a JobCleanupVersions for every managed table
	// with a version committed before before that nothing keeps, unless
	// one is queued already. It returns how many it queued.
	QueueCleanups(ctx context.Context, before time.Time) (int, error)

	// RunCleanup does the cleanup a queued job describes. A table dropped
	// meanwhile is no error.
	RunCleanup(ctx context.Context, job CleanupVersions) (CleanupResult, error)
}
