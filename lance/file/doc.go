// Package file reads and writes Lance data files: the files of a dataset's
// fragments, each holding some rows of some of the dataset's fields.
//
// # The container
//
// A Lance file (format 2.0 and later) is a run of buffers followed by
// metadata, read from its end: a 40-byte footer (positions of the
// metadata, the numbers of columns and global buffers, the format version,
// the magic "LANC"), two offset tables (one entry per column's metadata
// and per global buffer), the column metadata (per column, its pages in
// row order, each with its buffers' positions, its length and its
// encoding as a protobuf Any) and global buffer 0, which holds the file's
// schema and row count. Open reads all of that, usually in one range read
// of the file's tail, and nothing else; reads then fetch only the pages,
// and within pages only the bytes, holding the rows wanted. Every offset,
// length and count is checked against the file before use, and every
// read is charged to a memory budget (ReadOptions), so a malformed file is
// an error (ErrCorrupt, or ErrBudget when it would need too much memory),
// never a panic or an unbounded allocation.
//
// # Fields and columns
//
// Rows are addressed by the file's schema (a lance/schema.Schema with the
// dataset's field ids). How fields map to columns depends on the format
// version: in 2.0 every field has a column, in pre-order (a struct's own
// column, empty, before its fields'; a list's column of offsets before
// its items'; a packed struct's fields share its column); in 2.1 and
// later only leaves do, and structs and lists are carried by repetition
// and definition levels in their leaves' pages. The page encodings are
// version-specific too. Both are the business of a decoder per version
// (internal/encoding describes the interface; internal/v20 decodes 2.0,
// internal/v21 decodes 2.1 and 2.2; decoders.go picks one), while this
// package does the container, projection, row ranges and takes.
//
// # Reading
//
//	r, err := file.Open(ctx, store, "data/x.lance", nil)
//	proj, err := r.Schema().Project("id", "vector")   // or ProjectIDs; nil = all
//	rec, err := r.ReadRange(ctx, proj, 1000, 2000)    // rows [1000, 2000)
//	rec, err = r.Take(ctx, proj, []uint64{7, 3, 7})   // in the order asked
//	for rec, err := range r.Scan(ctx, proj, 8192) { … }
//
// A projection is any schema whose fields carry the file's field ids and
// logical types: the result takes its names and nullability, so a
// dataset's current schema (after renames) can be read from an older
// file.
//
// # Writing
//
//	w, err := file.Create(ctx, store, "data/y.lance", s, nil) // s: ids assigned
//	err = w.Write(rec)                                         // as often as needed
//	written, err := w.Close()                                  // rows, size, field/column pairs
//
// The writer writes format 2.0 by default, laid out as Lance's 2.0 writer
// lays it out (the same columns, page encodings, dictionaries of strings,
// buffer alignment; compression and packed structs when field metadata
// asks), so Lance reads its files and reads them as its own. With
// WriteOptions.Version V2_1 or V2_2 (what Lance 12 creates datasets in,
// and a dataset keeps its version) it writes those formats in the
// simplest layouts Lance reads, uncompressed (internal/v21). It streams: a column's
// values become a page once they reach WriteOptions.PageBytes, so memory
// stays about a page per column, and the file appears only when Close
// succeeds. Written carries what a manifest records of the file.
package file
