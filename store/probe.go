package store

import "context"

// JobCount is how many jobs of one kind are in one status.
type JobCount struct {
	Kind   string
	Status TransactionStatus
	Count  int64
}

// Probe is what operators ask a store about its health and size: the
// readiness endpoint and the metrics use it. Every backend implements it
// (see Backend).
type Probe interface {
	// Ready returns nil when the database answers a query and its schema
	// is migrated to what this build expects, otherwise the reason.
	Ready(ctx context.Context) error

	// PendingJobs counts the jobs that are Queued or Running, by kind and
	// status (only the non-zero counts). It returns the database's error.
	PendingJobs(ctx context.Context) ([]JobCount, error)

	// SizeBytes returns the bytes the database takes on disk, or an error
	// when they cannot be read.
	SizeBytes(ctx context.Context) (int64, error)
}
