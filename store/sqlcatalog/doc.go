// Package sqlcatalog is the lancens catalog written once in SQL: namespaces,
// table entries, version records, batch commits, tags, branches and
// transaction records, over the tables both SQL backends create
// (store/sqlite and store/postgres: namespaces, tables, table_versions,
// table_branches, table_tags, transactions; their migrations describe the
// columns). Catalog implements the store interfaces of the catalog for a
// backend; Ops runs the same operations inside a transaction the backend
// already holds, so that a backend's own writes (the rows of managed
// tables) commit with the catalog changes they go with.
//
// # What a backend gives
//
// A backend keeps its connections, its transactions, its migrations and
// its error classification, and hands the catalog three things:
//
//   - Transactions: how it runs a read, a write that changes the shape of
//     the catalog, and a write to one table's versions, tags or branches.
//     PostgreSQL runs the first kind of write SERIALIZABLE and the second
//     at READ COMMITTED under the table's row lock; SQLite, whose writes
//     run one at a time on one writer, runs both alike.
//   - a Tx per transaction: statements (rewriting their placeholders if
//     its database wants), the transaction's clock, and a note that the
//     transaction leaves a job queued.
//   - a Dialect: what the two databases spell differently. That is the
//     classification of two driver errors (no row, unique violation),
//     whether writers of one table need row locks, a list parameter, and
//     the walk down the namespace tree.
//
// Every statement is fixed text with positional placeholders (?), one per
// argument in order, as SQLite binds them fastest (a numbered or named
// parameter costs modernc.org/sqlite an allocation per binding); a backend
// whose database numbers its parameters (PostgreSQL: $1, $2, …) rewrites
// each text once. A backend may therefore cache or prepare each statement
// by its text (SQLite's statement cache, pgx's prepared statements).
// Values keep to what both databases store alike: integers (times are Unix
// milliseconds), text, booleans (SQLite stores 0 and 1), and string maps as
// JSON text (JSONB in PostgreSQL).
//
// # Conflicts
//
// Every rule is checked by a query before the write it guards (a name that
// is taken, a version that is not next), so that a conflict is answered
// precisely. A unique violation the check did not foresee (a concurrent
// writer won a race the database arbitrated) is reported with the code
// the check would have given and the driver's error as its cause: a
// backend that retries conflicting transactions (PostgreSQL) sees the
// cause and runs the operation again, and the check then gives the answer.
//
// # Managed tables
//
// A backend whose file may hold an earlier release's managed tables, their
// rows not converted into Lance datasets yet (store/sqlite), passes a
// Managed: its tables carry a kind column, and the catalog calls it, in
// the same transaction, before it deletes a table's entry, and when
// branches come and go. Deleting the versions of
// a managed table is the backend's own (its rows go with them). Catalog
// operations that would give a managed table a version from outside
// (CommitVersion) or drop its entry while keeping its data
// (DeregisterTable) are refused with InvalidTableState (19).
package sqlcatalog
