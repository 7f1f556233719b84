package store

import (
	"context"
	"time"
)

// EngineCatalog is what the catalog keeps for an engine that stores the
// rows of tables outside it, as Lance datasets (package engine): the
// definitions of materialized views, the version records the retention
// of old versions lets go, and the transaction records of the engine's
// own work, done or queued. Every backend implements it, in its catalog.
//
// A version is kept, by the retention rules of VersionCleanup, while it
// is the latest of its branch, carries a tag, or is the version a branch
// forks from; the retention of old versions applies to tables with data
// whose versions the catalog records (managed versioning) at a location
// lancens chose (Owned).
type EngineCatalog interface {
	// DescribeTableByUUID returns the table whose uuid is uuid. Returns
	// TableNotFound (4) when there is none (dropped).
	DescribeTableByUUID(ctx context.Context, uuid string) (*Table, error)

	// DescribeView returns the definition of the materialized view whose
	// table uuid is uuid, with Query set and Source the source table's
	// identifier (nil once the source is dropped), or nil when the table
	// is not a view. It returns the database's errors only.
	DescribeView(ctx context.Context, uuid string) (*View, error)

	// QueueViewRefresh queues a refresh (JobRefreshView) of the view whose
	// table uuid is uuid, from version sourceVersion of its source's main
	// branch (nil: the latest when the refresh runs), and returns the
	// job's transaction id. Returns TableNotFound (4) when the view or its
	// source is gone, InvalidInput (13) when the table is not a view,
	// Unsupported (0) for a view whose source_query lancens does not run
	// (see RunnableViewQueries), and TableVersionNotFound (11) for a
	// source version the catalog has no record of.
	QueueViewRefresh(ctx context.Context, uuid string, sourceVersion *int64) (string, error)

	// RecordWork records a transaction of kind about the table whose uuid
	// is uuid and returns its id: done (TxSucceeded), with props among
	// its properties, or queued as a job (TxQueued) whose input is
	// payload, which wakes the job runners once it commits. Returns
	// TableNotFound (4).
	RecordWork(ctx context.Context, uuid, kind string, status TransactionStatus, props map[string]string, payload any) (string, error)

	// RemoveOldVersions deletes the version records of the table whose
	// uuid is uuid, on every branch, that were committed before before
	// and that nothing keeps, and returns how many it deleted. Returns
	// TableNotFound (4).
	RemoveOldVersions(ctx context.Context, uuid string, before time.Time) (int64, error)

	// QueueVersionCleanups queues a JobCleanupVersions, removing the
	// versions committed before before, for every table the retention
	// applies to that has such a version nothing keeps, unless one is
	// queued for it already. Tables of kind Managed (an earlier release's,
	// not converted) are left alone. It returns how many it queued.
	QueueVersionCleanups(ctx context.Context, before time.Time) (int, error)
}
