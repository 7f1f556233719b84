// Package table reads and writes Lance datasets ("tables"): the versioned
// metadata that ties data files together, as Lance 12 lays it out.
//
// # Layout
//
// A dataset is a directory (or object-store prefix), reached through a
// blob.Store:
//
//	_versions/<name>.manifest        one manifest per version
//	_versions/latest_version_hint.json   {"version":N}, rewritten after commits
//	                                     (not when a VersionResolver knows the newest)
//	_transactions/<read>-<uuid>.txn  what each commit did
//	_deletions/<frag>-<read>-<id>.arrow|.bin   deleted rows of a fragment
//	data/<name>.lance                data files (package lance/file)
//	_indices/<uuid>/…                index files
//	_refs/tags/<tag>.json, _refs/branches/<branch>.json
//	tree/<branch>/…                  a branch's own _versions, data, …
//
// Manifest names follow the V2 scheme (u64::MAX − version in 20 digits, so
// that the newest sorts first) for datasets Lance creates now, and the V1
// scheme (the version number) for older ones; both are read, and a
// dataset keeps the scheme it has.
//
// # Versions and manifests
//
// Each version is one immutable manifest (Manifest): the schema, with a
// dataset-wide id per field that data files name their columns by; the
// fragments, each a run of rows stored as one or more data files holding
// different fields of the same rows (a field no file holds reads as null)
// and at most one deletion file; the index section (which index covers
// which fragments); and the dataset's feature flags, writer, data format,
// config and metadata. A Dataset is one version, opened with Open or
// OpenBranch and moved with Checkout (time travel), CheckoutTag,
// CheckoutBranch and CheckoutLatest. The newest version is found from the
// version hint, checked and followed forward, or else by listing
// _versions/.
//
// Lance's feature flags are obeyed as Lance obeys them: a dataset whose
// reader flags include one this package does not know is not opened, and
// one whose writer flags do is not written (ErrUnsupported).
//
// # Rows
//
// Data files are lance/file's. WriteFragments turns Arrow batches into new
// data files and fragments (for Create, Append, Overwrite and Update);
// OpenFragment reads a fragment's rows for a projection of the schema,
// each field from the file holding it (nulls when none does), skipping
// deleted rows or not. A dataset's data files all share one format
// version (DataFormat); lance/file writes 2.0, so writes that add files
// are refused (ErrUnsupported) on datasets of another version. Compact
// rewrites small fragments, and those with many deleted rows, into fewer
// ones holding only live rows.
//
// # Deletions
//
// Rows are deleted by offset within their fragment. A fragment's deleted
// offsets are one file, replaced whole by each delete: an Arrow IPC file
// of one uint32 column for fewer than 5,000 rows, a portable roaring
// bitmap (the format's own serialization, read and written with
// github.com/RoaringBitmap/roaring) for more. Dataset.Deletions reads
// them.
//
// # Commits
//
// Every change is a Transaction (an operation and the version it was
// computed against, its read version) committed as the next version:
// the transaction file is stored, then a manifest built from the
// transaction on top of the newest version is published by the
// Dataset's Committer. PutIfAbsentCommitter, the default, puts the
// manifest at its final name only if no object is there; a catalog that
// coordinates commits (lancens's) implements Committer to publish and
// record versions its own way, and VersionResolver to say which version
// is the newest. When the version number is taken (ErrVersionExists from
// the Committer), the transactions committed since the read version are
// checked against the new one by Lance's rules: an append goes on top of
// anything but an overwrite or a restore, while deletes, updates,
// compactions and merges fail on concurrent changes to the fragments they
// touch. A change
// that still applies is rebuilt on the newest version and published again;
// one that does not fails with a *ConflictError (ErrConflict), which says
// whether redoing the operation on the new version is meaningful.
//
// # Untrusted input
//
// Manifests, transactions, deletion files and references come from
// storage that other writers share. Their sizes are bounded before they
// are read (Options.MaxManifestBytes; deletion files by their fragment's
// row count), offsets and counts are checked before use, and malformed
// input is an error wrapping ErrCorrupt, never a panic.
package table
