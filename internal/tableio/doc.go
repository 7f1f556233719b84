// Package tableio reads and writes the rows of tables as files: CSV, JSON
// lines and Parquet, as Arrow record batches, one batch at a time, so that a
// file of any size passes through bounded memory. `lancens import` and
// `lancens export` are built on it.
//
// Reading fixes a schema first. A Parquet file carries its own (see
// parquet.go); the columns of CSV and JSON-lines files get their types from
// the first rows (see infer.go). Either is then adjusted: a column of the
// table the rows go into keeps the table's type, and --schema (ParseSchema,
// types.go) names the types of any columns outright. Each batch read is
// converted to that schema; a value that does not fit is an error naming its
// line (or row) and column, never a silent null.
//
// Writing takes a schema and batches (NewWriter, write.go). What this
// package writes it reads back with the same types: Parquet records the
// Arrow schema, and CSV and JSON lines write vectors and lists as JSON
// arrays, which inference reads as vectors and lists again. CSV cannot tell
// a null string from an empty one, and writes both as an empty cell.
package tableio
