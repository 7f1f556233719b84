package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/lancens/lancens/store"
)

var _ store.Tables = (*DB)(nil)

// tableRow is a table with its row ids.
type tableRow struct {
	rowID int64
	nsID  int64
	store.Table
}

const tableColumns = `t.id, t.namespace_id, t.uuid, t.location, t.owned, t.managed_versioning,
	t.declared, t.properties, t.storage_options, t.created_at`

func scanTable(row interface{ Scan(...any) error }, id []string) (*tableRow, error) {
	var r tableRow
	var created int64
	if err := row.Scan(&r.rowID, &r.nsID, &r.UUID, &r.Location, &r.Owned, &r.ManagedVersioning, &r.Declared,
		&r.Properties, &r.StorageOptions, &created); err != nil {
		return nil, err
	}
	r.ID = id
	r.Kind = store.External
	r.CreatedAt = msTime(created)
	r.Properties, r.StorageOptions = orEmpty(r.Properties), orEmpty(r.StorageOptions)
	return &r, nil
}

// findTable returns table id. Returns NamespaceNotFound if its namespace is
// missing and TableNotFound if the table is.
func findTable(ctx context.Context, tx *tx, id []string) (*tableRow, error) {
	if err := store.ValidateTableID(id); err != nil {
		return nil, err
	}
	nsID, err := findNamespace(ctx, tx, id[:len(id)-1])
	if err != nil {
		return nil, err
	}
	row := tx.QueryRow(ctx, `SELECT `+tableColumns+` FROM tables t WHERE t.namespace_id = $1 AND t.name = $2`, nsID, id[len(id)-1])
	t, err := scanTable(row, id)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, store.Errorf(store.CodeTableNotFound, "table %s not found", displayID(id))
	}
	if err != nil {
		return nil, internal("find table", err)
	}
	return t, nil
}

// lockTable takes the row lock of table t for the rest of the transaction:
// every change to a table's versions, tags and branches takes it first, so
// they run one after the other. It refreshes t's declared flag, and returns
// TableNotFound when the table was dropped meanwhile.
func lockTable(ctx context.Context, tx *tx, t *tableRow) error {
	err := tx.QueryRow(ctx, `SELECT declared FROM tables WHERE id = $1 FOR UPDATE`, t.rowID).Scan(&t.Declared)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Errorf(store.CodeTableNotFound, "table %s not found", displayID(t.ID))
	}
	return internal("lock table", err)
}

// ListTables implements store.Tables.
func (db *DB) ListTables(ctx context.Context, ns []string, includeDeclared bool, page store.Page) ([]string, string, error) {
	after, err := store.NameAfter(page.Token)
	if err != nil {
		return nil, "", err
	}
	size := store.PageSize(page.Limit)
	var names []string
	err = db.read(ctx, func(tx *tx) error {
		nsID, err := findNamespace(ctx, tx, ns)
		if err != nil {
			return err
		}
		names, err = queryStrings(ctx, tx, `SELECT name FROM tables WHERE namespace_id = $1 AND name > $2 AND ($3 OR NOT declared)
			ORDER BY name LIMIT $4`, nsID, after, includeDeclared, size+1)
		return err
	})
	if err != nil {
		return nil, "", err
	}
	names, next := store.CutNames(names, size)
	return names, next, nil
}

// ListAllTables implements store.Tables. Identifiers are compared as arrays
// of names, the order store.TablePageToken's tokens resume in.
func (db *DB) ListAllTables(ctx context.Context, includeDeclared bool, page store.Page) ([][]string, string, error) {
	after, err := store.DecodeTablePageToken(page.Token)
	if err != nil {
		return nil, "", err
	}
	if after == nil {
		after = []string{}
	}
	size := store.PageSize(page.Limit)
	var ids [][]string
	err = db.read(ctx, func(tx *tx) error {
		rows, err := tx.Query(ctx, `
			WITH RECURSIVE ns_path (id, path) AS (
				SELECT id, ARRAY[]::text[] COLLATE "C" FROM namespaces WHERE id = $1
				UNION ALL
				SELECT n.id, p.path || n.name::text FROM namespaces n JOIN ns_path p ON n.parent_id = p.id
			)
			SELECT key FROM (
				SELECT (p.path || t.name::text) COLLATE "C" AS key, t.declared FROM tables t JOIN ns_path p ON p.id = t.namespace_id
			) k
			WHERE key > $2::text[] COLLATE "C" AND ($3 OR NOT declared)
			ORDER BY key LIMIT $4`, rootNamespaceID, after, includeDeclared, size+1)
		if err != nil {
			return internal("list tables", err)
		}
		ids, err = pgx.CollectRows(rows, pgx.RowTo[[]string])
		return internal("list tables", err)
	})
	if err != nil {
		return nil, "", err
	}
	if ids == nil {
		ids = [][]string{}
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
	err := db.write(ctx, func(tx *tx) error {
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

func declareTable(ctx context.Context, tx *tx, id []string, decl store.TableDeclaration) (*store.Table, error) {
	return insertTable(ctx, tx, id, store.Table{
		Kind: store.External, Location: decl.Location, Owned: decl.Owned,
		Properties: decl.Properties, ManagedVersioning: true, Declared: true,
	})
}

// insertTable adds a catalog entry for t under id. Returns NamespaceNotFound,
// TableAlreadyExists, or InvalidInput when t's location is, contains or lies
// inside another table's.
func insertTable(ctx context.Context, tx *tx, id []string, t store.Table) (*store.Table, error) {
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
	var taken bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM tables WHERE namespace_id = $1 AND name = $2)`, nsID, id[len(id)-1]).Scan(&taken); err != nil {
		return nil, internal("insert table", err)
	}
	if taken {
		return nil, store.Errorf(store.CodeTableAlreadyExists, "table %s already exists", displayID(id))
	}
	if err := checkLocationFree(ctx, tx, t.Location); err != nil {
		return nil, err
	}
	t.UUID = newUUID()
	t.ID, t.CreatedAt = id, tx.now
	t.Properties, t.StorageOptions = orEmpty(t.Properties), orEmpty(t.StorageOptions)
	_, err = tx.Exec(ctx, `INSERT INTO tables (uuid, namespace_id, name, location, location_key, owned, managed_versioning,
		declared, properties, storage_options, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		t.UUID, nsID, id[len(id)-1], t.Location, store.LocationKey(t.Location), t.Owned, t.ManagedVersioning, t.Declared,
		t.Properties, t.StorageOptions, tx.now.UnixMilli())
	if err != nil {
		return nil, internal("insert table", err)
	}
	return &t, nil
}

// RegisterTable implements store.Tables.
func (db *DB) RegisterTable(ctx context.Context, id []string, reg store.TableRegistration) (*store.Table, string, error) {
	var out *store.Table
	var txID string
	err := db.write(ctx, func(tx *tx) error {
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
	err := db.read(ctx, func(tx *tx) error {
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
	err := db.write(ctx, func(tx *tx) error {
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
func dropTable(ctx context.Context, tx *tx, t *tableRow) (string, error) {
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
// When another table's location is the same, contains it or lies inside it
// (which the catalog refuses, but a table registered by hand could be), the
// data stays and the transaction, recorded as succeeded, says why.
func queueDataDeletion(ctx context.Context, tx *tx, t *tableRow) (string, error) {
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

// deleteTableRow removes a table's catalog entry; versions, branches and
// tags go with it (ON DELETE CASCADE). Its location is remembered
// (recordReleased).
func deleteTableRow(ctx context.Context, tx *tx, t *tableRow) error {
	if _, err := tx.Exec(ctx, `DELETE FROM tables WHERE id = $1`, t.rowID); err != nil {
		return internal("delete table", err)
	}
	return recordReleased(ctx, tx, t)
}

// DeregisterTable implements store.Tables.
func (db *DB) DeregisterTable(ctx context.Context, id []string) (*store.Table, string, error) {
	var out *store.Table
	var txID string
	err := db.write(ctx, func(tx *tx) error {
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

func deregisterTable(ctx context.Context, tx *tx, id []string) (*store.Table, error) {
	t, err := findTable(ctx, tx, id)
	if err != nil {
		return nil, err
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
	err := db.write(ctx, func(tx *tx) error {
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
		var taken bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM tables WHERE namespace_id = $1 AND name = $2 AND id <> $3)`,
			nsID, newName, t.rowID).Scan(&taken); err != nil {
			return internal("rename table", err)
		}
		if taken {
			return store.Errorf(store.CodeTableAlreadyExists, "table %s already exists", displayID(newID))
		}
		if _, err := tx.Exec(ctx, `UPDATE tables SET namespace_id = $1, name = $2 WHERE id = $3`, nsID, newName, t.rowID); err != nil {
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
func tableIDByUUID(ctx context.Context, tx *tx, uuid string) ([]string, error) {
	var id []string
	err := tx.QueryRow(ctx, `
		WITH RECURSIVE up (id, parent_id, name, depth) AS (
			SELECT n.id, n.parent_id, n.name::text, 1 FROM tables t JOIN namespaces n ON n.id = t.namespace_id WHERE t.uuid = $1
			UNION ALL
			SELECT n.id, n.parent_id, n.name::text, u.depth + 1 FROM namespaces n JOIN up u ON n.id = u.parent_id
		)
		SELECT coalesce((SELECT array_agg(name ORDER BY depth DESC) FROM up WHERE parent_id IS NOT NULL), ARRAY[]::text[])
			|| (SELECT name::text FROM tables WHERE uuid = $1)
		FROM tables WHERE uuid = $1`, uuid).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, store.Errorf(store.CodeTableNotFound, "table %s no longer exists", uuid)
	}
	if err != nil {
		return nil, internal("find table", err)
	}
	return id, nil
}
