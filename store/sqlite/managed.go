package sqlite

import (
	"context"
	"errors"
	"fmt"
	"strconv"

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

// createDataTable makes the rows table of managed table t, empty.
func createDataTable(ctx context.Context, tx *Tx, t *tableRow) error {
	name := dataTable(t)
	for _, q := range []string{
		fmt.Sprintf(`CREATE TABLE %s (_rowid INTEGER PRIMARY KEY, _from INTEGER NOT NULL, _to INTEGER NOT NULL DEFAULT %d)`, name, maxVersion),
		fmt.Sprintf(`CREATE INDEX %s_visible ON %s (_to, _from)`, name, name),
	} {
		if _, err := tx.Tx.ExecContext(ctx, q); err != nil {
			return internal("create rows table", err)
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO managed_tables (table_id, next_column) VALUES (?, 0)`, t.rowID); err != nil {
		return internal("create rows table", err)
	}
	return nil
}

// latestManaged returns the latest version of managed table t.
func latestManaged(ctx context.Context, tx *Tx, t *tableRow) (int64, error) {
	v, err := latestVersion(ctx, tx, t, "")
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
	if _, err := getVersion(ctx, tx, t, "", *v); err != nil {
		return 0, err
	}
	return *v, nil
}

// recordManagedVersion records version v of managed table t, made by op.
func recordManagedVersion(ctx context.Context, tx *Tx, t *tableRow, v int64, op string) (string, error) {
	txID, err := recordTx(ctx, tx, op, &t.Table, store.TxSucceeded, map[string]string{"version": strconv.FormatInt(v, 10)}, nil)
	if err != nil {
		return "", err
	}
	path := managedLocation(t.UUID) + "/_versions/" + store.NamingV2.ManifestFileName(v)
	meta, err := encodeMap(map[string]string{"operation": op})
	if err != nil {
		return "", err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO table_versions (table_id, branch, version, manifest_path, staged_path,
		timestamp_millis, metadata, transaction_id) VALUES (?, '', ?, ?, ?, ?, ?, ?)`,
		t.rowID, v, path, path, tx.now.UnixMilli(), meta, txID); err != nil {
		if isConstraint(err) {
			return "", store.Errorf(store.CodeConcurrentModification, "version %d of table %s already exists", v, displayID(t.ID))
		}
		return "", internal("record version", err)
	}
	return txID, nil
}

// CreateTable implements store.ManagedData.
func (db *DB) CreateTable(ctx context.Context, id []string, nt store.NewTable) (*store.Table, store.WriteResult, error) {
	schema, err := storedSchema(nt.Data.Schema)
	if err != nil {
		return nil, store.WriteResult{}, err
	}
	var out *store.Table
	var res store.WriteResult
	err = db.write(ctx, func(tx *Tx) error {
		existing, err := findTable(ctx, tx, id)
		switch {
		case errors.Is(err, store.ErrTableNotFound):
		case err != nil:
			return err
		case existing.Declared && existing.Kind == store.External:
			// Materialise the declaration: the reservation goes, the table
			// keeps its name, properties and identity.
			if nt.Properties == nil {
				nt.Properties = existing.Properties
			}
			if err := deleteTableRow(ctx, tx, existing); err != nil {
				return err
			}
			if existing.Owned {
				if _, err := queueDataDeletion(ctx, tx, existing); err != nil {
					return err
				}
			}
		case nt.Mode == store.ModeExistOk:
			if existing.Kind != store.Managed {
				return notManaged(existing)
			}
			out = &existing.Table
			res.Version, err = latestManaged(ctx, tx, existing)
			return err
		case nt.Mode == store.ModeOverwrite:
			if existing.Kind == store.Managed {
				out, res, err = overwriteManaged(ctx, tx, existing, schema, nt)
				return err
			}
			if err := deleteTableRow(ctx, tx, existing); err != nil {
				return err
			}
		default:
			return store.Errorf(store.CodeTableAlreadyExists, "table %s already exists", displayID(id))
		}
		uuid := newUUID()
		ins, err := insertTable(ctx, tx, id, store.Table{
			UUID: uuid, Kind: store.Managed, Location: managedLocation(uuid),
			Properties: nt.Properties, StorageOptions: nt.StorageOptions,
		})
		if err != nil {
			return err
		}
		t, err := findTable(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := createDataTable(ctx, tx, t); err != nil {
			return err
		}
		res, err = writeNewSchema(ctx, tx, t, 1, schema, nt.Data.Batches, "CreateTable")
		out = ins
		return err
	})
	if err != nil {
		return nil, store.WriteResult{}, err
	}
	return out, res, nil
}

// writeNewSchema makes version v of t with a new schema (fresh physical
// columns) holding the rows of batches.
func writeNewSchema(ctx context.Context, tx *Tx, t *tableRow, v int64, schema *arrow.Schema, batches []arrow.RecordBatch, op string) (store.WriteResult, error) {
	fields, err := allocateColumns(ctx, tx, t, schema.Fields())
	if err != nil {
		return store.WriteResult{}, err
	}
	if err := saveSchema(ctx, tx, t, v, schema, fields); err != nil {
		return store.WriteResult{}, err
	}
	ts := &tableSchema{version: v, arrow: schema, fields: fields}
	n, err := insertBatches(ctx, tx, t, ts, v, batches)
	if err != nil {
		return store.WriteResult{}, err
	}
	txID, err := recordManagedVersion(ctx, tx, t, v, op)
	return store.WriteResult{Version: v, TransactionID: txID, Inserted: n}, err
}

// overwriteManaged replaces the rows, schema and properties of managed
// table t with a new version.
func overwriteManaged(ctx context.Context, tx *Tx, t *tableRow, schema *arrow.Schema, nt store.NewTable) (*store.Table, store.WriteResult, error) {
	v, err := latestManaged(ctx, tx, t)
	if err != nil {
		return nil, store.WriteResult{}, err
	}
	v++
	tx.release(t.UUID) // the old rows, columns and indexes are of no use now
	deleted, err := retireAll(ctx, tx, t, v)
	if err != nil {
		return nil, store.WriteResult{}, err
	}
	props, err := encodeMap(nt.Properties)
	if err != nil {
		return nil, store.WriteResult{}, err
	}
	opts, err := encodeMap(nt.StorageOptions)
	if err != nil {
		return nil, store.WriteResult{}, err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE tables SET properties = ?, storage_options = ? WHERE id = ?`, props, opts, t.rowID); err != nil {
		return nil, store.WriteResult{}, internal("overwrite table", err)
	}
	res, err := writeNewSchema(ctx, tx, t, v, schema, nt.Data.Batches, "CreateTable")
	res.Deleted = deleted
	out := t.Table
	out.Properties, out.StorageOptions = orEmpty(nt.Properties), orEmpty(nt.StorageOptions)
	return &out, res, err
}

// retireAll ends the visibility of every row still visible, at version v.
func retireAll(ctx context.Context, tx *Tx, t *tableRow, v int64) (int64, error) {
	r, err := tx.ExecContext(ctx, fmt.Sprintf(`UPDATE %s SET _to = ? WHERE _to = ?`, dataTable(t)), v, maxVersion)
	if err != nil {
		return 0, internal("retire rows", err)
	}
	return r.RowsAffected()
}

// Insert implements store.ManagedData.
func (db *DB) Insert(ctx context.Context, id []string, mode store.InsertMode, d store.Data) (store.WriteResult, error) {
	var res store.WriteResult
	err := db.write(ctx, func(tx *Tx) error {
		t, err := findTable(ctx, tx, id)
		if err != nil {
			return err
		}
		if t.Kind != store.Managed {
			if !t.Declared {
				return notManaged(t)
			}
			return errMaterialize
		}
		v, ts, err := schemaAt(ctx, tx, t, nil)
		if err != nil {
			return err
		}
		v++
		if mode == store.InsertOverwrite {
			if res.Deleted, err = retireAll(ctx, tx, t, v); err != nil {
				return err
			}
			if conform(ts, d.Schema) != nil {
				// An overwrite may change the schema.
				schema, err := storedSchema(d.Schema)
				if err != nil {
					return err
				}
				deleted := res.Deleted
				res, err = writeNewSchema(ctx, tx, t, v, schema, d.Batches, "Overwrite")
				res.Deleted = deleted
				return err
			}
		} else if err := conform(ts, d.Schema); err != nil {
			return err
		}
		if res.Inserted, err = insertBatches(ctx, tx, t, ts, v, d.Batches); err != nil {
			return err
		}
		if res.Inserted == 0 && res.Deleted == 0 {
			res.Version = v - 1
			return nil
		}
		res.Version = v
		res.TransactionID, err = recordManagedVersion(ctx, tx, t, v, insertOp(mode))
		return err
	})
	if errors.Is(err, errMaterialize) {
		// A declared table gets its schema and first rows from the insert.
		_, res, err = db.CreateTable(ctx, id, store.NewTable{Mode: store.ModeCreate, Data: d})
	}
	return res, err
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
