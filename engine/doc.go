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
// row address (fragment id << 32 | offset). Vector search without an
// index is exact (vecindex's kernels) over each fragment's vectors,
// cached as float32s per data file, with the filter applied before (the
// default) or after.
//
// The cache (internal/memcache) is one byte budget, shared with the other
// caches an engine keeps; its keys are described in read.go, and loaded
// indexes are under <table uuid>/ix/<index uuid>/<build>.
//
// # Indexes
//
// An index is a file beside the data, under the table's root in
// _lancens/indices/<index uuid>/<build>.<kind> (vecidx: vecindex's
// serialised IVF structure; fts: package fts's posting lists; scalar: the
// keys of a BTREE with their rows, or each value's roaring bitmap of rows
// for BITMAP and LABEL_LIST, see indexscalar.go). Lance's cleanup and
// compaction never touch files there (they look only at data/,
// _deletions/, _indices/, _transactions/ and _versions/, which a test of
// the LanceDB SDK checks), and the manifest knows nothing of them: a Lance
// client reads and writes the table as if it had none.
//
// Its record is in the catalog (store.DatasetIndexes: one table both
// backends migrate, so every replica sees it), not in the manifest, which
// Lance clients rewrite without knowing lancens's indexes: the index's
// name, uuid, type, status, the version of main it exists from, what it
// was asked for (indexDef: the column, by path and Lance field id, and the
// parameters) and what its last build made (indexBuild: the fragments it
// covers, each named by id, physical rows and the data file holding the
// column; its file and size). The file is written before the record
// commits; a record never names a file that is not there, and a file
// without a record (a build that lost a race, or a crash) is never read.
//
// A build reads every fragment of the latest version of main and indexes
// every physical row of them that has a value, deleted rows too: a search
// leaves out what the version it reads has deleted, so one build serves
// every version that has its fragments — later ones, and older ones
// brought back by a restore. A search of version v uses the indexes that
// exist at v (first built on v or before, last build not failed): the
// fragments of v the build covers go through the index, the others
// (written since, compacted, or overwritten) are searched exactly, as
// Lance searches unindexed fragments until optimize_indices: vector search
// scans their vectors (fast_search leaves them out), full-text search
// analyses their text into the loaded index once, as segments of its
// own (indextext.go), and filters read their columns. Scalar indexes
// narrow a filter (expr.Conditions: comparisons, IN, BETWEEN, array_has*
// under AND and OR) to the rows of the keys it names, fragment by
// fragment, and the whole filter is still evaluated on those rows, so
// results never depend on an index. Full-text search without an index is
// InvalidInput (13), as before.
//
// Vector indexes are built by a queued job (store.JobBuildIndex, claimed
// once across replicas); scalar and full-text indexes in the request that
// creates them. OptimizeIndexes queues a rebuild of the indexes whose
// build misses a fragment of the latest version; an overwrite or a
// restore queues one for the indexes it leaves covering nothing. A
// rebuild keeps serving the old build until the new one is recorded, then
// removes its file; a drop removes the record, then the files.
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
package engine
