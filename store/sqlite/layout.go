package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/store/sqlite/legacy"
)

// maxVersion is the _to of rows still visible in the latest version.
const maxVersion = int64(1<<63 - 1)

// fieldLayout says where one field of a managed table is stored (see
// legacy.FieldLayout, which reads it back).
type fieldLayout = legacy.FieldLayout

// tableSchema is the logical schema of a managed table at a version and
// where its fields are stored.
type tableSchema struct {
	version int64 // the version this schema took effect
	arrow   *arrow.Schema
	fields  []*fieldLayout // parallel to arrow.Fields()
}

// dataTable returns the name of the table holding the rows of the line of
// a managed table that t is on.
func dataTable(t *tableRow) string { return lineTable(t, t.line) }

// quoteColumn quotes a physical column name (always c<n>, generated here).
func quoteColumn(c string) string { return `"` + c + `"` }

// encodeSchema serialises an Arrow schema as an IPC schema message.
func encodeSchema(s *arrow.Schema) ([]byte, error) {
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(s))
	if err := w.Close(); err != nil {
		return nil, internal("encode schema", err)
	}
	return buf.Bytes(), nil
}

// columnDef is a physical column to add: its name and declared SQL type.
type columnDef struct {
	name, sqlType string
}

// planColumns lays fields out on new physical columns numbered from next:
// every leaf and struct gets one. It returns the layout, the columns in
// layout order, and the next free number.
func planColumns(fields []arrow.Field, next int) ([]*fieldLayout, []columnDef, int) {
	var defs []columnDef
	var plan func(f arrow.Field) *fieldLayout
	plan = func(f arrow.Field) *fieldLayout {
		fl := &fieldLayout{Name: f.Name, Column: fmt.Sprintf("c%d", next)}
		next++
		def := columnDef{fl.Column, sqlType(f.Type)}
		defs = append(defs, def)
		if st, ok := f.Type.(*arrow.StructType); ok {
			defs[len(defs)-1].sqlType = "INTEGER"
			for _, child := range st.Fields() {
				fl.Children = append(fl.Children, plan(child))
			}
		}
		return fl
	}
	out := make([]*fieldLayout, len(fields))
	for i, f := range fields {
		out[i] = plan(f)
	}
	return out, defs, next
}

// layoutColumns returns the physical columns of a layout in the order the
// row codec writes them (see fieldLayout.columns).
func layoutColumns(fields []*fieldLayout) []string {
	var out []string
	for _, fl := range fields {
		out = append(out, fl.Columns()...)
	}
	return out
}

// allocateColumns gives every leaf and struct of fields a new physical
// column, adds the columns to the data table, and returns the layout.
func allocateColumns(ctx context.Context, tx *Tx, t *tableRow, fields []arrow.Field) ([]*fieldLayout, error) {
	var next int
	if err := tx.QueryRowCached(ctx, `SELECT next_column FROM managed_tables WHERE table_id = ?`, t.rowID).Scan(&next); err != nil {
		return nil, internal("allocate columns", err)
	}
	out, defs, next := planColumns(fields, next)
	// Every line of the table has every physical column.
	tables, err := rowsTables(ctx, tx, t)
	if err != nil {
		return nil, err
	}
	for _, d := range defs {
		for _, name := range tables {
			if _, err := tx.Exec(ctx, fmt.Sprintf(`ALTER TABLE %s ADD COLUMN %s %s`, name, quoteColumn(d.name), d.sqlType)); err != nil {
				return nil, internal("add column", err)
			}
		}
	}
	if _, err := tx.ExecCached(ctx, `UPDATE managed_tables SET next_column = ? WHERE table_id = ?`, next, t.rowID); err != nil {
		return nil, internal("allocate columns", err)
	}
	return out, nil
}

// saveSchema records s as the schema of table t (on its branch) from
// version on.
func saveSchema(ctx context.Context, tx *Tx, t *tableRow, version int64, s *arrow.Schema, fields []*fieldLayout) error {
	b, err := encodeSchema(s)
	if err != nil {
		return err
	}
	l, err := json.Marshal(fields)
	if err != nil {
		return internal("encode layout", err)
	}
	if t.branch != "" {
		return saveBranchSchema(ctx, tx, t, version, b, string(l))
	}
	if _, err := tx.ExecCached(ctx, `INSERT OR REPLACE INTO table_schemas (table_id, version, schema, layout) VALUES (?, ?, ?, ?)`,
		t.rowID, version, b, string(l)); err != nil {
		return internal("save schema", err)
	}
	return nil
}

// loadSchema returns the schema of table t (on its branch) in effect at
// version.
func loadSchema(ctx context.Context, tx *Tx, t *tableRow, version int64) (*tableSchema, error) {
	var b []byte
	var l string
	out := &tableSchema{}
	err := schemaRow(ctx, tx, t, version).Scan(&out.version, &b, &l)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, store.Errorf(store.CodeTableVersionNotFound, "table %s has no schema at version %d", displayID(t.ID), version)
	}
	if err != nil {
		return nil, internal("load schema", err)
	}
	if out.arrow, err = legacy.DecodeSchema(b); err != nil {
		return nil, internal("decode schema", err)
	}
	if err := json.Unmarshal([]byte(l), &out.fields); err != nil {
		return nil, internal("decode layout", err)
	}
	if len(out.fields) != out.arrow.NumFields() {
		return nil, internal("load schema", fmt.Errorf("layout has %d fields, schema %d", len(out.fields), out.arrow.NumFields()))
	}
	return out, nil
}

// field returns the index of the top-level field called name, or -1.
func (s *tableSchema) field(name string) int {
	for i, f := range s.fields {
		if f.Name == name {
			return i
		}
	}
	return -1
}

// lookup finds the field at a path (names from the top level down through
// structs). It returns the field, its layout, and whether it was found.
func (s *tableSchema) lookup(path []string) (arrow.Field, *fieldLayout, bool) {
	if len(path) == 0 {
		return arrow.Field{}, nil, false
	}
	i := s.field(path[0])
	if i < 0 {
		return arrow.Field{}, nil, false
	}
	f, fl := s.arrow.Field(i), s.fields[i]
	for _, name := range path[1:] {
		st, ok := f.Type.(*arrow.StructType)
		if !ok {
			return arrow.Field{}, nil, false
		}
		j, ok := st.FieldIdx(name)
		if !ok {
			return arrow.Field{}, nil, false
		}
		f, fl = st.Field(j), fl.Children[j]
	}
	return f, fl, true
}

// formatPath renders a field path for messages, quoting names with dots.
func formatPath(path []string) string {
	parts := make([]string, len(path))
	for i, p := range path {
		if strings.ContainsAny(p, ".`") {
			p = "`" + strings.ReplaceAll(p, "`", "``") + "`"
		}
		parts[i] = p
	}
	return strings.Join(parts, ".")
}
