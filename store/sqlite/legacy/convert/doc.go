// Package convert turns the managed tables of an earlier lancens, whose
// rows that release kept in its SQLite file (package legacy reads them),
// into Lance datasets in the warehouse, as the Lance engine (package
// engine) keeps every table: `lancens migrate` runs it, and `lancens
// serve` before it serves.
//
// # A table
//
// A table's dataset goes where the engine would put a new table
// (<root>/<namespace…>/<table>-<id>.lance, on disk or s3://). Every
// recorded version of every branch becomes a Lance version of the same
// number, so tags, branches, time travel and the version numbers clients
// hold keep meaning what they meant:
//
//   - the first version of main is written whole (Lance's Create), and
//     so is a version whose schema changed (Overwrite): its rows are read
//     with the layout of that version;
//   - any other version is what it changed: the rows it retired are
//     deleted by their addresses in the dataset (rowAddrs remembers where
//     each row of the row store went) and those it added are new
//     fragments, in one Update (or a Delete, an Append, or a Project that
//     changes nothing, for a version that changed no row);
//   - a branch starts as Lance starts one, a shallow clone of the version
//     it forks from, and goes on with the versions of its own rows.
//
// Versions that retention had removed stay removed: Lance leaves the same
// gaps when it cleans up old versions (renumbering publishes each
// manifest under the row store's number). The manifests keep the times
// their versions were made. Rows get Lance's row addresses as _rowid.
//
// Then one catalog transaction (legacy.Record) points the table at the
// dataset: external kind, the new location, owned, commits coordinated by
// the catalog; every version record names its manifest; uuid,
// properties, tags, branches, transaction history and a materialized
// view's definition stay; the rows tables go. Index definitions are
// handed to the engine afterwards (it queues vector builds and builds the
// others), and kept until it takes them.
//
// # Crashes
//
// The location is recorded before any file is written (legacy.Reserve):
// a conversion a crash interrupted is found again on the next run, its
// files removed and the table converted from the start; until the catalog
// transaction commits, the table is the row store's, untouched. A
// location reserved for a table that is gone by then is emptied and
// forgotten.
package convert
