// Package store is the domain of lancens below HTTP: its types (namespaces,
// tables, versions, rows, indexes, jobs), its one error type with the Lance
// codes (errors.go), and the contract every backend implements. It sees
// neither HTTP nor the generated API types; the server translates.
//
// # The backend contract
//
// A backend is a package that keeps the catalog in a database:
// store/sqlite (one SQLite file, one process) and store/postgres (one
// PostgreSQL database, any number of replicas). Their catalog is one SQL
// implementation, store/sqlcatalog; each backend adds its connections,
// transactions, migrations and the statements its database spells its own
// way. Each interface below says in its methods' comments what they
// return on error, with the Lance codes.
//
// Every backend implements Backend:
//
//   - Catalog, the catalog the API serves: Namespaces, Tables, Versions,
//     Batches, Tags, Branches and Transactions.
//   - EngineCatalog: what the catalog keeps for the engine that stores the
//     rows of tables as Lance datasets (package engine): the definitions
//     of materialized views, the version records retention lets go, and
//     records of the engine's own work.
//   - Jobs: the queue of work done after the request that queued it
//     (deleting a dropped table's data, building an index, …), kept in
//     transaction records; coord's job runner claims and runs it.
//   - Probe: readiness, pending jobs and size, for operators.
//   - LocationLocker: locks on table locations that every process sharing
//     the backend respects; the commit coordinator holds them while it
//     puts manifests in place. A backend one process holds answers at
//     once.
//   - VersionFinder: the coordinator's read under those locks: whether a
//     table still lies where it was found, and whether a version of it
//     is recorded.
//   - LocationHistory: where dropped, deregistered and replaced tables
//     lay, and in which namespace, so that the server places a table
//     where another namespace's table lay only for a principal that may
//     write that namespace.
//   - DatasetIndexes: the records of the indexes of tables stored as
//     Lance datasets, whose files the engine keeps beside the data.
//
// The backends (store/sqlite, store/postgres) keep the catalog only.
// Package engine implements ManagedTables — ManagedData, BranchedData,
// Indexes, Views and VersionCleanup — over any Backend's catalog, every
// table a Lance dataset in the warehouse; engine.WithBackend makes the
// pair a ManagedBackend, which the server and coord.NewServices require.
// Code that needs a part of the contract takes the interface
// that names it (coord's consumers declare the methods they call), never
// a type assertion on a Backend.
//
// # Rules every backend keeps
//
// Atomicity. Each method is one transaction: it commits whole or not at
// all, and a read sees one consistent state. A write that makes a version
// commits its data, the version record, index changes, the transaction
// record and any job it queues together; a batch (Batches) commits all its
// operations or none.
//
// Sharing. Methods are safe for concurrent use. A backend that several
// processes share answers from its database alone (nothing about the
// catalog is cached in a process), arbitrates concurrent writers itself
// (a conflict that outlasts its retries is ConcurrentModification (14)),
// and claims jobs under leases, so that a process that dies leaves its
// job to another.
//
// Errors. An error a caller can act on is an *Error with its Lance code,
// as each method documents; errors.Is matches it against the sentinels by
// code. A database that cannot serve (unreachable, full, read-only) is
// ServiceUnavailable (17). A method whose context ends returns the
// context's error. Anything else is a failure of lancens, which callers
// report as Internal (18) without its details (ErrorCode, ErrorMessage).
//
// Queued work. A transaction that leaves a job queued makes the backend
// call the hook it was opened with (sqlite.Options.OnJobQueued,
// postgres.Options.OnJobQueued) once it commits, so that the job runner
// wakes without the caller's help.
//
// # Layering
//
// Data flows down: cmd → server → engine → coord → store (package engine,
// the Lance engine, commits through coord's committer). Package store imports no
// other package of lancens; store/sqlcatalog imports only store; a backend
// imports store, store/sqlcatalog and the engines and libraries below it
// (expr, fts, vecindex, lance/manifestname for the names of manifest
// files, internal/...), never server, coord, client, gen or cmd.
// tools/layercheck (run by make lint, and by its test) holds every package
// to this layering. The conformance suite (internal/conformance) specifies
// the behaviour: every interface here has a capability group there, and
// every backend passes the groups of the interfaces it implements.
package store
