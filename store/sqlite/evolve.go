package sqlite

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancens/lancens/expr"
	"github.com/lancens/lancens/store"
)

// schemaChange runs a change of a managed table's schema as a new version:
// change gets the latest schema and returns the new fields, layouts and
// schema metadata.
func (db *DB) schemaChange(ctx context.Context, id []string, op string,
	change func(tx *Tx, t *tableRow, v int64, ts *tableSchema) ([]arrow.Field, []*fieldLayout, arrow.Metadata, error)) (store.WriteResult, *arrow.Schema, error) {
	var res store.WriteResult
	var schema *arrow.Schema
	err := db.write(ctx, func(tx *Tx) error {
		t, v, ts, err := writeVersion(ctx, tx, id)
		if err != nil {
			return err
		}
		fields, layout, md, err := change(tx, t, v, ts)
		if err != nil {
			return err
		}
		if len(fields) == 0 {
			return store.Errorf(store.CodeInvalidInput, "a table must keep at least one column")
		}
		schema = arrow.NewSchema(fields, &md)
		if err := saveSchema(ctx, tx, t, v, schema, layout); err != nil {
			return err
		}
		res.Version = v
		res.TransactionID, err = recordManagedVersion(ctx, tx, t, v, op)
		return err
	})
	return res, schema, err
}

// editField applies edit to the field at path, rebuilding the struct types
// that contain it. edit returns the replacement field and layout, or nil to
// remove the field. Returns TableColumnNotFound (12) for a missing path.
func editField(fields []arrow.Field, layout []*fieldLayout, path []string,
	edit func(f arrow.Field, fl *fieldLayout) (*arrow.Field, *fieldLayout, error)) ([]arrow.Field, []*fieldLayout, error) {
	idx := slices.IndexFunc(fields, func(f arrow.Field) bool { return f.Name == path[0] })
	if idx < 0 {
		return nil, nil, store.Errorf(store.CodeTableColumnNotFound, "column %s not found", formatPath(path))
	}
	f, fl := fields[idx], layout[idx]
	var nf *arrow.Field
	var nfl *fieldLayout
	var err error
	if len(path) == 1 {
		nf, nfl, err = edit(f, fl)
	} else {
		st, ok := f.Type.(*arrow.StructType)
		if !ok {
			return nil, nil, store.Errorf(store.CodeTableColumnNotFound, "column %s not found: %s is not a struct", formatPath(path), path[0])
		}
		children, childLayout, cerr := editField(st.Fields(), fl.Children, path[1:], edit)
		if cerr != nil {
			return nil, nil, cerr
		}
		if len(children) == 0 {
			return nil, nil, store.Errorf(store.CodeInvalidInput, "struct %s must keep at least one field", path[0])
		}
		f.Type = arrow.StructOf(children...)
		copied := *fl
		copied.Children = childLayout
		nf, nfl = &f, &copied
	}
	if err != nil {
		return nil, nil, err
	}
	outF := slices.Clone(fields)
	outL := slices.Clone(layout)
	if nf == nil {
		return slices.Delete(outF, idx, idx+1), slices.Delete(outL, idx, idx+1), nil
	}
	outF[idx], outL[idx] = *nf, nfl
	return outF, outL, nil
}

// AddColumns implements store.ManagedData.
func (db *DB) AddColumns(ctx context.Context, id []string, cols []store.NewColumn) (store.WriteResult, error) {
	if len(cols) == 0 {
		return store.WriteResult{}, store.Errorf(store.CodeInvalidInput, "no columns to add")
	}
	res, _, err := db.schemaChange(ctx, id, "AddColumns", func(tx *Tx, t *tableRow, v int64, ts *tableSchema) ([]arrow.Field, []*fieldLayout, arrow.Metadata, error) {
		fields, layout := slices.Clone(ts.arrow.Fields()), slices.Clone(ts.fields)
		for _, c := range cols {
			if c.Name == "" || reservedColumn(c.Name) {
				return nil, nil, arrow.Metadata{}, store.Errorf(store.CodeInvalidInput, "invalid column name %q", c.Name)
			}
			if slices.ContainsFunc(fields, func(f arrow.Field) bool { return f.Name == c.Name }) {
				return nil, nil, arrow.Metadata{}, store.Errorf(store.CodeTableSchemaValidationError, "column %q already exists", c.Name)
			}
			// Expressions see the columns as they were before this change.
			compiled, err := compileValue(c.Expr, resolver{schema: ts})
			if err != nil {
				return nil, nil, arrow.Metadata{}, err
			}
			dt, err := arrowType(compiled.Type)
			if err != nil {
				return nil, nil, arrow.Metadata{}, err
			}
			f := arrow.Field{Name: c.Name, Type: dt, Nullable: true}
			if c.Computed {
				f.Metadata = arrow.NewMetadata([]string{store.ComputedBinding}, []string{c.Expr})
			}
			fl, err := allocateColumns(ctx, tx, t, []arrow.Field{f})
			if err != nil {
				return nil, nil, arrow.Metadata{}, err
			}
			if c.Computed {
				fields, layout = append(fields, f), append(layout, fl[0])
				continue
			}
			if _, err := tx.Exec(ctx, fmt.Sprintf(`UPDATE %s SET %s = (%s) WHERE _to = ?`,
				dataTable(t), quoteColumn(fl[0].Column), compiled.SQL), append(compiled.Args, maxVersion)...); err != nil {
				return nil, nil, arrow.Metadata{}, queryError(ctx, err)
			}
			fields, layout = append(fields, f), append(layout, fl[0])
		}
		return fields, layout, ts.arrow.Metadata(), nil
	})
	return res, err
}

// AlterColumns implements store.ManagedData.
func (db *DB) AlterColumns(ctx context.Context, id []string, alts []store.ColumnAlteration) (store.WriteResult, error) {
	if len(alts) == 0 {
		return store.WriteResult{}, store.Errorf(store.CodeInvalidInput, "no alterations")
	}
	res, _, err := db.schemaChange(ctx, id, "AlterColumns", func(tx *Tx, t *tableRow, v int64, ts *tableSchema) ([]arrow.Field, []*fieldLayout, arrow.Metadata, error) {
		fields, layout := ts.arrow.Fields(), ts.fields
		for _, a := range alts {
			path := splitPath(a.Path)
			current := &tableSchema{arrow: arrow.NewSchema(fields, nil), fields: layout}
			var err error
			fields, layout, err = editField(fields, layout, path, func(f arrow.Field, fl *fieldLayout) (*arrow.Field, *fieldLayout, error) {
				nfl := *fl
				if a.Rename != nil {
					if *a.Rename == "" {
						return nil, nil, store.Errorf(store.CodeInvalidInput, "new name of %s is empty", a.Path)
					}
					sibling := append(slices.Clone(path[:len(path)-1]), *a.Rename)
					if _, _, exists := current.lookup(sibling); exists && *a.Rename != f.Name {
						return nil, nil, store.Errorf(store.CodeTableSchemaValidationError, "column %s already exists", formatPath(sibling))
					}
					f.Name, nfl.Name = *a.Rename, *a.Rename
				}
				if a.Nullable != nil {
					if !*a.Nullable && f.Nullable {
						if err := checkNoNulls(ctx, tx, t, fl, a.Path); err != nil {
							return nil, nil, err
						}
					}
					f.Nullable = *a.Nullable
				}
				if a.Type != nil {
					if err := castColumn(ctx, tx, t, current, path, &f, &nfl, a.Type); err != nil {
						return nil, nil, err
					}
				}
				return &f, &nfl, nil
			})
			if err != nil {
				return nil, nil, arrow.Metadata{}, err
			}
		}
		return fields, layout, ts.arrow.Metadata(), nil
	})
	return res, err
}

// checkNoNulls returns code 20 when the column has nulls in the latest rows.
func checkNoNulls(ctx context.Context, tx *Tx, t *tableRow, fl *fieldLayout, path string) error {
	var n int64
	if err := tx.QueryRow(ctx, fmt.Sprintf(`SELECT count(*) FROM %s WHERE _to = ? AND %s IS NULL`,
		dataTable(t), quoteColumn(fl.Column)), maxVersion).Scan(&n); err != nil {
		return internal("check nulls", err)
	}
	if n > 0 {
		return store.Errorf(store.CodeTableSchemaValidationError, "column %s has %d null values and cannot be made non-nullable", path, n)
	}
	return nil
}

// castColumn converts a leaf column to type dt into a new physical column,
// updating f and fl. Returns code 20 for a conversion lancens does not do.
func castColumn(ctx context.Context, tx *Tx, t *tableRow, ts *tableSchema, path []string, f *arrow.Field, fl *fieldLayout, dt arrow.DataType) error {
	if len(fl.Children) > 0 {
		return store.Errorf(store.CodeTableSchemaValidationError, "cannot change the type of struct %s", formatPath(path))
	}
	if err := checkType(f.Name, dt); err != nil {
		return err
	}
	dt = storedType(dt)
	name, ok := expr.CastTypeName(dt)
	if !ok || !expr.Castable(f.Type, dt) {
		return store.Errorf(store.CodeTableSchemaValidationError, "cannot change column %s from %s to %s", formatPath(path), f.Type, dt)
	}
	compiled, err := compileValue(fmt.Sprintf("CAST(%s AS %s)", expr.QuotePath(path), name), resolver{schema: ts})
	if err != nil {
		return store.Errorf(store.CodeTableSchemaValidationError, "cannot change column %s to %s: %s", formatPath(path), dt, store.ErrorMessage(err))
	}
	nf := arrow.Field{Name: f.Name, Type: dt, Nullable: f.Nullable, Metadata: f.Metadata}
	cols, err := allocateColumns(ctx, tx, t, []arrow.Field{nf})
	if err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, fmt.Sprintf(`UPDATE %s SET %s = (%s) WHERE _to = ?`,
		dataTable(t), quoteColumn(cols[0].Column), compiled.SQL), append(compiled.Args, maxVersion)...); err != nil {
		if err = queryError(ctx, err); store.ErrorCode(err) != store.CodeInvalidInput {
			return err
		}
		return &store.Error{Code: store.CodeTableSchemaValidationError, Cause: err,
			Message: fmt.Sprintf("cannot change column %s to %s: %s", formatPath(path), dt, store.ErrorMessage(err))}
	}
	*f = nf
	fl.Column = cols[0].Column
	return nil
}

// DropColumns implements store.ManagedData.
func (db *DB) DropColumns(ctx context.Context, id []string, paths []string) (store.WriteResult, error) {
	if len(paths) == 0 {
		return store.WriteResult{}, store.Errorf(store.CodeInvalidInput, "no columns to drop")
	}
	res, _, err := db.schemaChange(ctx, id, "DropColumns", func(tx *Tx, t *tableRow, v int64, ts *tableSchema) ([]arrow.Field, []*fieldLayout, arrow.Metadata, error) {
		fields, layout := ts.arrow.Fields(), ts.fields
		for _, p := range paths {
			var err error
			fields, layout, err = editField(fields, layout, splitPath(p), func(arrow.Field, *fieldLayout) (*arrow.Field, *fieldLayout, error) {
				return nil, nil, nil
			})
			if err != nil {
				return nil, nil, arrow.Metadata{}, err
			}
		}
		return fields, layout, ts.arrow.Metadata(), nil
	})
	return res, err
}

// UpdateFieldMetadata implements store.ManagedData.
func (db *DB) UpdateFieldMetadata(ctx context.Context, id []string, updates []store.FieldMetadataUpdate) (store.WriteResult, map[string]map[string]string, error) {
	if len(updates) == 0 {
		return store.WriteResult{}, nil, store.Errorf(store.CodeInvalidInput, "no metadata updates")
	}
	out := map[string]map[string]string{}
	res, _, err := db.schemaChange(ctx, id, "UpdateFieldMetadata", func(tx *Tx, t *tableRow, v int64, ts *tableSchema) ([]arrow.Field, []*fieldLayout, arrow.Metadata, error) {
		fields, layout := ts.arrow.Fields(), ts.fields
		for _, u := range updates {
			path := splitPath(u.Path)
			var err error
			fields, layout, err = editField(fields, layout, path, func(f arrow.Field, fl *fieldLayout) (*arrow.Field, *fieldLayout, error) {
				md := map[string]string{}
				if !u.Replace {
					md = f.Metadata.ToMap()
				}
				for k, val := range u.Metadata {
					if val == nil {
						delete(md, k)
					} else {
						md[k] = *val
					}
				}
				f.Metadata = metadataOf(md)
				out[formatPath(path)] = md
				return &f, fl, nil
			})
			if err != nil {
				return nil, nil, arrow.Metadata{}, err
			}
		}
		return fields, layout, ts.arrow.Metadata(), nil
	})
	if err != nil {
		return store.WriteResult{}, nil, err
	}
	return res, out, nil
}

// UpdateSchemaMetadata implements store.ManagedData.
func (db *DB) UpdateSchemaMetadata(ctx context.Context, id []string, set map[string]string) (store.WriteResult, map[string]string, error) {
	var md map[string]string
	res, _, err := db.schemaChange(ctx, id, "UpdateSchemaMetadata", func(tx *Tx, t *tableRow, v int64, ts *tableSchema) ([]arrow.Field, []*fieldLayout, arrow.Metadata, error) {
		md = ts.arrow.Metadata().ToMap()
		maps.Copy(md, set)
		return ts.arrow.Fields(), ts.fields, metadataOf(md), nil
	})
	if err != nil {
		return store.WriteResult{}, nil, err
	}
	return res, md, nil
}

// metadataOf builds Arrow metadata with sorted keys, so equal maps encode
// equally.
func metadataOf(m map[string]string) arrow.Metadata {
	keys := slices.Sorted(maps.Keys(m))
	values := make([]string, len(keys))
	for i, k := range keys {
		values[i] = m[k]
	}
	return arrow.NewMetadata(keys, values)
}

// computedBinding returns the expression of a computed column. Returns
// TableColumnNotFound (12), or InvalidInput (13) when it is not computed.
func computedBinding(ts *tableSchema, column string) (string, error) {
	f, _, ok := ts.lookup(splitPath(column))
	if !ok {
		return "", store.Errorf(store.CodeTableColumnNotFound, "column %s not found", column)
	}
	e, ok := f.Metadata.GetValue(store.ComputedBinding)
	if !ok {
		return "", store.Errorf(store.CodeInvalidInput, "column %s is not a computed column", column)
	}
	return e, nil
}

// QueueBackfill implements store.ManagedData.
func (db *DB) QueueBackfill(ctx context.Context, id []string, column, where string) (string, error) {
	var txID string
	err := db.write(ctx, func(tx *Tx) error {
		t, v, ts, err := writeVersion(ctx, tx, id)
		if err != nil {
			return err
		}
		if _, err := computedBinding(ts, column); err != nil {
			return err
		}
		if _, err := compileFilter(where, resolver{schema: ts}); err != nil {
			return err
		}
		txID, err = recordTx(ctx, tx, store.JobBackfillColumn, &t.Table, store.TxQueued,
			map[string]string{"column": column, "read_version": fmt.Sprint(v - 1)},
			store.BackfillColumn{TableUUID: t.UUID, Column: column, Where: where})
		return err
	})
	return txID, err
}

// Backfill implements store.ManagedData.
func (db *DB) Backfill(ctx context.Context, job store.BackfillColumn) (store.WriteResult, error) {
	var res store.WriteResult
	err := db.write(ctx, func(tx *Tx) error {
		id, err := tableIDByUUID(ctx, tx, job.TableUUID)
		if err != nil {
			return err
		}
		t, v, ts, err := writeVersion(ctx, tx, id)
		if err != nil {
			return err
		}
		e, err := computedBinding(ts, job.Column)
		if err != nil {
			return err
		}
		res, err = updateRows(ctx, tx, t, v, ts, []store.ColumnUpdate{{Path: job.Column, Expr: e}}, job.Where, "Backfill", "backfill")
		return err
	})
	return res, err
}
