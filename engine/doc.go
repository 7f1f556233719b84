// Package engine serves the data operations of the remote API over tables
// stored as Lance datasets: store.ManagedTables for any store.Backend's
// catalog (SQLite or PostgreSQL), with the files in the warehouse (a local
// directory or an object store) read and written by package lance. It is
// decision D14's engine: one kind of table, whatever mode wrote it.
//
// # Tables
//
// A table is a catalog entry (store.Table) whose location holds a Lance
// dataset. CreateTable gives a new table a location the warehouse
// allocates (<root>/<namespace…>/<table>-<id>.lance) and declares it in
// the same catalog transaction that records its first version; a table
// declared or registered by a Lance client is served as it is. Either
// opens in namespace mode with Lance's own libraries, and both modes may
// write it: the engine follows Lance's rules for concurrent commits, and
// the catalog arbitrates between them.
//
// A table whose commits the catalog coordinates (managed versioning: every
// table lancens declares) has its newest version in the catalog, not in
// storage: reads ask the catalog for it, and never read a version the
// catalog has no record of. A registered table without managed versioning
// is versioned by its storage, as Lance does it.
//
// # Writes
//
// A write streams its rows, conformed to the table's schema (conformer:
// fields by name, missing nullable fields as nulls, dictionaries and views
// as their values), into new data files (lance/table.WriteFragments),
// and commits one new version made of one Lance operation: Append,
// Overwrite, Delete (deletion files), Update (rows rewritten: deleted
// where they were, written again as new fragments; merge_insert too),
// Merge (new columns, casts), Project (renames, drops, nullability,
// metadata) or Restore. The commit goes through committer (commit.go):
// the manifest is staged, then coord's Committer publishes it with a
// conditional write under the location's lock and records the version;
// the catalog is the source of truth, and a crash at any instant leaves
// either the old version or the new one. Writes to one table take its
// lock in this process (shared.writers); appends take it only to commit,
// after their files are written. Across processes, a version number
// another writer took first makes lance/table check the commits made
// meanwhile: an append goes on top of them, a delete, update or merge
// whose rows changed fails with a conflict that the engine retries from
// the start a few times (retryConflicts) before it answers
// ConcurrentModification (14).
//
// # Reads
//
// A read opens a snapshot (a version's manifest and its schema in Arrow
// form, cached by table, branch and version) and a reader over it. Scans
// evaluate their filter with package expr over the filter's columns only
// (colBinder binds an expression's field paths to a batch of just the
// fields it reads), fragment by fragment, leaving out deleted rows; then
// the projected columns are gathered for the rows kept. A column is read
// whole into the cache, keyed by its data file and field id, so the
// versions that share a fragment share its columns and a second query
// reads no file; a column not cached whose rows are few is read row by
// row from its file instead (filter, then take). Order by sorts the kept
// rows' keys and reads in full only the page asked for. _rowid is Lance's
// row address (fragment id << 32 | offset). Vector search is exact
// (vecindex's kernels) over each fragment's vectors, cached as float32s
// per data file, with the filter applied before (the default) or after.
//
// The cache (internal/memcache) is one byte budget, shared with the other
// caches an engine keeps; its keys are described in read.go.
//
// # Views, branches, retention
//
// A materialized view is a table whose definition the catalog keeps
// beside its entry (store.EngineCatalog); a refresh is a queued job that
// overwrites it with its query's rows and records the source version with
// the commit (views.go). A branch the catalog records gets its files, a
// shallow clone of the version it forks from under tree/<branch>/, on its
// first read or write (branches.go). Optimize compacts; cleanup deletes
// the version records the retention rules let go, then their manifests
// and the files no remaining version needs, under the table's write and
// commit locks (retention.go). Backfills are queued jobs (backfill.go).
//
// # What comes next
//
// Indexes plug in as pending.go describes; until then their operations
// answer Unsupported (0).
package engine
