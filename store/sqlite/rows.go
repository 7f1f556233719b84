package sqlite

import (
	"context"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/store/sqlite/internal/sqlitedb"
	"github.com/lancens/lancens/store/sqlite/legacy"
)

// conform checks that data with schema ds can be written to a table with
// schema ts: every data field must exist in the table with a compatible type
// (names match exactly; dictionaries and view types count as their values),
// and table fields missing from the data must be nullable. It returns
// TableSchemaValidationError (20) naming the first problem.
func conform(ts *tableSchema, ds *arrow.Schema) error {
	for _, f := range ds.Fields() {
		i := ts.field(f.Name)
		if i < 0 {
			return store.Errorf(store.CodeTableSchemaValidationError, "field %q is not in the table's schema", f.Name)
		}
		if err := compatible(f.Name, ts.arrow.Field(i).Type, storedType(f.Type)); err != nil {
			return err
		}
	}
	for _, f := range ts.arrow.Fields() {
		if !ds.HasField(f.Name) && !f.Nullable {
			return store.Errorf(store.CodeTableSchemaValidationError, "non-nullable field %q is missing from the data", f.Name)
		}
	}
	return nil
}

// compatible reports, as code 20, whether data of type got can be stored in a
// field of type want.
func compatible(path string, want, got arrow.DataType) error {
	mismatch := store.Errorf(store.CodeTableSchemaValidationError, "field %q has type %s in the data but %s in the table", path, got, want)
	if want.ID() != got.ID() {
		return mismatch
	}
	switch w := want.(type) {
	case *arrow.StructType:
		g := got.(*arrow.StructType)
		if w.NumFields() != g.NumFields() {
			return mismatch
		}
		for i, f := range w.Fields() {
			gf := g.Field(i)
			if gf.Name != f.Name {
				return mismatch
			}
			if err := compatible(path+"."+f.Name, f.Type, gf.Type); err != nil {
				return err
			}
		}
		return nil
	case *arrow.MapType:
		g := got.(*arrow.MapType)
		if err := compatible(path+".key", w.KeyType(), g.KeyType()); err != nil {
			return err
		}
		return compatible(path+".value", w.ItemType(), g.ItemType())
	case *arrow.FixedSizeListType:
		if w.Len() != got.(*arrow.FixedSizeListType).Len() {
			return mismatch
		}
		return compatible(path+".item", w.Elem(), got.(*arrow.FixedSizeListType).Elem())
	case arrow.ListLikeType:
		return compatible(path+".item", w.Elem(), got.(arrow.ListLikeType).Elem())
	}
	if !arrow.TypeEqual(want, got) {
		return mismatch
	}
	return nil
}

// columnValue is one physical column of a batch's rows.
type columnValue struct {
	column string
	value  valueFunc
}

// batchColumns returns the physical columns of the table and how to read
// each from the rows of batch (whose fields have passed conform).
func batchColumns(ts *tableSchema, batch arrow.RecordBatch) []columnValue {
	var out []columnValue
	always := func(int) bool { return true }
	for i, fl := range ts.fields {
		var arr arrow.Array
		if idx := batch.Schema().FieldIndices(fl.Name); len(idx) > 0 {
			arr = batch.Column(idx[0])
		}
		out = appendFieldColumns(out, fl, ts.arrow.Field(i).Type, arr, always)
	}
	return out
}

// appendFieldColumns adds the columns of one field. arr is nil for a field
// the data lacks; valid says whether the enclosing structs are present.
func appendFieldColumns(out []columnValue, fl *fieldLayout, dt arrow.DataType, arr arrow.Array, valid func(int) bool) []columnValue {
	st, isStruct := dt.(*arrow.StructType)
	if !isStruct {
		if arr == nil {
			return append(out, columnValue{fl.Column, func(int) (any, error) { return nil, nil }})
		}
		get := leafValues(arr)
		return append(out, columnValue{fl.Column, func(i int) (any, error) {
			if !valid(i) {
				return nil, nil
			}
			return get(i)
		}})
	}
	sa, _ := arr.(*array.Struct)
	present := func(i int) bool { return sa != nil && valid(i) && sa.IsValid(i) }
	out = append(out, columnValue{fl.Column, func(i int) (any, error) {
		if present(i) {
			return int64(1), nil
		}
		return nil, nil
	}})
	for j, child := range fl.Children {
		var carr arrow.Array
		if sa != nil {
			carr = sa.Field(j)
		}
		out = appendFieldColumns(out, child, st.Field(j).Type, carr, present)
	}
	return out
}

// checkNulls returns code 20 when a non-nullable top-level field of the
// table gets a null.
func checkNulls(ts *tableSchema, batch arrow.RecordBatch) error {
	for i, f := range batch.Schema().Fields() {
		j := ts.field(f.Name)
		if j >= 0 && !ts.arrow.Field(j).Nullable && batch.Column(i).NullN() > 0 {
			return store.Errorf(store.CodeTableSchemaValidationError, "field %q is not nullable but the data has nulls", f.Name)
		}
	}
	return nil
}

// maxStatementRows bounds the rows of one multi-row INSERT, and
// maxStatementValues its bound values (SQLite allows 32766).
const (
	maxStatementRows   = 256
	maxStatementValues = 30000
)

// boundRows are rows converted to the SQL values of a table's physical
// columns, grouped into multi-row INSERT statements. Converting needs no
// database, so it is done before a write takes the writer.
type boundRows struct {
	versioned bool    // each row starts with its _from value
	width     int     // values per row, _from included
	perStmt   int     // rows of a full statement
	rows      int     // rows in all
	bytes     int64   // about what the values take in SQLite
	stmts     [][]any // the values of each statement, row after row
	// batches are the batches the rows were read from, retained until the
	// rows are written (release): string and binary values may share their
	// memory, and the server counts it against its decode budget until
	// then.
	batches []arrow.RecordBatch
}

// release releases the batches the rows were read from; call it once the
// rows are written, or will not be. It may be called more than once.
func (r *boundRows) release() {
	if r == nil {
		return
	}
	for _, b := range r.batches {
		b.Release()
	}
	r.batches = nil
}

// insert adds the rows to the SQL table named table, whose physical columns
// are columns (in the order of the values), with _from = version when the
// rows are versioned. It returns an internal error if SQLite refuses them.
func (r *boundRows) insert(ctx context.Context, tx *Tx, table string, columns []string, version int64) error {
	if r.rows == 0 {
		return nil
	}
	names := quoteAll(columns)
	if r.versioned {
		names = append([]string{"_from"}, names...)
	}
	if len(names) != r.width {
		return internal("insert rows", fmt.Errorf("%d columns for rows of %d values", len(names), r.width))
	}
	rowSQL := "(" + strings.TrimSuffix(strings.Repeat("?,", r.width), ",") + ")"
	prefix := fmt.Sprintf("INSERT INTO %s (%s) VALUES ", table, strings.Join(names, ","))
	statement := func(rows int) string { return prefix + strings.TrimSuffix(strings.Repeat(rowSQL+",", rows), ",") }
	// Full statements share one prepared statement: SQLite would parse the
	// long INSERT again for every one.
	var full *sqlitedb.Stmt
	if r.rows >= r.perStmt {
		var err error
		if full, err = tx.Prepare(ctx, statement(r.perStmt)); err != nil {
			return internal("insert rows", err)
		}
		defer full.Close()
	}
	var from any = version
	for _, args := range r.stmts {
		if r.versioned {
			for i := 0; i < len(args); i += r.width {
				args[i] = from
			}
		}
		var err error
		if n := len(args) / r.width; n == r.perStmt {
			_, err = full.Exec(ctx, args...)
		} else {
			_, err = tx.Exec(ctx, statement(n), args...)
		}
		if err != nil {
			return internal("insert rows", err)
		}
	}
	return nil
}

// valueBytes estimates what a bound value takes once stored.
func valueBytes(v any) int64 {
	switch x := v.(type) {
	case string:
		return int64(len(x)) + 1
	case []byte:
		return int64(len(x)) + 1
	case nil:
		return 1
	}
	return 8
}

// fieldReader appends the values of one output field, read from
// consecutive SQL result columns, to its builder.
type fieldReader struct {
	builder array.Builder
	width   int // SQL columns consumed
	read    func(b array.Builder, vals []any) error
}

// newFieldReader reads a stored field of type dt.
func newFieldReader(mem memory.Allocator, dt arrow.DataType) *fieldReader {
	r := &fieldReader{builder: array.NewBuilder(mem, dt)}
	r.width, r.read = legacy.FieldDecoder(dt)
	return r
}

// batchSize is the number of rows per record batch a query returns.
const batchSize = 8192

// readBatches reads SQL rows whose columns are, in order, the spans of
// readers, into record batches of schema s.
func readBatches(rows interface {
	Next() bool
	Scan(...any) error
	Err() error
}, s *arrow.Schema, readers []*fieldReader) ([]arrow.RecordBatch, error) {
	width := 0
	for _, r := range readers {
		width += r.width
	}
	vals := make([]any, width)
	ptrs := make([]any, width)
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var out []arrow.RecordBatch
	n := 0
	flush := func() {
		cols := make([]arrow.Array, len(readers))
		for i, r := range readers {
			cols[i] = r.builder.NewArray()
		}
		out = append(out, array.NewRecordBatch(s, cols, int64(n)))
		n = 0
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, internal("read rows", err)
		}
		off := 0
		for _, r := range readers {
			if err := r.read(r.builder, vals[off:off+r.width]); err != nil {
				return nil, internal("read rows", err)
			}
			off += r.width
		}
		if n++; n == batchSize {
			flush()
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if n > 0 || len(out) == 0 {
		flush()
	}
	return out, nil
}
