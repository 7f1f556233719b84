package sqlcatalog

import (
	"context"
	"errors"
	"strings"

	"github.com/lancens/lancens/store"
)

// scanTable scans the columns of statements.findTable into a table, after
// the columns of first (none, or the identifier's path of tablesUnder).
func scanTable(row Row, first ...any) (*Table, error) {
	var t Table
	var kind, props, opts string
	var created int64
	dest := append(first, &t.RowID, &t.NamespaceID, &t.UUID, &kind, &t.Location, &t.Owned, &t.ManagedVersioning, &t.Declared,
		&props, &opts, &created)
	if err := row.Scan(dest...); err != nil {
		return nil, err
	}
	if kind == "managed" {
		t.Kind = store.Managed
	}
	t.CreatedAt = msTime(created)
	var err error
	if t.Properties, err = decodeMap(props); err != nil {
		return nil, err
	}
	if t.StorageOptions, err = decodeMap(opts); err != nil {
		return nil, err
	}
	return &t, nil
}

// kindName is how the kind column spells a table kind.
func kindName(k store.TableKind) string {
	if k == store.Managed {
		return "managed"
	}
	return "external"
}

// FindTable returns table id, which the backend's Managed has seen.
// Returns InvalidInput (13) for an invalid identifier, NamespaceNotFound
// (1) if its namespace is missing, TableNotFound (4) if the table is, and
// the errors of Managed.Found.
func (o *Ops) FindTable(ctx context.Context, tx Tx, id []string) (*Table, error) {
	if err := store.ValidateTableID(id); err != nil {
		return nil, err
	}
	nsID, err := o.findNamespace(ctx, tx, id[:len(id)-1])
	if err != nil {
		return nil, err
	}
	t, err := scanTable(tx.QueryRow(ctx, o.q.findTable, nsID, id[len(id)-1]))
	if o.d.NoRows(err) {
		return nil, store.Errorf(store.CodeTableNotFound, "table %s not found", DisplayID(id))
	}
	if err != nil {
		return nil, internal("find table", err)
	}
	t.ID = id
	return t, nil
}

// lockTable takes the row lock of table t for the rest of the transaction,
// where the dialect needs row locks: every change to a table's versions,
// tags and branches takes it first, so that they run one after the other.
// It refreshes t's declared flag, and returns TableNotFound (4) when the
// table was dropped meanwhile.
func (o *Ops) lockTable(ctx context.Context, tx Tx, t *Table) error {
	if !o.d.RowLocks() {
		return nil
	}
	err := tx.QueryRow(ctx, `SELECT declared FROM tables WHERE id = ? FOR UPDATE`, t.RowID).Scan(&t.Declared)
	if o.d.NoRows(err) {
		return store.Errorf(store.CodeTableNotFound, "table %s not found", DisplayID(t.ID))
	}
	return internal("lock table", err)
}

// ListTables implements store.Tables.
func (c *Catalog) ListTables(ctx context.Context, ns []string, includeDeclared bool, page store.Page) ([]string, string, error) {
	return c.listNames(ctx, ns, page, `SELECT name FROM tables WHERE namespace_id = ? AND name > ? AND (? OR NOT declared)
		ORDER BY name LIMIT ?`, includeDeclared)
}

// ListAllTables implements store.Tables. Identifiers sort as their keys
// (see idSeparator) do: name by name, the order store.TablePageToken's
// tokens resume in.
func (c *Catalog) ListAllTables(ctx context.Context, includeDeclared bool, page store.Page) ([][]string, string, error) {
	afterID, err := store.DecodeTablePageToken(page.Token)
	if err != nil {
		return nil, "", err
	}
	after := strings.Join(afterID, idSeparator)
	size := store.PageSize(page.Limit)
	var keys []string
	err = c.db.Read(ctx, func(tx Tx) error {
		keys, err = QueryStrings(ctx, tx, namespacePaths+`
			SELECT key FROM (
				SELECT p.path || t.name AS key, t.declared FROM tables t JOIN ns_path p ON p.id = t.namespace_id
			) k
			WHERE key > ? AND (? OR NOT declared)
			ORDER BY key LIMIT ?`, rootNamespaceID, idSeparator, after, includeDeclared, size+1)
		return err
	})
	if err != nil {
		return nil, "", err
	}
	ids := make([][]string, len(keys))
	for i, k := range keys {
		ids[i] = strings.Split(k, idSeparator)
	}
	next := ""
	if len(ids) > size {
		ids = ids[:size]
		next = store.TablePageToken(ids[size-1])
	}
	return ids, next, nil
}

// DeclareTable implements store.Tables.
func (c *Catalog) DeclareTable(ctx context.Context, id []string, decl store.TableDeclaration) (*store.Table, string, error) {
	var out *store.Table
	var txID string
	err := c.db.Write(ctx, func(tx Tx) error {
		t, err := c.ops.declareTable(ctx, tx, id, decl)
		if err != nil {
			return err
		}
		out = t
		txID, err = c.ops.RecordTx(ctx, tx, "DeclareTable", t, store.TxSucceeded, nil, nil)
		return err
	})
	return out, txID, err
}

func (o *Ops) declareTable(ctx context.Context, tx Tx, id []string, decl store.TableDeclaration) (*store.Table, error) {
	t, err := o.InsertTable(ctx, tx, id, store.Table{
		Kind: store.External, Location: decl.Location, Owned: decl.Owned,
		Properties: decl.Properties, StorageOptions: decl.StorageOptions, ManagedVersioning: true, Declared: true,
	})
	if err != nil || decl.View == nil {
		return t, err
	}
	var rowID int64
	if err := tx.QueryRow(ctx, `SELECT id FROM tables WHERE uuid = ?`, t.UUID).Scan(&rowID); err != nil {
		return nil, internal("find table", err)
	}
	return t, o.recordView(ctx, tx, rowID, decl.View)
}

// InsertTable adds a catalog entry for t under id, with a new UUID unless t
// has one, and returns it. Returns InvalidInput (13) for an invalid
// identifier, NamespaceNotFound (1), TableAlreadyExists (5), or
// InvalidInput (13) when t's location is, contains or lies inside
// another table's (see checkLocationFree).
func (o *Ops) InsertTable(ctx context.Context, tx Tx, id []string, t store.Table) (*store.Table, error) {
	if err := store.ValidateTableID(id); err != nil {
		return nil, err
	}
	if err := store.ValidateNewName("table", id[len(id)-1]); err != nil {
		return nil, err
	}
	nsID, err := o.findNamespace(ctx, tx, id[:len(id)-1])
	if err != nil {
		return nil, err
	}
	// The name is checked first: declaring a table twice is "already
	// exists", whatever the location.
	var taken bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM tables WHERE namespace_id = ? AND name = ?)`,
		nsID, id[len(id)-1]).Scan(&taken); err != nil {
		return nil, internal("insert table", err)
	}
	if taken {
		return nil, store.Errorf(store.CodeTableAlreadyExists, "table %s already exists", DisplayID(id))
	}
	if err := o.checkLocationFree(ctx, tx, t.Location); err != nil {
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
		t.UUID = NewUUID()
	}
	t.ID, t.CreatedAt = id, tx.Now()
	t.Properties, t.StorageOptions = orEmpty(t.Properties), orEmpty(t.StorageOptions)
	args := []any{t.UUID, nsID, id[len(id)-1], t.Location, store.LocationKey(t.Location), t.Owned, t.ManagedVersioning, t.Declared,
		props, opts, tx.Now().UnixMilli()}
	if o.m != nil {
		args = append(args, kindName(t.Kind))
	}
	if _, err := tx.Exec(ctx, o.q.insertTable, args...); err != nil {
		if o.d.UniqueViolation(err) {
			return nil, conflict(err, store.CodeTableAlreadyExists, "table %s already exists", DisplayID(id))
		}
		return nil, internal("insert table", err)
	}
	return &t, nil
}

// RegisterTable implements store.Tables.
func (c *Catalog) RegisterTable(ctx context.Context, id []string, reg store.TableRegistration) (*store.Table, string, error) {
	var out *store.Table
	var txID string
	err := c.db.Write(ctx, func(tx Tx) error {
		o := c.ops
		existing, err := o.FindTable(ctx, tx, id)
		switch {
		case err == nil && reg.Mode == store.ModeOverwrite:
			// The old entry goes as in a deregistration: its data stays.
			if err := o.DeleteTable(ctx, tx, existing); err != nil {
				return err
			}
		case err == nil:
			return store.Errorf(store.CodeTableAlreadyExists, "table %s already exists", DisplayID(id))
		case !errors.Is(err, store.ErrTableNotFound):
			return err
		}
		out, err = o.InsertTable(ctx, tx, id, store.Table{Kind: store.External, Location: reg.Location, Properties: reg.Properties})
		if err != nil {
			return err
		}
		txID, err = o.RecordTx(ctx, tx, "RegisterTable", out, store.TxSucceeded, nil, nil)
		return err
	})
	return out, txID, err
}

// DescribeTable implements store.Tables.
func (c *Catalog) DescribeTable(ctx context.Context, id []string) (*store.Table, error) {
	var out *store.Table
	err := c.readTable(ctx, id, func(_ Tx, t *Table) error {
		out = &t.Table
		return nil
	})
	return out, err
}

// DropTable implements store.Tables.
func (c *Catalog) DropTable(ctx context.Context, id []string) (*store.Table, string, error) {
	var out *store.Table
	var txID string
	err := c.db.Write(ctx, func(tx Tx) error {
		t, err := c.ops.FindTable(ctx, tx, id)
		if err != nil {
			return err
		}
		out = &t.Table
		txID, err = c.ops.dropTable(ctx, tx, t)
		return err
	})
	return out, txID, err
}

// dropTable deletes the catalog entry of t and, when lancens owns its data,
// queues the data's deletion in the returned transaction.
func (o *Ops) dropTable(ctx context.Context, tx Tx, t *Table) (string, error) {
	if err := o.DeleteTable(ctx, tx, t); err != nil {
		return "", err
	}
	if t.Owned {
		return o.QueueDataDeletion(ctx, tx, t)
	}
	return o.RecordTx(ctx, tx, "DropTable", &t.Table, store.TxSucceeded, nil, nil)
}

// QueueDataDeletion queues the deletion of the data of t, whose catalog
// entry is already gone, and returns the id of the transaction doing it.
// When another table's location is the same, contains it or lies inside it
// (which the catalog refuses, but an older catalog or a table registered
// by hand may hold), the data stays and the transaction, recorded as
// succeeded, says why. It returns the database's error.
func (o *Ops) QueueDataDeletion(ctx context.Context, tx Tx, t *Table) (string, error) {
	c, err := o.findLocationClash(ctx, tx, store.LocationKey(t.Location), t.RowID)
	if err != nil {
		return "", err
	}
	if c != nil {
		return o.RecordTx(ctx, tx, "DropTable", &t.Table, store.TxSucceeded,
			map[string]string{"data_kept": o.clashMessage(ctx, tx, t.Location, c)}, nil)
	}
	return o.RecordTx(ctx, tx, store.JobDeleteTableData, &t.Table, store.TxQueued, nil, store.DeleteTableData{Location: t.Location})
}

// DeleteTable removes the catalog entry of t, after the backend's Managed
// has let go of what it keeps for t; versions, branches and tags go with
// the entry (ON DELETE CASCADE), and its location is remembered
// (recordReleased). It returns the errors of Managed.Deleting and the
// database's.
func (o *Ops) DeleteTable(ctx context.Context, tx Tx, t *Table) error {
	if o.m != nil {
		if err := o.m.Deleting(ctx, tx, t); err != nil {
			return err
		}
	}
	if _, err := tx.Exec(ctx, `DELETE FROM tables WHERE id = ?`, t.RowID); err != nil {
		return internal("delete table", err)
	}
	return recordReleased(ctx, tx, t)
}

// DeregisterTable implements store.Tables.
func (c *Catalog) DeregisterTable(ctx context.Context, id []string) (*store.Table, string, error) {
	var out *store.Table
	var txID string
	err := c.db.Write(ctx, func(tx Tx) error {
		t, err := c.ops.deregisterTable(ctx, tx, id)
		if err != nil {
			return err
		}
		out = t
		txID, err = c.ops.RecordTx(ctx, tx, "DeregisterTable", t, store.TxSucceeded, nil, nil)
		return err
	})
	return out, txID, err
}

func (o *Ops) deregisterTable(ctx context.Context, tx Tx, id []string) (*store.Table, error) {
	t, err := o.FindTable(ctx, tx, id)
	if err != nil {
		return nil, err
	}
	if t.Kind == store.Managed {
		return nil, store.Errorf(store.CodeInvalidTableState, "table %s keeps its rows in the database file of an earlier lancens, not converted to a Lance dataset yet, and cannot be deregistered: run lancens migrate, or drop it", DisplayID(id))
	}
	if err := o.DeleteTable(ctx, tx, t); err != nil {
		return nil, err
	}
	return &t.Table, nil
}

// RenameTable implements store.Tables.
func (c *Catalog) RenameTable(ctx context.Context, id []string, newNamespace []string, newName string) (string, error) {
	if err := store.ValidateNewName("table", newName); err != nil {
		return "", err
	}
	var txID string
	err := c.db.Write(ctx, func(tx Tx) error {
		o := c.ops
		t, err := o.FindTable(ctx, tx, id)
		if err != nil {
			return err
		}
		nsID := t.NamespaceID
		target := append([]string(nil), t.Namespace()...)
		if newNamespace != nil {
			if nsID, err = o.findNamespace(ctx, tx, newNamespace); err != nil {
				return err
			}
			target = newNamespace
		}
		newID := append(append([]string(nil), target...), newName)
		var taken bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM tables WHERE namespace_id = ? AND name = ? AND id <> ?)`,
			nsID, newName, t.RowID).Scan(&taken); err != nil {
			return internal("rename table", err)
		}
		if taken {
			return store.Errorf(store.CodeTableAlreadyExists, "table %s already exists", DisplayID(newID))
		}
		if _, err := tx.Exec(ctx, `UPDATE tables SET namespace_id = ?, name = ? WHERE id = ?`, nsID, newName, t.RowID); err != nil {
			if o.d.UniqueViolation(err) {
				return conflict(err, store.CodeTableAlreadyExists, "table %s already exists", DisplayID(newID))
			}
			return internal("rename table", err)
		}
		t.ID = newID
		txID, err = o.RecordTx(ctx, tx, "RenameTable", &t.Table, store.TxSucceeded, map[string]string{"renamed_from": DisplayID(id)}, nil)
		return err
	})
	return txID, err
}

// TableIDByUUID returns the identifier of the table with the given uuid.
// Returns TableNotFound (4) when there is none (it was dropped).
func (o *Ops) TableIDByUUID(ctx context.Context, tx Tx, uuid string) ([]string, error) {
	// The namespaces up from the table's, then the table's own name.
	id, err := QueryStrings(ctx, tx, `WITH RECURSIVE up (id, parent_id, name, depth) AS (
			SELECT n.id, n.parent_id, n.name, 1 FROM tables t JOIN namespaces n ON n.id = t.namespace_id WHERE t.uuid = ?
			UNION ALL
			SELECT n.id, n.parent_id, n.name, u.depth + 1 FROM namespaces n JOIN up u ON n.id = u.parent_id
		)
		SELECT name FROM (
			SELECT name, depth FROM up WHERE parent_id IS NOT NULL
			UNION ALL
			SELECT name, 0 FROM tables WHERE uuid = ?
		) names ORDER BY depth DESC`, uuid, uuid)
	if err != nil {
		return nil, internal("find table", err)
	}
	if len(id) == 0 {
		return nil, store.Errorf(store.CodeTableNotFound, "table %s no longer exists", uuid)
	}
	return id, nil
}

// ConvertManaged makes the managed table of row rowID and uuid a table
// whose rows are the Lance dataset at location, which the warehouse
// allocated for it: its kind becomes external, lancens owns the location
// and coordinates its commits. Its uuid, properties, versions, tags and
// branches stay. Only a catalog whose tables have a kind (SQLite's, which
// the row store of earlier releases kept managed tables in) has managed
// tables. Returns TableNotFound (4) when no managed table has that row and
// uuid any more, and InvalidInput (13) when location is, contains or lies
// inside another table's (see checkLocationFree).
func (o *Ops) ConvertManaged(ctx context.Context, tx Tx, rowID int64, uuid, location string) error {
	if err := o.checkLocationFree(ctx, tx, location); err != nil {
		return err
	}
	n, err := tx.Exec(ctx, `UPDATE tables SET kind = ?, location = ?, location_key = ?, owned = ?, managed_versioning = ?, declared = ?
		WHERE id = ? AND uuid = ? AND kind = ?`, kindName(store.External), location, store.LocationKey(location), true, true, false,
		rowID, uuid, kindName(store.Managed))
	if err != nil {
		return internal("convert table", err)
	}
	if n == 0 {
		return store.Errorf(store.CodeTableNotFound, "managed table %s no longer exists", uuid)
	}
	return nil
}
