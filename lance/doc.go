// Package lance is the root of lancens's pure-Go implementation of the
// Lance columnar format (https://lance.org/format/): reading and writing
// Lance data files and datasets without Rust, Python or cgo. It depends on
// nothing of the lancens server, so other Go programs can import it.
//
// The packages below it, by job:
//
//   - lance/blob: where a dataset's objects live (a local directory, or
//     any store implementing blob.Store, such as S3 through lancens's
//     objstore): range reads, whole-object writes, put-if-absent, listing.
//   - lance/file: Lance data files (format versions 2.0, 2.1 and 2.2):
//     the footer, column metadata and page encodings, read into and
//     written from Arrow arrays.
//   - lance/table: datasets: manifests and their versions, fragments,
//     deletion files, transaction files, tags and branches, and the
//     operations that make new versions.
//   - lance/proto: the protocol buffer definitions of the format's
//     metadata, written for lancens; lance/internal/pb holds the Go code
//     generated from them.
//
// Everything read from storage is untrusted: offsets, lengths, counts and
// decoded sizes are checked before use, and malformed input is an error,
// never a panic or an unbounded allocation.
package lance
