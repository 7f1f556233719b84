// Package coord holds the services of lancens that are neither HTTP nor
// storage: the commit coordinator of tables whose files Lance writes
// (Committer) and the runner of background jobs (Runner), with its
// registry of job kinds. They depend on narrow interfaces of the store and
// the warehouse, so that any backend of either can plug in.
package coord
