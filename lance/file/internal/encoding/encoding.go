// Package encoding is the seam between the Lance file container
// (lance/file) and the page decoders of each format version. The
// container reads the footer, the column metadata and the file's schema;
// a Decoder for the file's version says which columns belong to which
// field and turns a field's pages into Arrow arrays, reading the bytes it
// needs through the container. Format 2.0 has its decoder in
// lance/file/internal/v20; formats 2.1 and 2.2 (mini-block, full-zip and
// constant layouts, repetition and definition levels) theirs in
// lance/file/internal/v21; lance/file's decoders.go picks one by version.
//
// # What a decoder implements
//
// A Decoder has two methods:
//
//   - Columns assigns the file's columns to its schema's fields. The
//     container calls it once per file with the file's whole schema (as
//     stored in the file, ids included) and its column count, and keeps the
//     answer: a map from field id to column index, holding only the fields
//     that own a column. Format 2.0 gives every field a column in pre-order
//     (a struct's own column before its children's, a list's offsets before
//     its items'); 2.1 gives one to each leaf (and to a packed struct, not
//     to its children) and none to structs or lists. It returns an error
//     wrapping ErrCorrupt when the counts disagree.
//
//   - Decode reads rows of one top-level field. The Request names the
//     field (possibly projected: a struct may carry a subset of its
//     children), the Arrow type to produce, the columns of the field and
//     its descendants by field id, the rows wanted as sorted disjoint
//     ranges, the file (byte ranges, read on demand), and a Budget that
//     every allocation sized by file contents is charged to before it is
//     made. It returns one array holding the requested rows in order,
//     concatenated, of exactly the requested type, or an error wrapping
//     ErrCorrupt (the file contradicts itself or its schema),
//     ErrUnsupported (a valid encoding this decoder does not read) or
//     ErrBudget (the rows decode to more than the budget allows).
//
// # Writing
//
// An Encoder is the writing side: it turns batches into EncodedPages
// (buffers, encoding, length) that the container writes as they come,
// and says which field each column belongs to. Format 2.0's is
// internal/v20.Encoder, 2.1's and 2.2's internal/v21.Encoder;
// lance/file.Create picks one by WriteOptions.Version.
//
// # Untrusted input
//
// Every number read from the file (buffer positions and sizes, page
// lengths, bit widths, offsets, counts, dictionary indices, decompressed
// sizes) is checked before it is used to index, slice or allocate. Ranges
// asked of File are checked by the container against the file's size;
// decoders check the rest. No input may make a decoder panic.
package encoding

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancens/lancens/lance/schema"
)

var (
	// ErrCorrupt reports a file that contradicts itself, its schema or the
	// format.
	ErrCorrupt = errors.New("corrupt lance file")
	// ErrUnsupported reports a valid file feature that is not implemented.
	ErrUnsupported = errors.New("unsupported lance file feature")
	// ErrBudget reports a read that would need more memory than allowed.
	ErrBudget = errors.New("lance read exceeds its memory budget")
)

// Corruptf returns an error wrapping ErrCorrupt with a formatted message.
func Corruptf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}

// Unsupportedf returns an error wrapping ErrUnsupported with a formatted
// message.
func Unsupportedf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUnsupported, fmt.Sprintf(format, args...))
}

// Range is a run of bytes of the file: Length bytes from Offset.
type Range struct {
	Offset, Length uint64
}

// File reads byte ranges of the file being decoded.
type File interface {
	// ReadRanges returns the bytes of each range, in order. The slices
	// must not be modified (they may be shared with a cache). It returns
	// an error wrapping ErrCorrupt for a range that is not inside the
	// file, the store's error for a failed read, and ErrBudget when the
	// bytes would exceed the read's budget.
	ReadRanges(ctx context.Context, ranges []Range) ([][]byte, error)
}

// Page is one page of a column, as the column metadata describes it.
type Page struct {
	// Length is the page's length from the column metadata: its number of
	// top-level rows in 2.1 and later; in 2.0, its number of values in
	// its column (items, for the column of a list's items).
	Length uint64
	// First is the sum of Length over the column's earlier pages.
	First uint64
	// Priority is the page's priority from the column metadata (in files
	// Lance writes, the top-level row its data starts at).
	Priority uint64
	// EncodingType and Encoding are the page's encoding: the type URL of
	// its google.protobuf.Any ("/lance.encodings.ArrayEncoding" in 2.0,
	// "/lance.encodings21.PageLayout" in 2.1) and the serialized message.
	// Both are empty when the column metadata gave none.
	EncodingType string
	Encoding     []byte
	// Buffers locate the page's buffers in the file, in order. The
	// container has checked that each lies inside the file.
	Buffers []Range
}

// Column is one column of the file.
type Column struct {
	// Index is the column's position in the file.
	Index int
	// EncodingType and Encoding are the column's encoding (an Any, as for
	// pages; "/lance.encodings.ColumnEncoding" in files Lance writes).
	EncodingType string
	Encoding     []byte
	// Buffers locate the column's own buffers (dictionaries, statistics).
	Buffers []Range
	Pages   []Page

	memo memo
}

type memo struct {
	mu    sync.Mutex
	done  bool
	value any
	err   error
}

// Memo returns what derive returns, calling it on the first call only:
// a decoder keeps there what it derives from the column's metadata (its
// pages' parsed encodings, say) for the file's later reads. A column is
// decoded by one decoder, so one memo per column suffices.
func (c *Column) Memo(derive func() (any, error)) (any, error) {
	c.memo.mu.Lock()
	defer c.memo.mu.Unlock()
	if !c.memo.done {
		c.memo.value, c.memo.err = derive()
		c.memo.done = true
	}
	return c.memo.value, c.memo.err
}

// Rows returns the sum of the column's page lengths.
func (c *Column) Rows() uint64 {
	if len(c.Pages) == 0 {
		return 0
	}
	last := c.Pages[len(c.Pages)-1]
	return last.First + last.Length
}

// RowRange is the rows [Start, End) of a file.
type RowRange struct {
	Start, End uint64
}

// Request asks a Decoder for rows of one top-level field.
type Request struct {
	// Field is the top-level field, from the file's schema, possibly
	// projected to a subset of its descendants (ids unchanged).
	Field *schema.Field
	// Type is the Arrow type of the array to return (Field's).
	Type arrow.DataType
	// Columns holds, by field id, the column of Field and of each of its
	// descendants that owns one (as Columns assigned them).
	Columns map[int32]*Column
	// Rows is the number of rows in the file.
	Rows uint64
	// GlobalBuffers locate the file's global buffers (0 is its schema).
	GlobalBuffers []Range
	// Ranges are the rows wanted: sorted, disjoint, non-empty, within
	// [0, Rows).
	Ranges []RowRange
	File   File
	Budget *Budget
	Mem    memory.Allocator
}

// Decoder reads the fields of files of one format version.
type Decoder interface {
	// Columns returns the column index of each field of s (by id) that
	// owns a column in a file of numColumns columns whose schema is s.
	Columns(s *schema.Schema, numColumns int) (map[int32]int, error)
	// Decode returns the rows of req, or an error wrapping ErrCorrupt,
	// ErrUnsupported or ErrBudget.
	Decode(ctx context.Context, req *Request) (arrow.Array, error)
}

// Budget counts the bytes a read may still allocate. Its methods are safe
// for concurrent use (the fields of a read decode in parallel).
type Budget struct {
	mu   sync.Mutex
	left uint64
	max  uint64
}

// NewBudget returns a budget of max bytes.
func NewBudget(max uint64) *Budget { return &Budget{left: max, max: max} }

// Take charges n bytes, or returns an error wrapping ErrBudget (and
// charges nothing) when fewer are left. Call it before allocating.
func (b *Budget) Take(n uint64) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if n > b.left {
		return fmt.Errorf("%w: %d more bytes needed, %d left of %d", ErrBudget, n, b.left, b.max)
	}
	b.left -= n
	return nil
}

// Mul returns a*b, or ok false when the product overflows a uint64.
func Mul(a, b uint64) (product uint64, ok bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	p := a * b
	return p, p/b == a
}

// EncodedPage is a page an Encoder produced, for the container to write.
type EncodedPage struct {
	// Column is the page's column.
	Column int
	// Length and Priority go to the page's metadata (see Page).
	Length, Priority uint64
	// Encoding is the page's encoding: a serialized google.protobuf.Any.
	Encoding []byte
	// Buffers are the page's buffers, in the order its encoding numbers
	// them.
	Buffers [][]byte
}

// Encoder turns batches of rows into the pages of one format version.
// The container writes each page as it comes (so memory stays bounded by
// what the encoder buffers), then the column metadata.
type Encoder interface {
	// NumColumns returns the file's number of columns.
	NumColumns() int
	// FieldIDs returns the id of the field of each column, in column order.
	FieldIDs() []int32
	// Append encodes a batch (one array per top-level field of the
	// schema, in order) whose first row is the file's row row, and returns
	// the pages it filled.
	Append(cols []arrow.Array, row uint64) ([]EncodedPage, error)
	// Finish returns the pages still buffered.
	Finish() ([]EncodedPage, error)
	// ColumnEncoding returns the encoding of a column (a serialized Any).
	ColumnEncoding(column int) []byte
}
