package engine

import (
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancens/lancens/lance/schema"
	"github.com/lancens/lancens/store"
)

// reservedColumn reports the names lancens adds to query results, which a
// table's own columns may not take.
func reservedColumn(name string) bool {
	switch name {
	case "_rowid", "_distance", "_score", "_rowoffset", "_relevance_score", "query_index":
		return true
	}
	return false
}

// newTableSchema checks the schema of the rows a table is created from and
// returns the Arrow schema the table keeps (dictionaries become their
// values, view types their base types) and its Lance form, without field
// ids. It returns TableSchemaValidationError (20) for a schema without
// fields, a field without a name or named twice, a reserved name, and a
// type Lance cannot store.
func newTableSchema(s *arrow.Schema) (*arrow.Schema, *schema.Schema, error) {
	if s == nil || s.NumFields() == 0 {
		return nil, nil, store.Errorf(store.CodeTableSchemaValidationError, "the schema has no fields")
	}
	fields := make([]arrow.Field, s.NumFields())
	seen := map[string]bool{}
	for i, f := range s.Fields() {
		switch {
		case f.Name == "":
			return nil, nil, store.Errorf(store.CodeTableSchemaValidationError, "field %d has no name", i)
		case seen[f.Name]:
			return nil, nil, store.Errorf(store.CodeTableSchemaValidationError, "field %q appears twice", f.Name)
		case reservedColumn(f.Name):
			return nil, nil, store.Errorf(store.CodeTableSchemaValidationError, "field name %q is reserved", f.Name)
		}
		seen[f.Name] = true
		f.Type = storedType(f.Type)
		if _, err := schema.FieldFromArrow(f); err != nil {
			return nil, nil, &store.Error{Code: store.CodeTableSchemaValidationError, Cause: err,
				Message: fmt.Sprintf("field %q has type %s, which a Lance dataset cannot store: %s", f.Name, f.Type, trimSentinel(err))}
		}
		fields[i] = f
	}
	md := s.Metadata()
	out := arrow.NewSchema(fields, &md)
	ls, err := schema.FromArrow(out)
	if err != nil {
		return nil, nil, schemaError(err)
	}
	return out, ls, nil
}

// schemaError is the error of a schema Lance refuses:
// TableSchemaValidationError (20) with Lance's reason.
func schemaError(err error) error {
	if errors.Is(err, schema.ErrUnsupportedType) || errors.Is(err, schema.ErrInvalid) {
		return &store.Error{Code: store.CodeTableSchemaValidationError, Message: trimSentinel(err), Cause: err}
	}
	return err
}

// storedType returns the type a value keeps once stored: dictionaries
// become their values and view types their base types, at any depth.
func storedType(dt arrow.DataType) arrow.DataType {
	switch t := dt.(type) {
	case *arrow.DictionaryType:
		return storedType(t.ValueType)
	case *arrow.StructType:
		fields := make([]arrow.Field, t.NumFields())
		for i, f := range t.Fields() {
			f.Type = storedType(f.Type)
			fields[i] = f
		}
		return arrow.StructOf(fields...)
	case *arrow.ListType:
		return arrow.ListOfField(storedField(t.ElemField()))
	case *arrow.LargeListType:
		return arrow.LargeListOfField(storedField(t.ElemField()))
	case *arrow.FixedSizeListType:
		return arrow.FixedSizeListOfField(t.Len(), storedField(t.ElemField()))
	}
	switch dt.ID() {
	case arrow.STRING_VIEW:
		return arrow.BinaryTypes.String
	case arrow.BINARY_VIEW:
		return arrow.BinaryTypes.Binary
	}
	return dt
}

func storedField(f arrow.Field) arrow.Field {
	f.Type = storedType(f.Type)
	return f
}

// conformer turns batches of one schema (a write's) into batches of a
// table's schema: its fields in its order, fields the write lacks as
// nulls, dictionaries decoded and views copied to their base types.
type conformer struct {
	table *arrow.Schema
	// source[i] is the index of table field i in the write's batches, -1
	// when the write lacks it.
	source []int
}

// newConformer checks that rows of schema data can be written to a table
// of schema tbl: every field of the data is in the table with a type that
// stores as the table's (names match exactly), and the table's fields the
// data lacks are nullable. It returns TableSchemaValidationError (20)
// naming the first problem.
func newConformer(tbl, data *arrow.Schema) (*conformer, error) {
	c := &conformer{table: tbl, source: make([]int, tbl.NumFields())}
	for _, f := range data.Fields() {
		idx := tbl.FieldIndices(f.Name)
		if len(idx) == 0 {
			return nil, store.Errorf(store.CodeTableSchemaValidationError, "field %q is not in the table's schema", f.Name)
		}
		if want, got := tbl.Field(idx[0]).Type, storedType(f.Type); !arrow.TypeEqual(want, got) && !compatibleNested(want, got) {
			return nil, store.Errorf(store.CodeTableSchemaValidationError, "field %q has type %s in the data but %s in the table", f.Name, got, want)
		}
	}
	for i, f := range tbl.Fields() {
		idx := data.FieldIndices(f.Name)
		switch {
		case len(idx) > 0:
			c.source[i] = idx[0]
		case !f.Nullable:
			return nil, store.Errorf(store.CodeTableSchemaValidationError, "non-nullable field %q is missing from the data", f.Name)
		default:
			c.source[i] = -1
		}
	}
	return c, nil
}

// compatibleNested reports whether got stores as want although the two
// differ in what does not change the values: the names and nullability of
// list items.
func compatibleNested(want, got arrow.DataType) bool {
	if want.ID() != got.ID() {
		return false
	}
	switch w := want.(type) {
	case *arrow.ListType:
		return typeStoresAs(w.Elem(), got.(*arrow.ListType).Elem())
	case *arrow.LargeListType:
		return typeStoresAs(w.Elem(), got.(*arrow.LargeListType).Elem())
	case *arrow.FixedSizeListType:
		g := got.(*arrow.FixedSizeListType)
		return w.Len() == g.Len() && typeStoresAs(w.Elem(), g.Elem())
	case *arrow.StructType:
		g := got.(*arrow.StructType)
		if w.NumFields() != g.NumFields() {
			return false
		}
		for i, f := range w.Fields() {
			if g.Field(i).Name != f.Name || !typeStoresAs(f.Type, g.Field(i).Type) {
				return false
			}
		}
		return true
	}
	return false
}

func typeStoresAs(want, got arrow.DataType) bool {
	return arrow.TypeEqual(want, got) || compatibleNested(want, got)
}

// conform returns rec as a batch of the table's schema. It returns
// TableSchemaValidationError (20) when a non-nullable field of the table
// gets a null.
func (c *conformer) conform(mem memory.Allocator, rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	n := rec.NumRows()
	cols := make([]arrow.Array, c.table.NumFields())
	defer func() {
		for _, a := range cols {
			if a != nil {
				a.Release()
			}
		}
	}()
	for i, f := range c.table.Fields() {
		if c.source[i] < 0 {
			cols[i] = array.MakeArrayOfNull(mem, f.Type, int(n))
			continue
		}
		a := rec.Column(c.source[i])
		if !f.Nullable && a.NullN() > 0 {
			return nil, store.Errorf(store.CodeTableSchemaValidationError, "non-nullable field %q has null values", f.Name)
		}
		cols[i] = pushDownStructNulls(mem, storedArray(mem, a, f.Type))
	}
	return array.NewRecordBatch(c.table, cols, n), nil
}

// pushDownStructNulls returns a (whose reference it takes) with the nulls
// of its structs, at any depth, moved down to their fields: a null struct
// becomes a struct of nulls. Data files of format 2.0 keep no validity of
// their own for structs (Lance reads a null struct of such a file back as
// a struct of nulls), so this is what a table of that format stores.
func pushDownStructNulls(mem memory.Allocator, a arrow.Array) arrow.Array {
	if !hasNullStruct(a) {
		return a
	}
	defer a.Release()
	if l, ok := a.(array.ListLike); ok {
		// The list's own buffers stay; its values lose their null structs.
		values := l.ListValues()
		values.Retain()
		values = pushDownStructNulls(mem, values)
		defer values.Release()
		d := a.Data()
		return fromData(array.NewData(d.DataType(), d.Len(), d.Buffers(), []arrow.ArrayData{values.Data()}, d.NullN(), d.Offset()))
	}
	st := a.(*array.Struct)
	children := make([]arrow.ArrayData, st.NumField())
	for j := range children {
		child := st.Field(j)
		if st.NullN() > 0 && child.DataType().ID() != arrow.NULL {
			child = withParentNulls(child, st)
		} else {
			child.Retain()
		}
		child = pushDownStructNulls(mem, child)
		children[j] = child.Data()
		children[j].Retain()
		child.Release()
	}
	return fromData(ownedData(a.DataType(), a.Len(), []*memory.Buffer{nil}, children, 0, 0))
}

// hasNullStruct reports whether a holds a null struct at any depth of
// nested structs and lists.
func hasNullStruct(a arrow.Array) bool {
	switch x := a.(type) {
	case array.ListLike:
		return hasNullStruct(x.ListValues())
	case *array.Struct:
		if x.NullN() > 0 {
			return true
		}
		for j := range x.NumField() {
			if hasNullStruct(x.Field(j)) {
				return true
			}
		}
	}
	return false
}

// storedArray returns a as an array of type dt, the type it stores as
// (see storedType): decoded when a is a dictionary, copied when a is a
// view, relabelled when only item names differ.
func storedArray(mem memory.Allocator, a arrow.Array, dt arrow.DataType) arrow.Array {
	if arrow.TypeEqual(a.DataType(), dt) {
		a.Retain()
		return a
	}
	switch src := a.(type) {
	case *array.Dictionary:
		values := storedArray(mem, src.Dictionary(), dt)
		defer values.Release()
		idx := make([]int, src.Len())
		nulls := false
		for i := range idx {
			if src.IsNull(i) {
				nulls = true
				continue
			}
			idx[i] = src.GetValueIndex(i)
		}
		out := take(mem, values, idx)
		if !nulls {
			return out
		}
		defer out.Release()
		return withValidityOf(out, src)
	case *array.StringView, *array.BinaryView:
		b := array.NewBuilder(mem, dt)
		defer b.Release()
		for i := range a.Len() {
			if a.IsNull(i) {
				b.AppendNull()
				continue
			}
			switch v := a.(type) {
			case *array.StringView:
				b.(*array.StringBuilder).Append(v.Value(i))
			case *array.BinaryView:
				b.(*array.BinaryBuilder).Append(v.Value(i))
			}
		}
		return b.NewArray()
	}
	// Same layout, other names or nullability of nested fields: the data
	// are the table's as they are, except nested dictionaries or views,
	// which storedType would have flagged as a mismatch already.
	d := a.Data()
	out := array.NewData(dt, d.Len(), d.Buffers(), d.Children(), d.NullN(), d.Offset())
	defer out.Release()
	return array.MakeFromData(out)
}

// withValidityOf returns a copy of a (values as they are) with the nulls
// of src, a column of the same length.
func withValidityOf(a, src arrow.Array) arrow.Array {
	idx := make([]int, a.Len())
	for i := range idx {
		idx[i] = i
	}
	bitmap, nulls := takeValidity(memory.DefaultAllocator, src, idx)
	d := a.Data()
	bufs := append([]*memory.Buffer{bitmap}, d.Buffers()[1:]...)
	out := array.NewData(d.DataType(), d.Len(), bufs, d.Children(), nulls, d.Offset())
	if bitmap != nil {
		bitmap.Release()
	}
	defer out.Release()
	return array.MakeFromData(out)
}
