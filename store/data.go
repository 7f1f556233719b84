package store

import (
	"context"
	"io"
	"slices"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

// ManagedLocationScheme is the URI scheme of managed tables' locations: their
// rows live inside lancens, so a Lance client that tries to open the
// location directly fails on the scheme instead of reading a wrong path.
const ManagedLocationScheme = "lancens"

// Data is the rows of a write: an Arrow schema, then its record batches,
// read one at a time. Request bodies arrive this way (the server decodes an
// Arrow IPC body batch by batch as the write reads it), so a write never
// needs a whole body in memory. The contract between whoever makes Data
// (the server, tests) and the write that reads it (ManagedData):
//
//   - Schema is known before any batch is read. A write checks it against
//     the table first, so a body of the wrong schema is refused
//     (TableSchemaValidationError, 20) having decoded no batch.
//   - Batches yields the batches in order; nil means no rows. Every batch
//     has Schema's fields, in Schema's order; a batch may have no rows.
//   - The write owns each batch Next returns and must Release it once it
//     no longer needs it: as soon as its rows are written (a staged chunk
//     committed, or the write done). Until then the batch counts against
//     the server's decode budget (--decode-budget), and other requests may
//     wait for it. A write holds only the batches of the rows it is
//     converting or writing, a bounded chunk or two (plus one read ahead),
//     never a whole body; to keep one longer, for a retry say, it calls
//     Retain and later Release. Release may be called from any goroutine.
//   - Next returns io.EOF after the last batch. Any other error ends the
//     stream: a malformed body or one over a limit, a spent decode budget,
//     a client gone. The write must then fail, return that error unchanged
//     (the producer chooses its code and HTTP status) and leave nothing of
//     itself visible, rows already staged included.
//   - A write may stop reading early (an error of its own) without
//     draining the stream; the producer cleans up after the write returns.
//     Next is never called concurrently, nor after the write returns.
//   - A stream is read once: writing the same rows twice takes two.
type Data struct {
	Schema  *arrow.Schema
	Batches RecordStream
}

// RecordStream yields the record batches of a write one at a time (see
// Data for who releases what).
type RecordStream interface {
	// Next returns the next batch, which the caller then owns, or io.EOF
	// after the last one. Any other error ends the stream.
	Next() (arrow.RecordBatch, error)
}

// NewData returns Data of schema whose stream yields batches, in order: for
// rows already in memory (tests, materialized views). Next retains each
// batch it returns, so the caller keeps its own references and releases
// them as before; the stream holds no reference of its own.
func NewData(schema *arrow.Schema, batches ...arrow.RecordBatch) Data {
	return Data{Schema: schema, Batches: &sliceStream{batches: batches}}
}

// sliceStream is the RecordStream of NewData.
type sliceStream struct {
	batches []arrow.RecordBatch
	next    int
}

func (s *sliceStream) Next() (arrow.RecordBatch, error) {
	if s.next >= len(s.batches) {
		return nil, io.EOF
	}
	b := s.batches[s.next]
	s.next++
	b.Retain()
	return b, nil
}

// WithRelease returns b wrapped so that done runs once, when the last
// reference to it is released: how a producer learns that a write is done
// with a batch (the server returns decode budget this way; tests count
// what a write holds). The wrapper counts its own references; slices of
// it (NewSlice) are not counted.
func WithRelease(b arrow.RecordBatch, done func()) arrow.RecordBatch {
	r := &releasing{RecordBatch: b, done: done}
	r.refs.Store(1)
	return r
}

// releasing is the batch of WithRelease.
type releasing struct {
	arrow.RecordBatch
	refs atomic.Int64
	done func()
}

func (r *releasing) Retain() { r.refs.Add(1) }

func (r *releasing) Release() {
	if r.refs.Add(-1) == 0 {
		r.RecordBatch.Release()
		r.done()
	}
}

// NewTable describes a managed table to create.
type NewTable struct {
	Mode           CreateMode
	Data           Data
	Properties     map[string]string
	StorageOptions map[string]string
}

// InsertMode says what an insert does with the rows already there.
type InsertMode int

// Insert modes.
const (
	InsertAppend    InsertMode = iota // add the rows
	InsertOverwrite                   // replace all rows
)

// ParseInsertMode reads "append" (default) or "overwrite", case-insensitively.
// It returns InvalidInput (13) for anything else.
func ParseInsertMode(s string) (InsertMode, error) {
	switch normalizeEnum(s) {
	case "", "append":
		return InsertAppend, nil
	case "overwrite":
		return InsertOverwrite, nil
	}
	return 0, Errorf(CodeInvalidInput, "unknown insert mode %q: expected append or overwrite", s)
}

// WriteResult reports a write: the version it made and the rows it touched.
type WriteResult struct {
	Version       int64
	TransactionID string
	Inserted      int64
	Updated       int64
	Deleted       int64
}

// Merge describes a merge_insert: source rows matched with target rows on
// the On columns.
type Merge struct {
	// On are the key columns, one or more, each once: a source row and a
	// target row pair when all their keys are equal (and none is null).
	On                                 []string
	WhenMatchedUpdateAll               bool
	WhenMatchedUpdateFilter            string // SQL on target and source rows ("target.x", "source.y"); implies update
	WhenNotMatchedInsertAll            bool
	WhenNotMatchedBySourceDelete       bool
	WhenNotMatchedBySourceDeleteFilter string // implies delete
	Data                               Data
}

// CheckKeys returns InvalidInput (13) unless m.On names at least one key
// column, each once and none empty.
func (m Merge) CheckKeys() error {
	if len(m.On) == 0 {
		return Errorf(CodeInvalidInput, "merge_insert needs at least one key column in on")
	}
	for i, k := range m.On {
		if k == "" {
			return Errorf(CodeInvalidInput, "merge_insert key column %d of on is empty", i+1)
		}
		if slices.Contains(m.On[:i], k) {
			return Errorf(CodeInvalidInput, "merge_insert key column %s is given twice in on", k)
		}
	}
	return nil
}

// ColumnUpdate sets one column to the value of an SQL expression.
type ColumnUpdate struct {
	Path string
	Expr string
}

// Projection selects query output: all columns (nil), some columns by path,
// or named expressions.
type Projection struct {
	Columns []string
	Aliases []Alias
}

// Alias is one named output expression.
type Alias struct {
	Name, Expr string
}

// Query reads rows of a managed table: a scan, a vector search or a
// full-text search.
type Query struct {
	Version    *int64
	Filter     string
	Projection Projection
	// Limit is the row limit of a scan (<= 0: no limit) and the k of a
	// search (<= 0: 10).
	Limit     int64
	Offset    int64
	WithRowID bool
	// OrderBy sorts a scan (searches order by score); rows that tie keep
	// row id order.
	OrderBy []SortKey
	Vector  *VectorSearch
	Text    *TextSearch
	// MaxSearchRows, when positive, bounds the rows a search may answer: k
	// (at most the rows searched) times the query vectors of a vector
	// search, or the matches kept (at most k) of a full-text search. A
	// search past it fails with InvalidInput naming the bound. Scans are not
	// bounded by it: they answer at most the table.
	MaxSearchRows int64
}

// DefaultSearchK is the k of a search whose Query.Limit names none.
const DefaultSearchK = 10

// CheckSearchRows returns InvalidInput (13) when a search would answer
// rows rows (counted as what says), more than q.MaxSearchRows allows.
func (q Query) CheckSearchRows(rows int64, what string) error {
	if q.MaxSearchRows > 0 && rows > q.MaxSearchRows {
		return Errorf(CodeInvalidInput,
			"the search would answer up to %d rows (%s), more than this server's limit of %d rows per search; ask for a smaller k",
			rows, what, q.MaxSearchRows)
	}
	return nil
}

// SortKey is one column a scan is sorted by.
type SortKey struct {
	Column     string
	Descending bool
	NullsFirst bool
}

// VectorSearch is the nearest-neighbour part of a query.
type VectorSearch struct {
	// Column is the vector column; "" means the table's only one.
	Column string
	// Vectors holds one query vector, or several for a batch search whose
	// results carry a query_index column (Multi).
	Vectors [][]float32
	Multi   bool
	// Metric is l2, cosine, dot or hamming; "" uses the index's, else l2.
	Metric       string
	Nprobes      int
	Ef           int
	RefineFactor int
	// FastSearch skips rows the index does not cover; BypassIndex searches
	// exactly.
	FastSearch  bool
	BypassIndex bool
	// Postfilter applies the filter to the nearest rows instead of before
	// the search.
	Postfilter bool
	// LowerBound ≤ distance < UpperBound, when set.
	LowerBound, UpperBound *float32
}

// Result is a query's output.
type Result struct {
	Schema  *arrow.Schema
	Batches []arrow.RecordBatch
	Version int64
	// Plan describes how the query ran (for explain/analyze).
	Plan string
}

// TableData is what a managed table's schema and size look like at a
// version.
type TableData struct {
	Version  int64
	Schema   *arrow.Schema
	NumRows  int64
	NumBytes int64
	// Deleted counts, as Lance's num_deleted_rows does, the rows of the
	// version's fragments that the version no longer shows (deleted, or
	// replaced by an update); a fragment none of whose rows it shows is
	// not one of its fragments (Lance drops it).
	Deleted int64
	// Fragments counts the writes whose rows the version shows: the rows
	// of one write form a fragment.
	Fragments int64
	Timestamp time.Time
	// View describes the materialized view the table is, nil for a plain
	// table.
	View *View
}

// TableStats describes the latest version of a managed table.
type TableStats struct {
	NumRows int64
	// TotalBytes estimates the stored size of the rows of the latest
	// version's fragments, deleted ones included.
	TotalBytes int64
	NumIndices int64
	// FragmentRows holds the row count of each fragment (see TableData),
	// its deleted rows included, as Lance counts a fragment's rows.
	FragmentRows []int64
}

// NewColumn adds a column computed from an SQL expression over each row:
// once, when it is added, or, for a Computed column, whenever a backfill
// runs (the column starts all null and keeps the expression as a binding).
type NewColumn struct {
	Name     string
	Expr     string
	Computed bool
}

// ComputedBinding is the field metadata key under which a computed column
// keeps its expression.
const ComputedBinding = "lancens:computed"

// ColumnAlteration changes one column; nil fields are left alone.
type ColumnAlteration struct {
	Path     string
	Rename   *string
	Nullable *bool
	Type     arrow.DataType
}

// FieldMetadataUpdate changes the metadata of one field: set keys, delete
// keys mapped to nil, or with Replace start from nothing.
type FieldMetadataUpdate struct {
	Path     string
	Metadata map[string]*string
	Replace  bool
}

// ManagedData holds the rows of managed tables. Every write is one transaction
// that makes a new version; reads can name any version. CreateTable, Insert
// and MergeInsert read their rows as Data says: the schema is checked
// before any batch is read, batches are released as their rows are
// written, and an error of the stream is returned unchanged with nothing
// written.
type ManagedData interface {
	// CreateTable creates managed table id from t.Data (its schema, and its
	// rows if any). A declared table is materialised. Returns
	// NamespaceNotFound (1), TableAlreadyExists (5),
	// TableSchemaValidationError (20) for unsupported types.
	CreateTable(ctx context.Context, id []string, t NewTable) (*Table, WriteResult, error)

	// Insert appends d to, or overwrites, table id; a declared table is
	// created from d. Returns TableNotFound (4),
	// TableSchemaValidationError (20) when d's schema does not match,
	// InvalidTableState (19) for an external table.
	Insert(ctx context.Context, id []string, mode InsertMode, d Data) (WriteResult, error)

	// MergeInsert merges m.Data into table id. Returns TableNotFound (4),
	// TableColumnNotFound (12), TableSchemaValidationError (20),
	// InvalidTableState (19), InvalidInput (13) when m.On is empty or names
	// a column twice.
	MergeInsert(ctx context.Context, id []string, m Merge) (WriteResult, error)

	// Update sets columns of the rows matching predicate ("" for all).
	// Returns TableNotFound (4), TableColumnNotFound (12), InvalidInput (13).
	Update(ctx context.Context, id []string, updates []ColumnUpdate, predicate string) (WriteResult, error)

	// Delete deletes the rows matching predicate. Returns TableNotFound (4),
	// TableColumnNotFound (12), InvalidInput (13).
	Delete(ctx context.Context, id []string, predicate string) (WriteResult, error)

	// CountRows counts the rows matching predicate ("" for all) at a version
	// (nil: latest), and returns the version it counted. Returns
	// TableVersionNotFound (11) and the errors of Delete.
	CountRows(ctx context.Context, id []string, version *int64, predicate string) (n, counted int64, err error)

	// Query reads rows. Returns TableNotFound (4), TableVersionNotFound (11),
	// TableColumnNotFound (12), InvalidInput (13).
	Query(ctx context.Context, id []string, q Query) (*Result, error)

	// ExplainQuery describes how q would run; with analyze it also runs it
	// and reports what it did. Errors are those of Query.
	ExplainQuery(ctx context.Context, id []string, q Query, analyze bool) (string, error)

	// Restore makes the content and schema of version the table's new latest
	// version. Returns TableVersionNotFound (11).
	Restore(ctx context.Context, id []string, version int64) (WriteResult, error)

	// Describe returns a managed table's schema and size at a version (nil:
	// latest). Returns TableVersionNotFound (11), InvalidTableState (19) for
	// a table without rows in lancens.
	Describe(ctx context.Context, id []string, version *int64) (*TableData, error)

	// Stats describes the latest version of table id. Returns
	// TableNotFound (4), InvalidTableState (19).
	Stats(ctx context.Context, id []string) (*TableStats, error)

	// AddColumns adds columns computed once from expressions over the
	// existing rows. Returns TableSchemaValidationError (20) for a name that
	// exists, TableColumnNotFound (12), InvalidInput (13).
	AddColumns(ctx context.Context, id []string, cols []NewColumn) (WriteResult, error)

	// QueueBackfill queues the filling of computed column (of the rows
	// matching where, "" for all) and returns the job's transaction id.
	// Returns TableColumnNotFound (12), InvalidInput (13) for a column that
	// is not computed.
	QueueBackfill(ctx context.Context, id []string, column, where string) (string, error)

	// Backfill fills a computed column as a queued job describes, making a
	// new version.
	Backfill(ctx context.Context, job BackfillColumn) (WriteResult, error)

	// AlterColumns renames, changes nullability of, or casts columns.
	// Returns TableColumnNotFound (12), TableSchemaValidationError (20).
	AlterColumns(ctx context.Context, id []string, alts []ColumnAlteration) (WriteResult, error)

	// DropColumns removes columns. Returns TableColumnNotFound (12),
	// InvalidInput (13) when every column would go.
	DropColumns(ctx context.Context, id []string, paths []string) (WriteResult, error)

	// UpdateFieldMetadata changes field metadata and returns the resulting
	// metadata of each field changed, by path.
	UpdateFieldMetadata(ctx context.Context, id []string, updates []FieldMetadataUpdate) (WriteResult, map[string]map[string]string, error)

	// UpdateSchemaMetadata sets (upserts) schema metadata keys and returns
	// the resulting metadata.
	UpdateSchemaMetadata(ctx context.Context, id []string, set map[string]string) (WriteResult, map[string]string, error)
}

// IsVectorType reports whether dt is what lancens treats as a vector
// column (searchable, vector-indexable, stored as one value): a
// fixed_size_list of float16, float32, float64, uint8 or int8.
func IsVectorType(dt arrow.DataType) bool {
	t, ok := dt.(*arrow.FixedSizeListType)
	if !ok {
		return false
	}
	switch t.Elem().ID() {
	case arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64, arrow.UINT8, arrow.INT8:
		return true
	}
	return false
}
