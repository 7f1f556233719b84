package legacy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
)

// FieldLayout says where one field of a managed table is stored: Column is
// the physical column (c<n>) of a leaf, or the validity column of a
// struct, whose fields are Children. It is the JSON of a layout in
// table_schemas and branch_schemas.
type FieldLayout struct {
	Name     string         `json:"name"`
	Column   string         `json:"column"`
	Children []*FieldLayout `json:"children,omitempty"`
}

// Columns returns the physical columns of a field in the order the row
// codec reads them (see FieldDecoder): the column itself, then its
// children's, depth first.
func (fl *FieldLayout) Columns() []string {
	out := []string{fl.Column}
	for _, c := range fl.Children {
		out = append(out, c.Columns()...)
	}
	return out
}

// DecodeSchema reads an Arrow schema serialised as an IPC schema message,
// as table_schemas keeps it. It returns the IPC reader's error.
func DecodeSchema(b []byte) (*arrow.Schema, error) {
	r, err := ipc.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	defer r.Release()
	return r.Schema(), nil
}

// Schema is the logical schema of a line of a managed table from a version
// on, and where its fields are stored.
type Schema struct {
	// Version is the version this schema took effect.
	Version int64
	Arrow   *arrow.Schema
	// Fields are the layouts of Arrow's fields, in order.
	Fields []*FieldLayout
}

// columns returns the physical columns of every field, in the order
// FieldDecoder reads them.
func (s *Schema) columns() []string {
	var out []string
	for _, fl := range s.Fields {
		out = append(out, fl.Columns()...)
	}
	return out
}

// loadSchemas returns every schema of line l, oldest first: main's from
// table_schemas, a branch's from branch_schemas. It returns an error for
// a schema or layout that does not decode, or that disagree.
func loadSchemas(ctx context.Context, tx Tx, tableRowID int64, branch string) ([]*Schema, error) {
	q, args := `SELECT version, schema, layout FROM table_schemas WHERE table_id = ? ORDER BY version`, []any{tableRowID}
	if branch != "" {
		q, args = `SELECT version, schema, layout FROM branch_schemas WHERE table_id = ? AND branch = ? ORDER BY version`, []any{tableRowID, branch}
	}
	rows, err := tx.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("read schemas: %w", err)
	}
	defer rows.Close()
	var out []*Schema
	for rows.Next() {
		s := &Schema{}
		var b []byte
		var layout string
		if err := rows.Scan(&s.Version, &b, &layout); err != nil {
			return nil, fmt.Errorf("read schemas: %w", err)
		}
		if s.Arrow, err = DecodeSchema(b); err != nil {
			return nil, fmt.Errorf("schema of version %d: %w", s.Version, err)
		}
		if err := json.Unmarshal([]byte(layout), &s.Fields); err != nil {
			return nil, fmt.Errorf("layout of version %d: %w", s.Version, err)
		}
		if len(s.Fields) != s.Arrow.NumFields() {
			return nil, fmt.Errorf("the layout of version %d has %d fields, its schema %d", s.Version, len(s.Fields), s.Arrow.NumFields())
		}
		out = append(out, s)
	}
	return out, rows.Err()
}
