package legacy

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// Ref names a managed table left in the store.
type Ref struct {
	RowID int64
	UUID  string
	ID    []string
}

// Managed returns the managed tables the store still holds (tables.kind
// 'managed'), oldest first. It returns the database's error.
func Managed(ctx context.Context, st Store) ([]Ref, error) {
	var out []Ref
	err := st.ReadLegacy(ctx, func(tx Tx) error {
		out = nil
		rows, err := tx.Query(ctx, `SELECT id, uuid FROM tables WHERE kind = 'managed' ORDER BY id`)
		if err != nil {
			return fmt.Errorf("list managed tables: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var r Ref
			if err := rows.Scan(&r.RowID, &r.UUID); err != nil {
				return fmt.Errorf("list managed tables: %w", err)
			}
			out = append(out, r)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		for i := range out {
			if out[i].ID, err = tx.Ops().TableIDByUUID(ctx, tx.Catalog(), out[i].UUID); err != nil {
				return err
			}
		}
		return nil
	})
	return out, err
}

// Table is what converting a managed table reads: its lines of rows and
// their versions and schemas.
type Table struct {
	Ref
	// Lines are main first, then each branch after the line it forks
	// from.
	Lines []*Line
}

// Line is the rows of one branch of a managed table: its versions (with
// gaps where retention removed some), the schemas in effect from one
// version on, and the rows table (rows_N for main, rows_N_L for a branch)
// holding every row version of the branch.
type Line struct {
	// Branch is "" for main.
	Branch string
	// Parent and Fork say where a branch starts: its first version is
	// version Fork of branch Parent, whose rows it copied.
	Parent string
	Fork   int64
	// Versions are the recorded versions of the branch, ascending.
	Versions []Version
	Schemas  []*Schema
	// rows is the rows table; "" for a branch created before lancens kept
	// the rows of branches, which has only its fork version.
	rows string
}

// Version is one recorded version of a line.
type Version struct {
	Version   int64
	Timestamp time.Time
}

// HasRows reports whether the line has a rows table of its own.
func (l *Line) HasRows() bool { return l.rows != "" }

// SchemaAt returns the schema in effect at version v. It returns an error
// when the line has none that early.
func (l *Line) SchemaAt(v int64) (*Schema, error) {
	var out *Schema
	for _, s := range l.Schemas {
		if s.Version > v {
			break
		}
		out = s
	}
	if out == nil {
		return nil, fmt.Errorf("branch %q has no schema at version %d", l.Branch, v)
	}
	return out, nil
}

// Load reads table r's lines, versions and schemas in one snapshot. It
// returns an error when r is no longer a managed table, and the
// database's.
func Load(ctx context.Context, st Store, r Ref) (*Table, error) {
	var out *Table
	err := st.ReadLegacy(ctx, func(tx Tx) error {
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM tables WHERE id = ? AND uuid = ? AND kind = 'managed'`, r.RowID, r.UUID).Scan(&n); err != nil {
			return fmt.Errorf("find table: %w", err)
		}
		if n == 0 {
			return fmt.Errorf("table %s is no longer a managed table", r.UUID)
		}
		out = &Table{Ref: r}
		main := &Line{rows: fmt.Sprintf("rows_%d", r.RowID)}
		branches, err := loadBranches(ctx, tx, r.RowID)
		if err != nil {
			return err
		}
		lines := append([]*Line{main}, branches...)
		for _, l := range lines {
			if l.Versions, err = loadVersions(ctx, tx, r.RowID, l.Branch); err != nil {
				return err
			}
			if len(l.Versions) == 0 {
				return fmt.Errorf("branch %q has no version", l.Branch)
			}
			if l.HasRows() {
				if l.Schemas, err = loadSchemas(ctx, tx, r.RowID, l.Branch); err != nil {
					return err
				}
			}
		}
		out.Lines = forkOrder(lines)
		return nil
	})
	return out, err
}

// loadBranches returns the lines of the branches of table rowID, in the
// order they were made.
func loadBranches(ctx context.Context, tx Tx, rowID int64) ([]*Line, error) {
	rows, err := tx.Query(ctx, `SELECT b.name, b.parent_branch, b.parent_version, l.line FROM table_branches b
		LEFT JOIN branch_lines l ON l.table_id = b.table_id AND l.branch = b.name
		WHERE b.table_id = ? ORDER BY b.created_at, b.name`, rowID)
	if err != nil {
		return nil, fmt.Errorf("read branches: %w", err)
	}
	defer rows.Close()
	var out []*Line
	for rows.Next() {
		l := &Line{}
		var line *int64
		if err := rows.Scan(&l.Branch, &l.Parent, &l.Fork, &line); err != nil {
			return nil, fmt.Errorf("read branches: %w", err)
		}
		if line != nil {
			l.rows = fmt.Sprintf("rows_%d_%d", rowID, *line)
		}
		out = append(out, l)
	}
	return out, rows.Err()
}

// loadVersions returns the recorded versions of a branch of table rowID.
func loadVersions(ctx context.Context, tx Tx, rowID int64, branch string) ([]Version, error) {
	rows, err := tx.Query(ctx, `SELECT version, timestamp_millis FROM table_versions WHERE table_id = ? AND branch = ? ORDER BY version`, rowID, branch)
	if err != nil {
		return nil, fmt.Errorf("read versions: %w", err)
	}
	defer rows.Close()
	var out []Version
	for rows.Next() {
		var v Version
		var ms int64
		if err := rows.Scan(&v.Version, &ms); err != nil {
			return nil, fmt.Errorf("read versions: %w", err)
		}
		v.Timestamp = time.UnixMilli(ms).UTC()
		out = append(out, v)
	}
	return out, rows.Err()
}

// forkOrder orders lines so that each branch comes after the line it
// forks from (main first); a branch whose parent is gone keeps its place
// at the end, and converting it reports the missing parent.
func forkOrder(lines []*Line) []*Line {
	out := lines[:1:1]
	rest := slices.Clone(lines[1:])
	for len(rest) > 0 {
		i := slices.IndexFunc(rest, func(l *Line) bool {
			return slices.ContainsFunc(out, func(p *Line) bool { return p.Branch == l.Parent })
		})
		if i < 0 {
			return append(out, rest...)
		}
		out = append(out, rest[i])
		rest = slices.Delete(rest, i, i+1)
	}
	return out
}
