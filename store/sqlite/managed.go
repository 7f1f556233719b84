package sqlite

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancens/lancens/store"
)

var _ store.ManagedData = (*DB)(nil)

// managedLocation is the location of a managed table: a URI whose scheme
// says its rows live in lancens.
func managedLocation(uuid string) string { return store.ManagedLocationScheme + "://" + uuid }

// storedSchema returns the schema a table keeps for data of schema s, or
// code 20 for a field it cannot store.
func storedSchema(s *arrow.Schema) (*arrow.Schema, error) {
	if s.NumFields() == 0 {
		return nil, store.Errorf(store.CodeTableSchemaValidationError, "the schema has no fields")
	}
	fields := make([]arrow.Field, s.NumFields())
	seen := map[string]bool{}
	for i, f := range s.Fields() {
		if f.Name == "" {
			return nil, store.Errorf(store.CodeTableSchemaValidationError, "field %d has no name", i)
		}
		if seen[f.Name] {
			return nil, store.Errorf(store.CodeTableSchemaValidationError, "field %q appears twice", f.Name)
		}
		seen[f.Name] = true
		if reservedColumn(f.Name) {
			return nil, store.Errorf(store.CodeTableSchemaValidationError, "field name %q is reserved", f.Name)
		}
		if err := checkType(f.Name, f.Type); err != nil {
			return nil, err
		}
		fields[i] = storedField(f)
	}
	md := s.Metadata()
	return arrow.NewSchema(fields, &md), nil
}

// reservedColumn reports names lancens adds to query results.
func reservedColumn(name string) bool {
	switch name {
	case "_rowid", "_distance", "_score", "_rowoffset", "_relevance_score", "query_index":
		return true
	}
	return false
}

// findManaged returns managed table id. An external table is
// InvalidTableState (19) naming its location.
func findManaged(ctx context.Context, tx *Tx, id []string) (*tableRow, error) {
	t, err := findTable(ctx, tx, id)
	if err != nil {
		return nil, err
	}
	if t.Kind != store.Managed {
		return nil, notManaged(t)
	}
	return t, nil
}

func notManaged(t *tableRow) error {
	if t.Declared {
		return store.Errorf(store.CodeInvalidTableState, "table %s is declared but has no data yet; create it or insert into it first", displayID(t.ID))
	}
	return store.Errorf(store.CodeInvalidTableState,
		"table %s is external: its data is in Lance files at %s, which clients read and write themselves", displayID(t.ID), t.Location)
}

// createRowsTable makes a table of rows named name, with the physical
// columns defs, empty: the rows table of a managed table, or a staging
// table that becomes one.
func createRowsTable(ctx context.Context, tx *Tx, name string, defs []columnDef) error {
	var cols strings.Builder
	for _, d := range defs {
		fmt.Fprintf(&cols, ", %s %s", quoteColumn(d.name), d.sqlType)
	}
	for _, q := range []string{
		fmt.Sprintf(`CREATE TABLE %s (_rowid INTEGER PRIMARY KEY, _from INTEGER NOT NULL, _to INTEGER NOT NULL DEFAULT %d%s)`, name, maxVersion, cols.String()),
		fmt.Sprintf(`CREATE INDEX %s_visible ON %s (_to, _from)`, name, name),
	} {
		if _, err := tx.Exec(ctx, q); err != nil {
			return internal("create rows table", err)
		}
	}
	return nil
}

// latestManaged returns the latest version of managed table t.
func latestManaged(ctx context.Context, tx *Tx, t *tableRow) (int64, error) {
	v, err := latestVersion(ctx, tx, t, t.branch)
	if err != nil {
		return 0, err
	}
	if v == nil {
		return 0, internal("latest version", fmt.Errorf("managed table %s has no version", displayID(t.ID)))
	}
	return v.Version, nil
}

// schemaAt resolves the version a read names (nil: the latest) and returns
// it with the schema in effect then. Returns TableVersionNotFound (11).
func schemaAt(ctx context.Context, tx *Tx, t *tableRow, version *int64) (int64, *tableSchema, error) {
	v, err := resolveVersion(ctx, tx, t, version)
	if err != nil {
		return 0, nil, err
	}
	ts, err := loadSchema(ctx, tx, t, v)
	if err != nil {
		return 0, nil, err
	}
	return v, ts, nil
}

// resolveVersion returns the version a read names (nil: the latest),
// checking that it exists. Returns TableVersionNotFound.
func resolveVersion(ctx context.Context, tx *Tx, t *tableRow, v *int64) (int64, error) {
	if v == nil {
		return latestManaged(ctx, tx, t)
	}
	if _, err := getVersion(ctx, tx, t, t.branch, *v); err != nil {
		return 0, err
	}
	return *v, nil
}

// recordManagedVersion records version v of managed table t (on its
// branch), made by op, and queues the refreshes it calls for.
func recordManagedVersion(ctx context.Context, tx *Tx, t *tableRow, v int64, op string) (string, error) {
	props := map[string]string{"version": strconv.FormatInt(v, 10)}
	if t.branch != "" {
		props["branch"] = t.branch
	}
	txID, err := recordTx(ctx, tx, op, &t.Table, store.TxSucceeded, props, nil)
	if err != nil {
		return "", err
	}
	if err := insertVersionRecord(ctx, tx, t, v, op, txID); err != nil {
		return "", err
	}
	if t.branch == "" {
		if err := queueAutoRefreshes(ctx, tx, t); err != nil {
			return "", err
		}
	}
	return txID, nil
}

// CreateTable implements store.ManagedData. The rows are converted before
// the write takes the writer; rows of more than one chunk are staged
// (staging.go).
func (db *DB) CreateTable(ctx context.Context, id []string, nt store.NewTable) (*store.Table, store.WriteResult, error) {
	schema, err := storedSchema(nt.Data.Schema)
	if err != nil {
		return nil, store.WriteResult{}, err
	}
	layout, defs, next := planColumns(schema.Fields(), 0)
	c := &newTable{id: id, nt: nt, ts: &tableSchema{version: 1, arrow: schema, fields: layout}, defs: defs, next: next}
	rows := replayOf(nt.Data.Batches)
	defer rows.settle()
	for {
		out, res, err := db.createOnce(ctx, c, rows)
		switch {
		case err == nil:
			return out, res, nil
		case !errors.Is(err, errStale):
			return nil, store.WriteResult{}, err
		case ctx.Err() != nil:
			return nil, store.WriteResult{}, ctx.Err()
		}
		if err := rows.again(id); err != nil {
			return nil, store.WriteResult{}, err
		}
	}
}

// createOnce tries CreateTable once, reading rows from the start; it
// returns errStale when the table changed before the write took the
// writer.
func (db *DB) createOnce(ctx context.Context, c *newTable, rows *replay) (*store.Table, store.WriteResult, error) {
	src := db.staging.rows(c.ts, rows, true)
	defer src.close()
	first, err := src.next()
	if err != nil {
		return nil, store.WriteResult{}, err
	}
	defer first.release()
	if !src.done() {
		return db.createStaged(ctx, c, first, src)
	}
	var out *store.Table
	var res store.WriteResult
	err = db.write(ctx, func(tx *Tx) error {
		var err error
		out, res, err = c.create(ctx, tx, first, nil)
		return err
	})
	return out, res, err
}

// newTable is a CreateTable request, its schema laid out for a new table.
type newTable struct {
	id   []string
	nt   store.NewTable
	ts   *tableSchema // version 1, on columns from c0
	defs []columnDef
	next int // the next free column number
}

// create makes the table in tx, or does what the mode says when id exists.
// Its rows are rows or, when staged is set, the rows staged and then rows
// (the last chunk). With neither it returns errStale when it would have to
// write rows; and with staged, when it would have to overwrite a managed
// table, which cannot take a staging table's rows.
func (c *newTable) create(ctx context.Context, tx *Tx, rows *boundRows, staged *stagedWrite) (*store.Table, store.WriteResult, error) {
	nt := c.nt
	existing, err := findTable(ctx, tx, c.id)
	switch {
	case errors.Is(err, store.ErrTableNotFound):
	case err != nil:
		return nil, store.WriteResult{}, err
	case existing.Declared && existing.Kind == store.External:
		// Materialise the declaration: the reservation goes, the table
		// keeps its name, properties and identity.
		if nt.Properties == nil {
			nt.Properties = existing.Properties
		}
		if err := deleteTableRow(ctx, tx, existing); err != nil {
			return nil, store.WriteResult{}, err
		}
		if existing.Owned {
			if _, err := queueDataDeletion(ctx, tx, existing); err != nil {
				return nil, store.WriteResult{}, err
			}
		}
	case nt.Mode == store.ModeExistOk:
		if existing.Kind != store.Managed {
			return nil, store.WriteResult{}, notManaged(existing)
		}
		v, err := latestManaged(ctx, tx, existing)
		return &existing.Table, store.WriteResult{Version: v}, err
	case nt.Mode == store.ModeOverwrite:
		if existing.Kind == store.Managed {
			if staged != nil || rows == nil {
				return nil, store.WriteResult{}, errStale
			}
			return c.overwriteManaged(ctx, tx, existing, rows)
		}
		if err := deleteTableRow(ctx, tx, existing); err != nil {
			return nil, store.WriteResult{}, err
		}
	default:
		return nil, store.WriteResult{}, store.Errorf(store.CodeTableAlreadyExists, "table %s already exists", displayID(c.id))
	}
	if rows == nil {
		return nil, store.WriteResult{}, errStale
	}
	uuid := newUUID()
	out, err := insertTable(ctx, tx, c.id, store.Table{
		UUID: uuid, Kind: store.Managed, Location: managedLocation(uuid),
		Properties: nt.Properties, StorageOptions: nt.StorageOptions,
	})
	if err != nil {
		return nil, store.WriteResult{}, err
	}
	t, err := findTable(ctx, tx, c.id)
	if err != nil {
		return nil, store.WriteResult{}, err
	}
	name := dataTable(t)
	n := int64(rows.rows)
	if staged != nil {
		if err := staged.add(ctx, tx, rows); err != nil {
			return nil, store.WriteResult{}, err
		}
		if _, err := tx.Exec(ctx, fmt.Sprintf(`ALTER TABLE %s RENAME TO %s`, staged.table, name)); err != nil {
			return nil, store.WriteResult{}, internal("create rows table", err)
		}
		n += staged.rows
	} else {
		if err := createRowsTable(ctx, tx, name, c.defs); err != nil {
			return nil, store.WriteResult{}, err
		}
		if err := rows.insert(ctx, tx, name, layoutColumns(c.ts.fields), 1); err != nil {
			return nil, store.WriteResult{}, err
		}
	}
	if _, err := tx.ExecCached(ctx, `INSERT INTO managed_tables (table_id, next_column) VALUES (?, ?)`, t.rowID, c.next); err != nil {
		return nil, store.WriteResult{}, internal("create rows table", err)
	}
	if err := saveSchema(ctx, tx, t, 1, c.ts.arrow, c.ts.fields); err != nil {
		return nil, store.WriteResult{}, err
	}
	txID, err := recordManagedVersion(ctx, tx, t, 1, "CreateTable")
	if err != nil {
		return nil, store.WriteResult{}, err
	}
	return out, store.WriteResult{Version: 1, TransactionID: txID, Inserted: n}, nil
}

// overwrite is the write that replaces a managed table's rows, schema and
// properties with the new table's.
func (c *newTable) overwrite() *rowsWrite {
	return &rowsWrite{overwrite: true, schema: c.ts.arrow, ts: c.ts, table: &c.nt, op: "CreateTable"}
}

// replaced returns managed table t as the overwrite leaves it.
func (c *newTable) replaced(t *tableRow) *store.Table {
	out := t.Table
	out.Properties, out.StorageOptions = orEmpty(c.nt.Properties), orEmpty(c.nt.StorageOptions)
	return &out
}

// overwriteManaged replaces the rows, schema and properties of managed
// table t with a new version holding rows.
func (c *newTable) overwriteManaged(ctx context.Context, tx *Tx, t *tableRow, rows *boundRows) (*store.Table, store.WriteResult, error) {
	v, err := latestManaged(ctx, tx, t)
	if err != nil {
		return nil, store.WriteResult{}, err
	}
	res, err := c.overwrite().apply(ctx, tx, t, v+1, rows)
	if err != nil {
		return nil, store.WriteResult{}, err
	}
	return c.replaced(t), res, nil
}

// createStaged creates a table whose rows take more than one chunk: in a
// staging table that becomes its rows table, or, when it overwrites a
// managed table, in that table as a staged write.
func (db *DB) createStaged(ctx context.Context, c *newTable, first *boundRows, src *rowSource) (*store.Table, store.WriteResult, error) {
	var existing *tableRow
	var schemaVersion int64
	err := db.read(ctx, func(tx *Tx) error {
		t, err := findTable(ctx, tx, c.id)
		if errors.Is(err, store.ErrTableNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		existing = t
		if t.Kind == store.Managed {
			_, ts, err := schemaAt(ctx, tx, t, nil)
			if err != nil {
				return err
			}
			schemaVersion = ts.version
		}
		return nil
	})
	if err != nil {
		return nil, store.WriteResult{}, err
	}
	if existing != nil && (!existing.Declared || existing.Kind != store.External) {
		switch {
		case c.nt.Mode == store.ModeExistOk:
			// Nothing to write, unless the table is gone by now (errStale).
			var out *store.Table
			var res store.WriteResult
			err := db.write(ctx, func(tx *Tx) error {
				var err error
				out, res, err = c.create(ctx, tx, nil, nil)
				return err
			})
			return out, res, err
		case c.nt.Mode == store.ModeOverwrite && existing.Kind == store.Managed:
			res, err := db.writeRows(ctx, c.id, existing.UUID, schemaVersion, c.overwrite(), first, src)
			if err != nil {
				return nil, store.WriteResult{}, err
			}
			return c.replaced(existing), res, nil
		case c.nt.Mode != store.ModeOverwrite:
			return nil, store.WriteResult{}, store.Errorf(store.CodeTableAlreadyExists, "table %s already exists", displayID(c.id))
		}
	}
	sw := &stagedWrite{db: db, table: stagingName(), columns: layoutColumns(c.ts.fields), version: 1, staging: true}
	last, err := sw.stage(ctx, first, src, func(tx *Tx) error { return createRowsTable(ctx, tx, sw.table, c.defs) })
	if err != nil {
		return nil, store.WriteResult{}, sw.abort(ctx, err)
	}
	defer last.release()
	var out *store.Table
	var res store.WriteResult
	err = sw.finish(ctx, func(tx *Tx) error {
		var err error
		out, res, err = c.create(ctx, tx, last, sw)
		return err
	})
	if err != nil {
		return nil, store.WriteResult{}, sw.abort(ctx, err)
	}
	return out, res, nil
}

// rowsWrite adds rows to an existing managed table, as Insert does, or
// replaces its rows as an overwrite does.
type rowsWrite struct {
	overwrite bool
	// schema is the new schema of an overwrite that changes it, else nil.
	schema *arrow.Schema
	// ts is what the rows are converted for: the table's schema, or the
	// new one laid out on columns from c0 (begin allocates the real ones).
	ts *tableSchema
	// table, when set, gives the table new properties and storage options
	// (CreateTable's overwrite).
	table *store.NewTable
	op    string
	// after, when set, runs in the write's last transaction, whether or
	// not the write makes a version.
	after func(ctx context.Context, tx *Tx, t *tableRow) error
}

// begin readies t for the rows in tx: it allocates the physical columns
// of a new schema. It returns the columns the rows go into and the new
// layout (nil when the schema stays).
func (w *rowsWrite) begin(ctx context.Context, tx *Tx, t *tableRow) ([]string, []*fieldLayout, error) {
	if w.schema == nil {
		return layoutColumns(w.ts.fields), nil, nil
	}
	layout, err := allocateColumns(ctx, tx, t, w.schema.Fields())
	if err != nil {
		return nil, nil, err
	}
	return layoutColumns(layout), layout, nil
}

// apply does the whole write in tx, as version v of t holding rows.
func (w *rowsWrite) apply(ctx context.Context, tx *Tx, t *tableRow, v int64, rows *boundRows) (store.WriteResult, error) {
	cols, layout, err := w.begin(ctx, tx, t)
	if err != nil {
		return store.WriteResult{}, err
	}
	if err := rows.insert(ctx, tx, dataTable(t), cols, v); err != nil {
		return store.WriteResult{}, err
	}
	return w.commit(ctx, tx, t, v, int64(rows.rows), layout)
}

// commit ends the write as version v of t, which got n new rows: it
// retires the old rows of an overwrite, saves a new schema and properties,
// and records the version; when nothing changed, the result names the
// latest version instead.
func (w *rowsWrite) commit(ctx context.Context, tx *Tx, t *tableRow, v, n int64, layout []*fieldLayout) (store.WriteResult, error) {
	res := store.WriteResult{Inserted: n}
	var err error
	if w.overwrite {
		tx.release(t.cacheID()) // the old rows, columns and indexes are of no use now
		if res.Deleted, err = retireAll(ctx, tx, t, v); err != nil {
			return store.WriteResult{}, err
		}
		if err := rebuildVectorIndexes(ctx, tx, t); err != nil {
			return store.WriteResult{}, err
		}
	}
	if w.table != nil {
		props, err := encodeMap(w.table.Properties)
		if err != nil {
			return store.WriteResult{}, err
		}
		opts, err := encodeMap(w.table.StorageOptions)
		if err != nil {
			return store.WriteResult{}, err
		}
		if _, err := tx.ExecCached(ctx, `UPDATE tables SET properties = ?, storage_options = ? WHERE id = ?`, props, opts, t.rowID); err != nil {
			return store.WriteResult{}, internal("overwrite table", err)
		}
	}
	if w.schema != nil {
		if err := saveSchema(ctx, tx, t, v, w.schema, layout); err != nil {
			return store.WriteResult{}, err
		}
	}
	if w.after != nil {
		if err := w.after(ctx, tx, t); err != nil {
			return store.WriteResult{}, err
		}
	}
	if n == 0 && res.Deleted == 0 && w.schema == nil && w.table == nil {
		res.Version = v - 1
		return res, nil
	}
	res.Version = v
	res.TransactionID, err = recordManagedVersion(ctx, tx, t, v, w.op)
	return res, err
}

// writeRows runs w on table id, which must still be the table with the
// given uuid and schema version that the rows (first, then the rest of
// src) were converted for, or the write returns errStale. Rows of more
// than one chunk are staged.
func (db *DB) writeRows(ctx context.Context, id []string, uuid string, schemaVersion int64, w *rowsWrite, first *boundRows, src *rowSource) (store.WriteResult, error) {
	var res store.WriteResult
	if src.done() {
		err := db.write(ctx, func(tx *Tx) error {
			t, v, err := sameTable(ctx, tx, id, uuid, schemaVersion)
			if err != nil {
				return err
			}
			res, err = w.apply(ctx, tx, t, v+1, first)
			return err
		})
		if err != nil {
			return store.WriteResult{}, err
		}
		return res, nil
	}
	held, t, v, err := db.holdTable(ctx, id, uuid, schemaVersion)
	if err != nil {
		return store.WriteResult{}, err
	}
	v++
	sw := &stagedWrite{db: db, held: held, table: dataTable(t), version: v}
	var layout []*fieldLayout
	last, err := sw.stage(ctx, first, src, func(tx *Tx) error {
		var err error
		sw.columns, layout, err = w.begin(ctx, tx, t)
		return err
	})
	if err != nil {
		return store.WriteResult{}, sw.abort(ctx, err)
	}
	defer last.release()
	err = sw.finish(ctx, func(tx *Tx) error {
		if err := sw.add(ctx, tx, last); err != nil {
			return err
		}
		var err error
		res, err = w.commit(ctx, tx, t, v, sw.rows+int64(last.rows), layout)
		return err
	})
	if err != nil {
		return store.WriteResult{}, sw.abort(ctx, err)
	}
	return res, nil
}

// retireAll ends, at version v, the visibility of every row visible in the
// latest version (rows a staged write added as version v stay).
func retireAll(ctx context.Context, tx *Tx, t *tableRow, v int64) (int64, error) {
	r, err := tx.Exec(ctx, fmt.Sprintf(`UPDATE %s SET _to = ? WHERE _to = ? AND _from < ?`, dataTable(t)), v, maxVersion, v)
	if err != nil {
		return 0, internal("retire rows", err)
	}
	return r.RowsAffected()
}

// writeTarget reads what a write to managed table id converts its rows
// for: the table and its latest schema. A declared table is
// errMaterialize, another external one InvalidTableState (19).
func (db *DB) writeTarget(ctx context.Context, id []string) (*tableRow, *tableSchema, error) {
	var t *tableRow
	var ts *tableSchema
	err := db.read(ctx, func(tx *Tx) error {
		var err error
		if t, err = findTable(ctx, tx, id); err != nil {
			return err
		}
		if t.Kind != store.Managed {
			if t.Declared {
				return errMaterialize
			}
			return notManaged(t)
		}
		if err := refuseViewWrite(ctx, tx, t); err != nil {
			return err
		}
		_, ts, err = schemaAt(ctx, tx, t, nil)
		return err
	})
	return t, ts, err
}

// Insert implements store.ManagedData. The rows are converted before the
// write takes the writer; rows of more than one chunk are staged
// (staging.go).
func (db *DB) Insert(ctx context.Context, id []string, mode store.InsertMode, d store.Data) (store.WriteResult, error) {
	rows := replayOf(d.Batches)
	defer rows.settle()
	for {
		res, err := db.insertOnce(ctx, id, mode, d.Schema, rows)
		if !errors.Is(err, errStale) {
			return res, err
		}
		if err := ctx.Err(); err != nil {
			return store.WriteResult{}, err
		}
		if err := rows.again(id); err != nil {
			return store.WriteResult{}, err
		}
	}
}

// insertOnce tries Insert once, reading rows (of schema) from the start;
// it returns errStale when the table changed before the write took the
// writer. The schema is checked before any row is read.
func (db *DB) insertOnce(ctx context.Context, id []string, mode store.InsertMode, schema *arrow.Schema, rows *replay) (store.WriteResult, error) {
	t, ts, err := db.writeTarget(ctx, id)
	if errors.Is(err, errMaterialize) {
		// A declared table gets its schema and first rows from the insert.
		_, res, err := db.CreateTable(ctx, id, store.NewTable{Mode: store.ModeCreate, Data: store.Data{Schema: schema, Batches: rows}})
		return res, err
	}
	if err != nil {
		return store.WriteResult{}, err
	}
	w := &rowsWrite{overwrite: mode == store.InsertOverwrite, ts: ts, op: insertOp(mode)}
	if err := conform(ts, schema); err != nil {
		if !w.overwrite {
			return store.WriteResult{}, err
		}
		// An overwrite may change the schema.
		stored, err := storedSchema(schema)
		if err != nil {
			return store.WriteResult{}, err
		}
		layout, _, _ := planColumns(stored.Fields(), 0)
		w.schema, w.ts = stored, &tableSchema{arrow: stored, fields: layout}
	}
	src := db.staging.rows(w.ts, rows, true)
	defer src.close()
	first, err := src.next()
	if err != nil {
		return store.WriteResult{}, err
	}
	defer first.release()
	return db.writeRows(ctx, id, t.UUID, ts.version, w, first, src)
}

// errMaterialize signals that a write found a declared table, to be created
// from the write's data instead.
var errMaterialize = errors.New("materialize declared table")

func insertOp(m store.InsertMode) string {
	if m == store.InsertOverwrite {
		return "Overwrite"
	}
	return "Append"
}
