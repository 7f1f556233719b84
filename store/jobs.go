package store

import (
	"context"
	"encoding/json"
)

// Job kinds: work queued in a transaction record and done after the request
// that queued it has been answered. Every kind and its payload is declared
// here; a coord.Runner runs the kinds registered with it.
const (
	// JobDeleteTableData deletes the data directory of a dropped table that
	// lancens owned. Payload: DeleteTableData.
	JobDeleteTableData = "DeleteTableData"
	// JobBackfillColumn fills a computed column. Payload: BackfillColumn.
	JobBackfillColumn = "BackfillColumn"
	// JobBuildIndex builds an index. Payload: BuildIndex.
	JobBuildIndex = "BuildIndex"
	// JobCleanupVersions removes the versions of a managed table that the
	// retention policy lets go and the files no remaining version reads,
	// then gives the space back. Payload: CleanupVersions.
	JobCleanupVersions = "CleanupVersions"
	// JobRefreshView recomputes a materialized view. Payload: RefreshView.
	JobRefreshView = "RefreshMaterializedView"
)

// DeleteTableData is the payload of a JobDeleteTableData job.
type DeleteTableData struct {
	Location string `json:"location"`
}

// BackfillColumn is the payload of a JobBackfillColumn job.
type BackfillColumn struct {
	TableUUID string `json:"table_uuid"`
	Column    string `json:"column"`
	Where     string `json:"where,omitempty"`
}

// BuildIndex is the payload of a JobBuildIndex job.
type BuildIndex struct {
	TableUUID string `json:"table_uuid"`
	IndexUUID string `json:"index_uuid"`
}

// CleanupVersions is the payload of a JobCleanupVersions job.
type CleanupVersions struct {
	TableUUID string `json:"table_uuid"`
	// BeforeMillis removes the versions committed before this time (Unix
	// milliseconds) that nothing keeps; 0 removes none, and only the rows
	// of versions already removed go.
	BeforeMillis int64 `json:"before_millis,omitempty"`
}

// RefreshView is the payload of a JobRefreshView job.
type RefreshView struct {
	ViewUUID string `json:"view_uuid"`
	// SourceVersion is the version of the source table to read; nil reads
	// the latest when the job runs.
	SourceVersion *int64 `json:"source_version,omitempty"`
}

// Job is one claimed unit of queued work.
type Job struct {
	TransactionID string
	Kind          string
	Payload       json.RawMessage
}

// Jobs is the queue of deferred work kept in transaction records.
type Jobs interface {
	// ClaimJob marks the oldest queued job of one of kinds Running and
	// returns it, or returns nil when there is none.
	ClaimJob(ctx context.Context, kinds ...string) (*Job, error)

	// FinishJob records the outcome of a claimed job: Succeeded when jobErr
	// is nil, otherwise Failed with the error's message (property
	// "error"); the index a failed JobBuildIndex was building is marked
	// FAILED with the same message, in the same commit. Returns
	// TransactionNotFound (10) when the job is not running.
	FinishJob(ctx context.Context, transactionID string, jobErr error) error

	// ReleaseJob puts a claimed job that was interrupted (the process is
	// stopping) back in the queue, to run again from the start. Returns
	// TransactionNotFound (10) when the job is not running.
	ReleaseJob(ctx context.Context, transactionID string) error

	// RecoverJobs, run at start-up, puts jobs left Running (by a process
	// that stopped mid-way) back in the queue, and queues a JobBuildIndex
	// for every vector index left BUILDING with no queued or running job to
	// build it. It returns how many jobs it queued.
	RecoverJobs(ctx context.Context) (int, error)
}

// LocationLocker locks table locations across every process using the
// store, not only the calling one. The commit coordinator holds its locks
// while it moves manifest files into place, where the store cannot
// arbitrate. Every backend implements it (see store.Backend): one that
// several processes share (store/postgres) with locks of the database;
// one that a single process holds (store/sqlite) by answering at once,
// since there is no other process to keep out.
type LocationLocker interface {
	// LockLocations takes exclusive locks on the table locations, in an
	// order every process follows, and returns the function that releases
	// them. A process that dies releases its locks. It returns ctx's
	// error when ctx ends first, ServiceUnavailable (17) when the store
	// cannot be reached.
	LockLocations(ctx context.Context, locations []string) (unlock func(), err error)
}
