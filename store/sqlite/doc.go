// Package sqlite implements the lancens store on one SQLite file
// (modernc.org/sqlite, no cgo): the catalog, version records and table data
// commit together in one transaction. internal/sqlitedb is the SQLite
// plumbing underneath; package fts is the full-text engine and vecindex the
// vector one.
//
// One SQLite file holds everything: the catalog, the version records of
// every table, and the rows of managed tables. The migrations
// (migrations/*.sql) create the fixed tables; managed tables add tables of
// their own at run time.
//
// # The catalog
//
// namespaces is the namespace tree (row 1 is the root). tables holds every
// table, external or managed, with its location and location_key (a
// normalised form, unique: no two tables share a location or nest one in
// the other). table_versions is the version log, per table and branch (""
// is main): a gapless chain whose records are written put-if-not-exists
// (the primary key refuses a second record of a version). table_branches
// and table_tags name versions. transactions records every operation that
// answers a transaction id; work done after the response (deleting a
// dropped table's data, building a vector index, backfilling a computed
// column) is queued there too, with its kind and payload (see store/jobs.go),
// and Options.OnJobQueued is called after the commit that queues it.
//
// # Managed tables: rows and row versions
//
// A managed table (tables.kind 'managed', location lancens://<uuid>) keeps
// its rows in rows_N, N its tables.id:
//
//	rows_N(_rowid INTEGER PRIMARY KEY, _from, _to, c1, c2, ...)
//
// Every row is a row version, visible from table version _from up to, not
// including, _to; _to is maxVersion while the row is in the latest version.
// Version v sees the rows with _from <= v < _to (visibleAt). A write never
// changes a visible row: it makes version v+1 by inserting new row versions
// (_from = v+1) and retiring old ones (_to = v+1). An update is a retire
// plus an insert of the changed copy; a delete is a retire; an overwrite
// retires every row; restore(v) retires every row and copies the rows of v.
// So every version stays readable (time travel, tags, restore) until the
// table is dropped. Row ids only grow, and index structures key on them.
// The version's record in table_versions (manifest path
// lancens://<uuid>/_versions/<V2 name>) and its schema commit in the same
// transaction as its rows.
//
// # Schema layouts
//
// table_schemas holds the logical schema of a managed table from a version
// on: the Arrow schema (an IPC schema message) and its layout, which maps
// every field to a physical column c<n> of rows_N (a struct has a validity
// column and its children theirs; managed_tables.next_column numbers them).
// Physical columns are only ever added: adding a column or changing a
// column's type allocates a new physical column (a cast fills it for the
// rows of the latest version), and dropping or renaming a column only
// writes a new layout. Older versions read their own layout, so their
// columns stay as they were. codec.go converts Arrow values to SQLite
// values (its header has the table: vectors are little-endian blobs, lists
// and maps JSON); package legacy reads them back (its decode.go) and the
// field layouts (FieldLayout), for this engine and for the conversion of
// these tables into Lance datasets (legacy/convert), which outlives it.
//
// # Indexes
//
// table_indexes lists the indexes of managed tables. BTREE and BITMAP are
// SQLite indexes on the physical column; LABEL_LIST is a table
// rows_N_i<id>(value, row) kept by a trigger; INVERTED (full-text) is a
// table rows_N_i<id>(rowid, terms) of each row version's analysed terms,
// kept by a trigger calling lance_fts_terms, from which package fts builds
// its in-memory posting lists. Vector indexes are package vecindex
// structures, trained by a queued job on a snapshot and stored in
// table_indexes.data; they cover the rows up to max_rowid, and searches
// scan the rows written later exactly. As in Lance, an index exists from
// the version it was built on (built_version): a read of an older version
// neither lists nor uses it. A restore or an overwrite, whose rows all get
// new row ids, queues a new build of every vector index. An index that no
// longer matches its column's physical storage (the type changed) is not
// used. Sizes of scalar and full-text indexes are their pages in the file
// (SQLite's dbstat).
//
// # Caches
//
// Reads keep what they load in one memory cache with one byte budget
// (Options.CacheBytes), least recently used out first (cache.go). A key is
// a table uuid, a name and a version: the rows visible at a version
// ("visible", "rows"), the values of a filtered column ("column/c<n>") and
// the vectors of a searched column ("vectors/c<n>") at a version, and,
// without a version since they follow the latest rows, loaded vector
// indexes ("index/<index uuid>") and posting lists ("postings/<index
// uuid>"), which searches catch up with the rows written since. Versioned
// values never change once cached; caching a newer version of a value
// drops the older ones. fts caches its BM25 corpus statistics per posting
// index under "<table uuid>@<version>". A transaction that makes a table's
// cached data useless (drop, overwrite) releases it when it commits.
//
// # The write path
//
// Every write runs through DB.write: one writer connection (internal/
// sqlitedb), so writes queue in Go rather than in SQLite's lock. Writes
// that arrive while one commits are grouped into the next transaction,
// each in a savepoint, and commit with one sync of the log (group commit);
// a write that fails is rolled back to its savepoint alone. What one write
// changes commits together: its rows, their index entries (triggers), the
// version record, the schema, the transaction record and any queued job.
// Reads use a pool of reader connections and see the last commit (WAL); a
// background checkpointer copies committed pages into the database file.
//
// Rows are converted to SQL values before the write takes the writer. A
// write of more than one chunk (Options.WriteChunkRows, WriteChunkBytes)
// is staged over several transactions so that other writes commit in
// between, and still commits whole or not at all: the rows go in with
// _from = the new version, or into a staging table, and nobody sees them
// until the last transaction records the version (staging.go describes it
// in full). A staged write holds its table; other writes to it wait.
// A write reads its rows as a stream (store.Data), a chunk at a time, and
// releases each batch once its rows are written, so it holds a few chunks
// of a body however long the body is (stream.go).
//
// # Crash cleanup
//
// A crash leaves nothing half-done to readers: every commit is one SQLite
// transaction. What a staged write left is invisible but takes space, so
// Open sweeps it before any read (sweepStaged): staging tables are
// dropped, rows whose _from is past their table's latest version and
// tombstones are deleted, with their index entries. Jobs a stopped process
// left running are queued again when the job runner starts (RecoverJobs),
// and vector indexes left BUILDING get a new build job.
package sqlite
