// Package v21 decodes Lance data files of format 2.1 and 2.2 (2.2 is what
// Lance 12 and the LanceDB SDKs write by default) into Arrow arrays: it is
// the encoding.Decoder lance/file uses for those versions. The container
// finds a file's columns and pages; this package reads, through it, only
// the bytes of the rows asked for and turns them into arrays.
//
// # Columns, layers and levels
//
// A 2.1 file has one column per leaf of the schema: a primitive, a string
// or binary, or a fixed-size list of fixed-width values (a vector). Structs
// and lists have no columns of their own; their structure is carried by
// every leaf below them as repetition and definition levels, one entry per
// position. The page's layers say, from the leaf outwards, what each level
// of structure may hold (layers.go); a levelPlan turns them into the
// meaning of each level value. A position is an entry of layer j when its
// repetition level is at least the number of lists up to j (a new element
// starts there) and its definition level does not belong to a null or
// empty list between the leaf and j (such a list has no elements inside).
// Column.Append applies that rule to each layer of the rows read, giving
// each layer's validity and, for lists, offsets; assemble then builds the
// Arrow array of a field from its leaf columns, taking each struct's and
// list's structure from the first leaf below it (so a struct projected to
// some of its fields reads only theirs).
//
// # Pages
//
// A page has one structural layout (PageLayout):
//
//   - mini-block (miniblock.go): small values in chunks of a few KiB,
//     each holding its levels and value buffers; optionally a dictionary
//     the values index into. A read fetches the chunk metadata, the
//     dictionary and the repetition index, then only the chunks holding
//     the rows wanted;
//   - full-zip (fullzip.go): large values one after the other, each with
//     a control word of levels and, when variable-width, a length. A read
//     fetches only the bytes of the rows wanted, found through the
//     repetition index when rows differ in size;
//   - constant (constant.go): no values of their own — all null (2.1 and
//     2.2) or one value for every row (2.2), with levels when needed.
//
// The values, levels and dictionaries inside them are compressed by a
// tree of compressive encodings (compress.go): flat values, variable-width
// values with offsets, bit-packing (FastLanes layout, bits.go) with the
// width inline per 1024 values or out of line, run-length encoding, byte
// stream split, FSST (fsst.go), fixed-size lists (fsl.go), constants, and
// LZ4 or zstd general compression (general.go).
//
// # Writing
//
// Encoder (encode.go, sink.go, writepage.go, writezip.go) writes 2.1 and
// 2.2 pages for lance/file's Writer in the simplest layouts Lance reads,
// uncompressed: each leaf's rows are shredded into repetition levels,
// definition events and the values of visible items; when a page is cut,
// its layers are chosen from what it holds (a layer without nulls or
// empty lists takes no definition level) and it becomes a mini-block page
// (values under 256 bytes), a full-zip page (larger values) or a constant
// page of raw levels (rows without values).
//
// # Untrusted input
//
// Pages come from files written by others. Every offset, length, count
// and width is checked against the buffers it points into before use;
// every allocation whose size a page declares is charged to a budget
// bounded by Limits first. A malformed page is an error wrapping
// ErrCorrupt, never a panic; one beyond the limits wraps ErrTooLarge; an
// encoding this package does not read wraps ErrUnsupported.
package v21
