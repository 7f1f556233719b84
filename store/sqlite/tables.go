package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"github.com/lancens/lancens/store"
)

var _ store.Tables = (*DB)(nil)

// tableRow is a table with its row ids.
type tableRow struct {
	rowID int64
	nsID  int64
	store.Table
	// branch and line say which line of a managed table's rows an
	// operation acts on: "" and 0 for main (see branches.go).
	branch string
	line   int64
}

const tableColumns = `t.id, t.namespace_id, t.uuid, t.kind, t.location, t.owned, t.managed_versioning,
	t.declared, t.properties, t.storage_options, t.created_at`

func scanTable(row interface{ Scan(...any) error }, id []string) (*tableRow, error) {
	var r tableRow
	var kind, props, opts string
	var owned, managed, declared int
	var created int64
	if err := row.Scan(&r.rowID, &r.nsID, &r.UUID, &kind, &r.Location, &owned, &managed, &declared, &props, &opts, &created); err != nil {
		return nil, err
	}
	r.ID = id
	r.Kind = store.External
	if kind == "managed" {
		r.Kind = store.Managed
	}
	r.Owned, r.ManagedVersioning, r.Declared = owned == 1, managed == 1, declared == 1
	r.CreatedAt = msTime(created)
	var err error
	if r.Properties, err = decodeMap(props); err != nil {
		return nil, err
	}
	if r.StorageOptions, err = decodeMap(opts); err != nil {
		return nil, err
	}
	return &r, nil
}

func kindName(k store.TableKind) string {
	if k == store.Managed {
		return "managed"
	}
	return "external"
}

// findTable returns table id. Returns NamespaceNotFound if its namespace is
// missing, TableNotFound if the table is, and in a write tableBusy while a
// staged write holds the table.
func findTable(ctx context.Context, tx *Tx, id []string) (*tableRow, error) {
	if err := store.ValidateTableID(id); err != nil {
		return nil, err
	}
	nsID, err := findNamespace(ctx, tx, id[:len(id)-1])
	if err != nil {
		return nil, err
	}
	row := tx.QueryRowCached(ctx, `SELECT `+tableColumns+` FROM tables t WHERE t.namespace_id = ? AND t.name = ?`, nsID, id[len(id)-1])
	t, err := scanTable(row, id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, store.Errorf(store.CodeTableNotFound, "table %s not found", displayID(id))
	}
	if err != nil {
		return nil, internal("find table", err)
	}
	if err := tx.notHeld(t); err != nil {
		return nil, err
	}
	if err := bindBranch(ctx, tx, t); err != nil {
		return nil, err
	}
	return t, nil
}

// ListTables implements store.Tables.
func (db *DB) ListTables(ctx context.Context, ns []string, includeDeclared bool, page store.Page) ([]string, string, error) {
	after, err := store.NameAfter(page.Token)
	if err != nil {
		return nil, "", err
	}
	size := store.PageSize(page.Limit)
	var names []string
	err = db.read(ctx, func(tx *Tx) error {
		nsID, err := findNamespace(ctx, tx, ns)
		if err != nil {
			return err
		}
		names, err = queryStrings(ctx, tx, `SELECT name FROM tables WHERE namespace_id = ? AND name > ? AND (? OR declared = 0)
			ORDER BY name LIMIT ?`, nsID, after, includeDeclared, size+1)
		return err
	})
	if err != nil {
		return nil, "", err
	}
	names, next := store.CutNames(names, size)
	return names, next, nil
}

// idKeySeparator joins the names of an identifier into a sort key; names
// cannot contain control characters, so the key splits back unambiguously and
// sorts parents before children.
const idKeySeparator = "\x00"

// ListAllTables implements store.Tables.
func (db *DB) ListAllTables(ctx context.Context, includeDeclared bool, page store.Page) ([][]string, string, error) {
	afterID, err := store.DecodeTablePageToken(page.Token)
	if err != nil {
		return nil, "", err
	}
	after := strings.Join(afterID, idKeySeparator)
	size := store.PageSize(page.Limit)
	var keys []string
	err = db.read(ctx, func(tx *Tx) error {
		keys, err = queryStrings(ctx, tx, `
			WITH RECURSIVE ns_path (id, path) AS (
				SELECT id, '' FROM namespaces WHERE id = ?
				UNION ALL
				SELECT n.id, p.path || n.name || char(0) FROM namespaces n JOIN ns_path p ON n.parent_id = p.id
			)
			SELECT p.path || t.name AS key FROM tables t JOIN ns_path p ON p.id = t.namespace_id
			WHERE key > ? AND (? OR t.declared = 0)
			ORDER BY key LIMIT ?`, rootNamespaceID, after, includeDeclared, size+1)
		return err
	})
	if err != nil {
		return nil, "", err
	}
	ids := make([][]string, len(keys))
	for i, k := range keys {
		ids[i] = strings.Split(k, idKeySeparator)
	}
	next := ""
	if len(ids) > size {
		ids = ids[:size]
		next = store.TablePageToken(ids[size-1])
	}
	return ids, next, nil
}

// DeclareTable implements store.Tables.
func (db *DB) DeclareTable(ctx context.Context, id []string, decl store.TableDeclaration) (*store.Table, string, error) {
	var out *store.Table
	var txID string
	err := db.write(ctx, func(tx *Tx) error {
		t, err := declareTable(ctx, tx, id, decl)
		if err != nil {
			return err
		}
		out = t
		txID, err = recordTx(ctx, tx, "DeclareTable", t, store.TxSucceeded, nil, nil)
		return err
	})
	return out, txID, err
}

func declareTable(ctx context.Context, tx *Tx, id []string, decl store.TableDeclaration) (*store.Table, error) {
	return insertTable(ctx, tx, id, store.Table{
		Kind: store.External, Location: decl.Location, Owned: decl.Owned,
		Properties: decl.Properties, ManagedVersioning: true, Declared: true,
	})
}

// insertTable adds a catalog entry for t under id. Returns NamespaceNotFound,
// TableAlreadyExists, or InvalidInput when t's location is, contains or lies
// inside another table's.
func insertTable(ctx context.Context, tx *Tx, id []string, t store.Table) (*store.Table, error) {
	if err := store.ValidateTableID(id); err != nil {
		return nil, err
	}
	if err := store.ValidateNewName("table", id[len(id)-1]); err != nil {
		return nil, err
	}
	nsID, err := findNamespace(ctx, tx, id[:len(id)-1])
	if err != nil {
		return nil, err
	}
	// The name is checked first: declaring a table twice is "already
	// exists", whatever the location.
	var taken int
	if err := tx.QueryRowCached(ctx, `SELECT count(*) FROM tables WHERE namespace_id = ? AND name = ?`, nsID, id[len(id)-1]).Scan(&taken); err != nil {
		return nil, internal("insert table", err)
	}
	if taken > 0 {
		return nil, store.Errorf(store.CodeTableAlreadyExists, "table %s already exists", displayID(id))
	}
	if err := checkLocationFree(ctx, tx, t.Location); err != nil {
		return nil, err
	}
	props, err := encodeMap(t.Properties)
	if err != nil {
		return nil, err
	}
	opts, err := encodeMap(t.StorageOptions)
	if err != nil {
		return nil, err
	}
	if t.UUID == "" {
		t.UUID = newUUID()
	}
	t.ID, t.CreatedAt = id, tx.Now()
	t.Properties, t.StorageOptions = orEmpty(t.Properties), orEmpty(t.StorageOptions)
	_, err = tx.ExecCached(ctx, `INSERT INTO tables (uuid, namespace_id, name, kind, location, location_key, owned, managed_versioning,
		declared, properties, storage_options, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		t.UUID, nsID, id[len(id)-1], kindName(t.Kind), t.Location, store.LocationKey(t.Location), t.Owned, t.ManagedVersioning, t.Declared,
		props, opts, tx.Now().UnixMilli())
	if isConstraint(err) {
		return nil, store.Errorf(store.CodeTableAlreadyExists, "table %s already exists", displayID(id))
	}
	if err != nil {
		return nil, internal("insert table", err)
	}
	return &t, nil
}

// RegisterTable implements store.Tables.
func (db *DB) RegisterTable(ctx context.Context, id []string, reg store.TableRegistration) (*store.Table, string, error) {
	var out *store.Table
	var txID string
	err := db.write(ctx, func(tx *Tx) error {
		existing, err := findTable(ctx, tx, id)
		switch {
		case err == nil && reg.Mode == store.ModeOverwrite:
			// The old entry goes as in a deregistration: its data stays.
			if err := deleteTableRow(ctx, tx, existing); err != nil {
				return err
			}
		case err == nil:
			return store.Errorf(store.CodeTableAlreadyExists, "table %s already exists", displayID(id))
		case !errors.Is(err, store.ErrTableNotFound):
			return err
		}
		out, err = insertTable(ctx, tx, id, store.Table{Kind: store.External, Location: reg.Location, Properties: reg.Properties})
		if err != nil {
			return err
		}
		txID, err = recordTx(ctx, tx, "RegisterTable", out, store.TxSucceeded, nil, nil)
		return err
	})
	return out, txID, err
}

// DescribeTable implements store.Tables.
func (db *DB) DescribeTable(ctx context.Context, id []string) (*store.Table, error) {
	var out *store.Table
	err := db.read(ctx, func(tx *Tx) error {
		t, err := findTable(ctx, tx, id)
		if err != nil {
			return err
		}
		out = &t.Table
		return nil
	})
	return out, err
}

// DropTable implements store.Tables.
func (db *DB) DropTable(ctx context.Context, id []string) (*store.Table, string, error) {
	var out *store.Table
	var txID string
	err := db.write(ctx, func(tx *Tx) error {
		t, err := findTable(ctx, tx, id)
		if err != nil {
			return err
		}
		out = &t.Table
		txID, err = dropTable(ctx, tx, t)
		return err
	})
	return out, txID, err
}

// dropTable deletes the catalog entry of t and, when lancens owns its data,
// queues the data's deletion in the returned transaction.
func dropTable(ctx context.Context, tx *Tx, t *tableRow) (string, error) {
	if err := deleteTableRow(ctx, tx, t); err != nil {
		return "", err
	}
	if t.Owned {
		return queueDataDeletion(ctx, tx, t)
	}
	return recordTx(ctx, tx, "DropTable", &t.Table, store.TxSucceeded, nil, nil)
}

// queueDataDeletion queues the deletion of the data of t, whose catalog
// entry is already gone, and returns the id of the transaction doing it.
// When another table's location is the same, contains it or lies inside
// it (a catalog from before lancens refused that), the data stays and the
// transaction, recorded as succeeded, says why.
func queueDataDeletion(ctx context.Context, tx *Tx, t *tableRow) (string, error) {
	c, err := findLocationClash(ctx, tx, store.LocationKey(t.Location), t.rowID)
	if err != nil {
		return "", err
	}
	if c != nil {
		return recordTx(ctx, tx, "DropTable", &t.Table, store.TxSucceeded,
			map[string]string{"data_kept": clashMessage(ctx, tx, t.Location, c)}, nil)
	}
	return recordTx(ctx, tx, store.JobDeleteTableData, &t.Table, store.TxQueued, nil, store.DeleteTableData{Location: t.Location})
}

// deleteTableRow removes a table's catalog entry; versions, branches, tags,
// schemas go with it (ON DELETE CASCADE), and a managed table's rows with
// their table. Its location is remembered (recordReleased).
func deleteTableRow(ctx context.Context, tx *Tx, t *tableRow) error {
	tx.release(t.UUID)
	if t.Kind == store.Managed {
		if err := dropAllIndexes(ctx, tx, t); err != nil {
			return err
		}
		if err := dropLines(ctx, tx, t); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DROP TABLE IF EXISTS `+dataTable(t)); err != nil {
			return internal("drop rows", err)
		}
	}
	if _, err := tx.ExecCached(ctx, `DELETE FROM tables WHERE id = ?`, t.rowID); err != nil {
		return internal("delete table", err)
	}
	return recordReleased(ctx, tx, t)
}

// DeregisterTable implements store.Tables.
func (db *DB) DeregisterTable(ctx context.Context, id []string) (*store.Table, string, error) {
	var out *store.Table
	var txID string
	err := db.write(ctx, func(tx *Tx) error {
		t, err := deregisterTable(ctx, tx, id)
		if err != nil {
			return err
		}
		out = t
		txID, err = recordTx(ctx, tx, "DeregisterTable", t, store.TxSucceeded, nil, nil)
		return err
	})
	return out, txID, err
}

func deregisterTable(ctx context.Context, tx *Tx, id []string) (*store.Table, error) {
	t, err := findTable(ctx, tx, id)
	if err != nil {
		return nil, err
	}
	if t.Kind == store.Managed {
		return nil, store.Errorf(store.CodeInvalidTableState, "table %s keeps its rows inside lancens and cannot be deregistered; drop it instead", displayID(id))
	}
	if err := deleteTableRow(ctx, tx, t); err != nil {
		return nil, err
	}
	return &t.Table, nil
}

// RenameTable implements store.Tables.
func (db *DB) RenameTable(ctx context.Context, id []string, newNamespace []string, newName string) (string, error) {
	if err := store.ValidateNewName("table", newName); err != nil {
		return "", err
	}
	var txID string
	err := db.write(ctx, func(tx *Tx) error {
		t, err := findTable(ctx, tx, id)
		if err != nil {
			return err
		}
		nsID := t.nsID
		target := append([]string(nil), t.Namespace()...)
		if newNamespace != nil {
			if nsID, err = findNamespace(ctx, tx, newNamespace); err != nil {
				return err
			}
			target = newNamespace
		}
		newID := append(append([]string(nil), target...), newName)
		_, err = tx.ExecCached(ctx, `UPDATE tables SET namespace_id = ?, name = ? WHERE id = ?`, nsID, newName, t.rowID)
		if isConstraint(err) {
			return store.Errorf(store.CodeTableAlreadyExists, "table %s already exists", displayID(newID))
		}
		if err != nil {
			return internal("rename table", err)
		}
		t.ID = newID
		txID, err = recordTx(ctx, tx, "RenameTable", &t.Table, store.TxSucceeded, map[string]string{"renamed_from": displayID(id)}, nil)
		return err
	})
	return txID, err
}

// tableIDByUUID returns the identifier of the table with the given uuid.
// Returns TableNotFound when there is none (it was dropped).
func tableIDByUUID(ctx context.Context, tx *Tx, uuid string) ([]string, error) {
	var name string
	var nsID int64
	err := tx.QueryRowCached(ctx, `SELECT name, namespace_id FROM tables WHERE uuid = ?`, uuid).Scan(&name, &nsID)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, store.Errorf(store.CodeTableNotFound, "table %s no longer exists", uuid)
	}
	if err != nil {
		return nil, internal("find table", err)
	}
	id := []string{name}
	for nsID != rootNamespaceID {
		var parent int64
		if err := tx.QueryRowCached(ctx, `SELECT name, parent_id FROM namespaces WHERE id = ?`, nsID).Scan(&name, &parent); err != nil {
			return nil, internal("find table", err)
		}
		id = append([]string{name}, id...)
		nsID = parent
	}
	return id, nil
}
