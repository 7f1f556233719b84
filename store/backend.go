package store

// The unions of the backend contract (see the package comment).

// Catalog is the catalog the Lance namespace API serves: namespaces, table
// entries, version records, atomic batches, tags, branches and
// transaction records. Every backend implements it.
type Catalog interface {
	Namespaces
	Tables
	Versions
	Batches
	Tags
	Branches
	Transactions
}

// ManagedTables is what the engine that serves tables' data (package
// engine) implements over a backend's catalog: writes and reads of rows,
// on branches too, indexes, materialized views and the retention of old
// versions.
type ManagedTables interface {
	ManagedData
	BranchedData
	Indexes
	Views
	VersionCleanup
}

// Backend is what lancens runs on: the Catalog, what it keeps for the
// engine that stores the rows of tables (EngineCatalog), the queue of
// deferred work, the operators' probe, the location locks that keep the
// processes sharing it apart and the read the commit coordinator makes
// under them, the history of table locations, and the records of the
// indexes of tables stored as Lance datasets. Every backend implements it
// (store/sqlite, store/postgres).
type Backend interface {
	Catalog
	EngineCatalog
	Jobs
	Probe
	LocationLocker
	VersionFinder
	LocationHistory
	DatasetIndexes
}

// ManagedBackend is a Backend paired with the engine that serves its
// tables (engine.WithBackend).
type ManagedBackend interface {
	Backend
	ManagedTables
}
