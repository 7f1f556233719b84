// Package legacy reads the managed tables that earlier lancens releases
// (up to the row store's last, f365447) kept inside their SQLite file, so
// that package convert can turn them into Lance datasets, and records the
// conversion in the catalog. It is the row store's reader alone — its
// layout and codec — and outlives the row store's engine: a database of
// an earlier release opens with any later one.
//
// # What it reads
//
// A managed table (tables.kind 'managed', location lancens://<uuid>) keeps
// its rows in rows_N, N its tables.id, and each branch made since lancens
// kept the rows of branches in rows_N_L (branch_lines names L):
//
//	rows_N(_rowid INTEGER PRIMARY KEY, _from, _to, c1, c2, ...)
//
// Every row is a row version, visible from table version _from up to, not
// including, _to (see rows.go). table_schemas (main) and branch_schemas
// (branches) hold the logical schema of a line from a version on: the
// Arrow schema as an IPC schema message, and its layout (FieldLayout),
// which maps every field to a physical column c<n> (a struct has a
// validity column and its children theirs). Older versions keep their own
// layout: renaming or dropping a column writes a new layout, adding one or
// changing its type a new column. decode.go reads the stored values back
// into Arrow. table_versions lists the versions (with gaps where
// retention removed some), table_branches and table_tags name them,
// table_indexes holds index definitions (and their SQLite objects:
// rows_N_i<id> tables, SQLite indexes, triggers), materialized_views the
// definitions of views, which are managed tables themselves.
//
// # What it changes
//
// Reserve records where a table's dataset is written before any file is;
// Record switches the table's catalog entry to the dataset and drops its
// rows in one transaction (see record.go), and Finish removes what is
// left once no managed table remains. It reaches the database through a
// Store, store/sqlite's DB: the store's own transactions.
package legacy
