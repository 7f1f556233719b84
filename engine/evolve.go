package engine

import (
	"context"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancens/lancens/expr"
	"github.com/lancens/lancens/lance/schema"
	"github.com/lancens/lancens/lance/table"
	"github.com/lancens/lancens/store"
)

// A schema change is a new version whose manifest has the new schema:
// renames, nullability and metadata change the schema alone (Lance's
// Project); new columns, and columns cast to another type, get a new
// field id and a new data file in every fragment (Lance's Merge). Old
// versions keep their schema, and their files are untouched.

// evolve runs a schema change of table id as a new version under the
// table's write lock: change returns the operation to commit, computed
// against snapshot s.
func (e *Engine) evolve(ctx context.Context, id []string, change func(ctx context.Context, r *tableRef, s *snapshot) (table.Operation, error)) (store.WriteResult, error) {
	res, err := retryConflicts(ctx, func() (store.WriteResult, error) {
		r, s, unlock, err := e.writeTarget(ctx, id)
		if err != nil {
			return store.WriteResult{}, err
		}
		defer unlock()
		op, err := change(ctx, r, s)
		if err != nil {
			return store.WriteResult{}, err
		}
		c := &committer{e: e, ref: r}
		ds, err := s.ds.WithOptions(e.writeOptions(r, c)).CommitOperation(ctx, op)
		if err != nil {
			return store.WriteResult{}, dataError(id, err)
		}
		return store.WriteResult{Version: int64(ds.Version()), TransactionID: c.txID}, nil
	})
	return res, dataError(id, err)
}

// AddColumns implements store.ManagedData: each column's values are
// computed from the rows as they were before the change (a computed
// column starts all null and keeps its expression as a binding), and
// written as a new data file of every fragment.
func (e *Engine) AddColumns(ctx context.Context, id []string, cols []store.NewColumn) (store.WriteResult, error) {
	if len(cols) == 0 {
		return store.WriteResult{}, store.Errorf(store.CodeInvalidInput, "no columns to add")
	}
	return e.evolve(ctx, id, func(ctx context.Context, r *tableRef, s *snapshot) (table.Operation, error) {
		values := newBinder(s.arrow)
		var progs []*expr.Program
		var fields []arrow.Field
		for _, c := range cols {
			if c.Name == "" || reservedColumn(c.Name) || strings.Contains(c.Name, ".") {
				return nil, store.Errorf(store.CodeInvalidInput, "invalid column name %q", c.Name)
			}
			if s.arrow.HasField(c.Name) || slices.ContainsFunc(fields, func(f arrow.Field) bool { return f.Name == c.Name }) {
				return nil, store.Errorf(store.CodeTableSchemaValidationError, "column %q already exists", c.Name)
			}
			x, err := expr.Parse(c.Expr)
			if err != nil {
				return nil, err
			}
			p, err := expr.PlanValue(x, values)
			if err != nil {
				return nil, err
			}
			dt, err := expr.ArrowType(p.Type())
			if err != nil {
				return nil, err
			}
			f := arrow.Field{Name: c.Name, Type: dt, Nullable: true}
			if c.Computed {
				f.Metadata = arrow.NewMetadata([]string{store.ComputedBinding}, []string{c.Expr})
				p = nil
			}
			progs, fields = append(progs, p), append(fields, f)
		}
		sch := s.schema().Clone()
		next := s.ds.Manifest().MaxFieldID() + 1
		var added []*schema.Field
		for _, f := range fields {
			lf, err := schema.FieldFromArrow(f)
			if err != nil {
				return nil, schemaError(err)
			}
			added = append(added, lf)
			sch.Fields = append(sch.Fields, lf)
		}
		if _, err := sch.AssignIDs(next); err != nil {
			return nil, schemaError(err)
		}
		newSchema := &schema.Schema{Fields: added}
		rd := e.reader(r, s)
		return rd.withNewFiles(ctx, sch, newSchema, func(frag *table.Fragment, rows []int) (arrow.RecordBatch, error) {
			in, err := rd.batch(ctx, frag, values, rows)
			if err != nil {
				return nil, err
			}
			defer in.Release()
			out := make([]arrow.Array, len(fields))
			defer func() {
				for _, a := range out {
					if a != nil {
						a.Release()
					}
				}
			}()
			for i, p := range progs {
				if p == nil {
					out[i] = array.MakeArrayOfNull(memory.DefaultAllocator, fields[i].Type, len(rows))
					continue
				}
				if out[i], err = p.Value(memory.DefaultAllocator, in); err != nil {
					return nil, err
				}
			}
			return array.NewRecordBatch(arrow.NewSchema(fields, nil), out, int64(len(rows))), nil
		})
	})
}

// withNewFiles returns the Merge that gives every fragment of the snapshot
// a data file holding the fields of added (part of sch, ids assigned),
// whose values compute returns for rows of a fragment (every physical
// row, deleted ones included), and makes sch the schema.
func (rd *reader) withNewFiles(ctx context.Context, sch, added *schema.Schema, compute func(frag *table.Fragment, rows []int) (arrow.RecordBatch, error)) (table.Operation, error) {
	frags := make([]*table.Fragment, len(rd.s.ds.Manifest().Fragments))
	for i, frag := range rd.s.ds.Manifest().Fragments {
		batches := func(yield func(arrow.RecordBatch, error) bool) {
			for start := 0; start < int(frag.PhysicalRows); start += rewriteBatchRows {
				rows := make([]int, min(rewriteBatchRows, int(frag.PhysicalRows)-start))
				for k := range rows {
					rows[k] = start + k
				}
				b, err := compute(frag, rows)
				more := yield(b, err)
				if b != nil {
					b.Release()
				}
				if !more || err != nil {
					return
				}
			}
		}
		df, n, err := table.WriteDataFile(ctx, rd.s.ds.Store(), added, iter.Seq2[arrow.RecordBatch, error](batches), rd.e.fileOptions(rd.s.ds.Manifest()))
		if err != nil {
			return nil, writeError(rd.ref.id, err)
		}
		if n != frag.PhysicalRows {
			return nil, fmt.Errorf("wrote %d rows for fragment %d of %d", n, frag.ID, frag.PhysicalRows)
		}
		c := frag.Clone()
		c.Files = append(c.Files, df)
		frags[i] = c
	}
	return &table.Merge{Fragments: frags, Schema: sch}, nil
}

// AlterColumns implements store.ManagedData: renames and nullability
// change the schema; a cast gives the column a new field id, whose values
// (every row converted as CAST converts them) are a new data file of
// every fragment.
func (e *Engine) AlterColumns(ctx context.Context, id []string, alts []store.ColumnAlteration) (store.WriteResult, error) {
	if len(alts) == 0 {
		return store.WriteResult{}, store.Errorf(store.CodeInvalidInput, "no alterations")
	}
	return e.evolve(ctx, id, func(ctx context.Context, r *tableRef, s *snapshot) (table.Operation, error) {
		sch := s.schema().Clone()
		rd := e.reader(r, s)
		type cast struct {
			top  int // the cast field's top-level index in s.arrow
			prog *expr.Program
			f    arrow.Field
		}
		var casts []cast
		castValues := newBinder(s.arrow)
		for _, a := range alts {
			names, err := schema.ParsePath(a.Path)
			if err != nil {
				return nil, store.Errorf(store.CodeTableColumnNotFound, "column %s not found", a.Path)
			}
			lf, err := sch.Field(a.Path)
			if err != nil {
				return nil, store.Errorf(store.CodeTableColumnNotFound, "column %s not found", a.Path)
			}
			if a.Nullable != nil {
				if !*a.Nullable && lf.Nullable {
					if err := rd.checkNoNulls(ctx, a.Path); err != nil {
						return nil, err
					}
				}
				lf.Nullable = *a.Nullable
			}
			if a.Type != nil {
				if len(names) > 1 {
					return nil, store.Errorf(store.CodeUnsupported, "changing the type of %s, a field inside a struct, is not supported by this engine yet", a.Path)
				}
				c, err := planCast(s.arrow, a.Path, a.Type)
				if err != nil {
					return nil, err
				}
				c.Nullable = lf.Nullable
				top := s.arrow.FieldIndices(names[0])[0]
				p, err := castProgram(castValues, names, c.Type)
				if err != nil {
					return nil, err
				}
				casts = append(casts, cast{top: top, prog: p, f: c})
			}
			if a.Rename != nil {
				if *a.Rename == "" {
					return nil, store.Errorf(store.CodeInvalidInput, "new name of %s is empty", a.Path)
				}
				parent := sch.Fields
				if len(names) > 1 {
					pf, _ := sch.Field(schema.FormatPath(names[:len(names)-1]...))
					parent = pf.Children
				}
				if *a.Rename != lf.Name && slices.ContainsFunc(parent, func(f *schema.Field) bool { return f.Name == *a.Rename }) {
					return nil, store.Errorf(store.CodeTableSchemaValidationError, "column %s already exists", schema.FormatPath(append(slices.Clone(names[:len(names)-1]), *a.Rename)...))
				}
				lf.Name = *a.Rename
			}
		}
		if err := sch.Validate(); err != nil {
			return nil, schemaError(err)
		}
		if len(casts) == 0 {
			return &table.Project{Schema: sch}, nil
		}
		// Each cast field is replaced, where it stands, by a field of the
		// new type with a new id.
		next := s.ds.Manifest().MaxFieldID() + 1
		added := &schema.Schema{}
		var out []arrow.Field
		for _, c := range casts {
			old := sch.Fields[c.top]
			f := c.f
			f.Name, f.Nullable, f.Metadata = old.Name, old.Nullable, arrow.MetadataFrom(old.Metadata)
			lf, err := schema.FieldFromArrow(f)
			if err != nil {
				return nil, schemaError(err)
			}
			sch.Fields[c.top] = lf
			added.Fields = append(added.Fields, lf)
			out = append(out, f)
		}
		if _, err := sch.AssignIDs(next); err != nil {
			return nil, schemaError(err)
		}
		return rd.withNewFiles(ctx, sch, added, func(frag *table.Fragment, rows []int) (arrow.RecordBatch, error) {
			in, err := rd.batch(ctx, frag, castValues, rows)
			if err != nil {
				return nil, err
			}
			defer in.Release()
			cols := make([]arrow.Array, len(casts))
			defer func() {
				for _, a := range cols {
					if a != nil {
						a.Release()
					}
				}
			}()
			for i, c := range casts {
				v, err := valueAs(c.prog, c.f.Type, in)
				if err != nil {
					return nil, &store.Error{Code: store.CodeTableSchemaValidationError, Cause: err,
						Message: fmt.Sprintf("cannot change column %s to %s: %s", c.f.Name, c.f.Type, store.ErrorMessage(err))}
				}
				cols[i] = v
			}
			return array.NewRecordBatch(arrow.NewSchema(out, nil), cols, int64(len(rows))), nil
		})
	})
}

// planCast checks a cast of the column at path to dt and returns the
// field it becomes. It returns TableSchemaValidationError (20) for a
// conversion lancens does not do.
func planCast(s *arrow.Schema, path string, dt arrow.DataType) (arrow.Field, error) {
	c, ok := lookupColumn(s, path)
	if !ok {
		return arrow.Field{}, store.Errorf(store.CodeTableColumnNotFound, "column %s not found", path)
	}
	if _, isStruct := c.field.Type.(*arrow.StructType); isStruct {
		return arrow.Field{}, store.Errorf(store.CodeTableSchemaValidationError, "cannot change the type of struct %s", path)
	}
	dt = storedType(dt)
	if _, err := schema.LogicalType(dt); err != nil {
		return arrow.Field{}, schemaError(err)
	}
	if _, ok := expr.CastTypeName(dt); !ok || !expr.Castable(c.field.Type, dt) {
		return arrow.Field{}, store.Errorf(store.CodeTableSchemaValidationError, "cannot change column %s from %s to %s", path, c.field.Type, dt)
	}
	return arrow.Field{Name: c.field.Name, Type: dt, Nullable: c.field.Nullable, Metadata: c.field.Metadata}, nil
}

// castProgram compiles CAST(column AS type) over the columns b binds.
func castProgram(b *colBinder, names []string, dt arrow.DataType) (*expr.Program, error) {
	name, _ := expr.CastTypeName(dt)
	x, err := expr.Parse(fmt.Sprintf("CAST(%s AS %s)", expr.QuotePath(names), name))
	if err != nil {
		return nil, err
	}
	p, err := expr.PlanValue(x, b)
	if err != nil {
		return nil, store.Errorf(store.CodeTableSchemaValidationError, "cannot change column %s to %s: %s", strings.Join(names, "."), dt, store.ErrorMessage(err))
	}
	return p, nil
}

// checkNoNulls returns TableSchemaValidationError (20) when the column at
// path has nulls in the snapshot's live rows.
func (rd *reader) checkNoNulls(ctx context.Context, path string) error {
	c, ok := lookupColumn(rd.s.arrow, path)
	if !ok {
		return store.Errorf(store.CodeTableColumnNotFound, "column %s not found", path)
	}
	var n int
	for _, frag := range rd.s.ds.Manifest().Fragments {
		live, err := rd.selected(ctx, frag, nil)
		if err != nil {
			return dataError(rd.ref.id, err)
		}
		col, err := rd.gather(ctx, frag, c.top, live)
		if err != nil {
			return dataError(rd.ref.id, err)
		}
		v := structChild(col, c.path)
		n += v.NullN()
		v.Release()
		col.Release()
	}
	if n > 0 {
		return store.Errorf(store.CodeTableSchemaValidationError, "column %s has %d null values and cannot be made non-nullable", path, n)
	}
	return nil
}

// DropColumns implements store.ManagedData: the columns leave the schema;
// their values stay in the data files until a compaction rewrites them.
func (e *Engine) DropColumns(ctx context.Context, id []string, paths []string) (store.WriteResult, error) {
	if len(paths) == 0 {
		return store.WriteResult{}, store.Errorf(store.CodeInvalidInput, "no columns to drop")
	}
	return e.evolve(ctx, id, func(ctx context.Context, r *tableRef, s *snapshot) (table.Operation, error) {
		sch := s.schema().Clone()
		for _, p := range paths {
			names, err := schema.ParsePath(p)
			if err != nil {
				return nil, store.Errorf(store.CodeTableColumnNotFound, "column %s not found", p)
			}
			if !dropField(&sch.Fields, names) {
				return nil, store.Errorf(store.CodeTableColumnNotFound, "column %s not found", p)
			}
		}
		if len(sch.Fields) == 0 {
			return nil, store.Errorf(store.CodeInvalidInput, "a table must keep at least one column")
		}
		for f := range sch.All() {
			if f.IsStruct() && len(f.Children) == 0 {
				return nil, store.Errorf(store.CodeInvalidInput, "struct %s must keep at least one field", f.Name)
			}
		}
		return &table.Project{Schema: sch}, nil
	})
}

// dropField removes the field at path names from fields, reporting
// whether it was there.
func dropField(fields *[]*schema.Field, names []string) bool {
	i := slices.IndexFunc(*fields, func(f *schema.Field) bool { return f.Name == names[0] })
	switch {
	case i < 0:
		return false
	case len(names) == 1:
		*fields = slices.Delete(slices.Clone(*fields), i, i+1)
		return true
	case !(*fields)[i].IsStruct():
		return false
	}
	return dropField(&(*fields)[i].Children, names[1:])
}

// UpdateFieldMetadata implements store.ManagedData.
func (e *Engine) UpdateFieldMetadata(ctx context.Context, id []string, updates []store.FieldMetadataUpdate) (store.WriteResult, map[string]map[string]string, error) {
	if len(updates) == 0 {
		return store.WriteResult{}, nil, store.Errorf(store.CodeInvalidInput, "no metadata updates")
	}
	var out map[string]map[string]string
	res, err := e.evolve(ctx, id, func(ctx context.Context, r *tableRef, s *snapshot) (table.Operation, error) {
		out = map[string]map[string]string{}
		sch := s.schema().Clone()
		for _, u := range updates {
			lf, err := sch.Field(u.Path)
			if err != nil {
				return nil, store.Errorf(store.CodeTableColumnNotFound, "column %s not found", u.Path)
			}
			md := map[string]string{}
			if !u.Replace {
				md = maps.Clone(lf.Metadata)
				if md == nil {
					md = map[string]string{}
				}
			}
			for k, v := range u.Metadata {
				if v == nil {
					delete(md, k)
				} else {
					md[k] = *v
				}
			}
			lf.Metadata = md
			names, _ := schema.ParsePath(u.Path)
			out[schema.FormatPath(names...)] = maps.Clone(md)
		}
		return &table.Project{Schema: sch}, nil
	})
	if err != nil {
		return store.WriteResult{}, nil, err
	}
	return res, out, nil
}

// UpdateSchemaMetadata implements store.ManagedData: keys are set
// (upserted), the others kept.
func (e *Engine) UpdateSchemaMetadata(ctx context.Context, id []string, set map[string]string) (store.WriteResult, map[string]string, error) {
	var md map[string]string
	res, err := e.evolve(ctx, id, func(ctx context.Context, r *tableRef, s *snapshot) (table.Operation, error) {
		sch := s.schema().Clone()
		md = maps.Clone(sch.Metadata)
		if md == nil {
			md = map[string]string{}
		}
		maps.Copy(md, set)
		sch.Metadata = maps.Clone(md)
		return &table.Project{Schema: sch}, nil
	})
	if err != nil {
		return store.WriteResult{}, nil, err
	}
	return res, md, nil
}

// schema returns the Lance schema of the snapshot.
func (s *snapshot) schema() *schema.Schema { return s.ds.Manifest().Schema }
