// Package sqlite implements the lancens catalog on one SQLite file
// (modernc.org/sqlite, no cgo), as store/postgres does on PostgreSQL: the
// rows of tables are Lance datasets in the warehouse, which package engine
// serves. internal/sqlitedb is the SQLite plumbing underneath.
//
// # The catalog
//
// The migrations (migrations/*.sql) create the fixed tables; package
// sqlcatalog, shared with store/postgres, runs the catalog's operations in
// this store's transactions (catalog.go). namespaces is the namespace tree
// (row 1 is the root). tables holds every table with its location and
// location_key (a normalised form, unique: no two tables share a location
// or nest one in the other; locations.go keys the tables of databases made
// before the column existed and lists the clashes they may hold).
// table_versions is the version log, per table and branch ("" is main): a
// chain whose records are written put-if-not-exists (the primary key
// refuses a second record of a version). table_branches and table_tags name
// versions. dataset_indexes records the indexes the engine builds beside
// the data. transactions records every operation that answers a
// transaction id; work done after the response (deleting a dropped table's
// data, building an index, backfilling a column, cleaning up old versions)
// is queued there too, with its kind and payload (see store/jobs.go and
// jobs.go), and Options.OnJobQueued is called after the commit that queues
// it.
//
// # The write path
//
// Every write runs through DB.write: one writer connection (internal/
// sqlitedb), so writes queue in Go rather than in SQLite's lock. Writes
// that arrive while one commits are grouped into the next transaction,
// each in a savepoint, and commit with one sync of the log (group commit);
// a write that fails is rolled back to its savepoint alone. The records of
// version commits may be written with less durability than the rest
// (Options.CommitDurability). Reads use a pool of reader connections and
// see the last commit (WAL); a background checkpointer copies committed
// pages into the database file. Open holds a lock on the file (lock.go):
// one server per database.
//
// # Databases of earlier releases
//
// Releases up to f365447 kept the rows of managed tables (tables.kind
// 'managed', location lancens://<uuid>) inside the file, in tables of
// their own (rows_N). Package legacy reads them, and legacy/convert turns
// them into Lance datasets (lancens migrate, or lancens serve at
// start-up), through the store's own transactions (legacy_hooks.go). The
// migrations that created their fixed tables stay: they are the history
// of every database's schema. Until a table is converted, dropping it
// drops its rows, and the catalog changes that would need its rows answer
// InvalidTableState (19) (legacyTables in catalog.go). Backup copies the
// file (backup.go) and Restore puts a copy in place (restore.go).
package sqlite
