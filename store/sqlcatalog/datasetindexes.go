package sqlcatalog

import (
	"context"

	"github.com/lancens/lancens/store"
)

// The records of store.DatasetIndexes are the rows of dataset_indexes, one
// per index, keyed by the table's row id and the index's name; they go
// with their table's entry. definition and build are the engine's JSON,
// kept as text.

var _ store.DatasetIndexes = (*Catalog)(nil)

const datasetIndexColumns = `uuid, name, index_type, status, coalesce(error, ''), created_at, built_version, definition, coalesce(build, '')`

func scanDatasetIndex(r Row) (store.DatasetIndex, error) {
	var ix store.DatasetIndex
	var created int64
	if err := r.Scan(&ix.UUID, &ix.Name, &ix.Type, &ix.Status, &ix.Error, &created, &ix.BuiltVersion, &ix.Definition, &ix.Build); err != nil {
		return ix, err
	}
	ix.CreatedAt = msTime(created)
	return ix, nil
}

// findDatasetIndex returns the index of table t named name. Returns
// TableIndexNotFound (6).
func (o *Ops) findDatasetIndex(ctx context.Context, tx Tx, t *Table, name string) (*store.DatasetIndex, error) {
	ix, err := scanDatasetIndex(tx.QueryRow(ctx, `SELECT `+datasetIndexColumns+` FROM dataset_indexes WHERE table_id = ? AND name = ?`, t.RowID, name))
	if o.d.NoRows(err) {
		return nil, store.Errorf(store.CodeTableIndexNotFound, "index %q of table %s not found", name, DisplayID(t.ID))
	}
	if err != nil {
		return nil, internal("find index", err)
	}
	return &ix, nil
}

// CreateDatasetIndex implements store.DatasetIndexes.
func (c *Catalog) CreateDatasetIndex(ctx context.Context, id []string, ix store.DatasetIndex, replace bool, props map[string]string) (string, *store.DatasetIndex, error) {
	var txID string
	var replaced *store.DatasetIndex
	err := c.db.Write(ctx, func(tx Tx) error {
		o := c.ops
		replaced = nil
		t, err := o.FindTable(ctx, tx, id)
		if err != nil {
			return err
		}
		old, err := o.findDatasetIndex(ctx, tx, t, ix.Name)
		switch {
		case err == nil:
			if !replace && old.Status != store.IndexFailed {
				return store.Errorf(store.CodeTableIndexAlreadyExists, "index %q of table %s already exists", ix.Name, DisplayID(id))
			}
			if _, err := tx.Exec(ctx, `DELETE FROM dataset_indexes WHERE table_id = ? AND name = ?`, t.RowID, ix.Name); err != nil {
				return internal("replace index", err)
			}
			replaced = old
		case store.ErrorCode(err) != store.CodeTableIndexNotFound:
			return err
		}
		var build *string
		if ix.Build != "" {
			build = &ix.Build
		}
		if _, err := tx.Exec(ctx, `INSERT INTO dataset_indexes (table_id, name, uuid, index_type, status, error, created_at, built_version,
			definition, build) VALUES (?, ?, ?, ?, ?, NULL, ?, ?, ?, ?)`, t.RowID, ix.Name, ix.UUID, ix.Type, ix.Status,
			tx.Now().UnixMilli(), ix.BuiltVersion, ix.Definition, build); err != nil {
			if o.d.UniqueViolation(err) {
				return conflict(err, store.CodeTableIndexAlreadyExists, "index %q of table %s already exists", ix.Name, DisplayID(id))
			}
			return internal("create index", err)
		}
		if ix.Status == store.IndexBuilding {
			txID, err = o.RecordTx(ctx, tx, store.JobBuildIndex, &t.Table, store.TxQueued, props,
				store.BuildIndex{TableUUID: t.UUID, IndexUUID: ix.UUID})
			return err
		}
		txID, err = o.RecordTx(ctx, tx, "CreateTableIndex", &t.Table, store.TxSucceeded, props, nil)
		return err
	})
	return txID, replaced, err
}

// ListDatasetIndexes implements store.DatasetIndexes.
func (c *Catalog) ListDatasetIndexes(ctx context.Context, id []string) ([]store.DatasetIndex, error) {
	var out []store.DatasetIndex
	err := c.readTable(ctx, id, func(tx Tx, t *Table) (err error) {
		out, err = queryRows(ctx, tx, scanDatasetIndex, `SELECT `+datasetIndexColumns+` FROM dataset_indexes WHERE table_id = ? ORDER BY name`, t.RowID)
		return internal("list indexes", err)
	})
	return out, err
}

// FindDatasetIndex implements store.DatasetIndexes.
func (c *Catalog) FindDatasetIndex(ctx context.Context, uuid string) ([]string, *store.DatasetIndex, error) {
	var id []string
	var out *store.DatasetIndex
	err := c.db.Read(ctx, func(tx Tx) error {
		var tableUUID string
		ix, err := scanDatasetIndex(tx.QueryRow(ctx, `SELECT `+datasetIndexColumns+` FROM dataset_indexes WHERE uuid = ?`, uuid))
		if c.ops.d.NoRows(err) {
			return store.Errorf(store.CodeTableIndexNotFound, "index %s no longer exists", uuid)
		}
		if err != nil {
			return internal("find index", err)
		}
		if err := tx.QueryRow(ctx, `SELECT t.uuid FROM tables t JOIN dataset_indexes i ON i.table_id = t.id WHERE i.uuid = ?`,
			uuid).Scan(&tableUUID); err != nil {
			return internal("find index", err)
		}
		if id, err = c.ops.TableIDByUUID(ctx, tx, tableUUID); err != nil {
			return err
		}
		out = &ix
		return nil
	})
	return id, out, err
}

// FinishDatasetIndex implements store.DatasetIndexes.
func (c *Catalog) FinishDatasetIndex(ctx context.Context, uuid string, version int64, build string) error {
	return c.db.Write(ctx, func(tx Tx) error {
		n, err := tx.Exec(ctx, `UPDATE dataset_indexes SET status = ?, error = NULL, built_version = coalesce(built_version, ?), build = ?
			WHERE uuid = ?`, store.IndexSucceeded, version, build, uuid)
		if err != nil {
			return internal("record index build", err)
		}
		if n == 0 {
			return store.Errorf(store.CodeTableIndexNotFound, "index %s was dropped or replaced while it was built", uuid)
		}
		return nil
	})
}

// RebuildDatasetIndex implements store.DatasetIndexes.
func (c *Catalog) RebuildDatasetIndex(ctx context.Context, id []string, uuid string, props map[string]string) (string, error) {
	var txID string
	err := c.db.Write(ctx, func(tx Tx) error {
		t, err := c.ops.FindTable(ctx, tx, id)
		if err != nil {
			return err
		}
		n, err := tx.Exec(ctx, `UPDATE dataset_indexes SET status = ?, error = NULL WHERE table_id = ? AND uuid = ?`,
			store.IndexBuilding, t.RowID, uuid)
		if err != nil {
			return internal("rebuild index", err)
		}
		if n == 0 {
			return store.Errorf(store.CodeTableIndexNotFound, "table %s has no index %s", DisplayID(id), uuid)
		}
		txID, err = c.ops.RecordTx(ctx, tx, store.JobBuildIndex, &t.Table, store.TxQueued, props,
			store.BuildIndex{TableUUID: t.UUID, IndexUUID: uuid})
		return err
	})
	return txID, err
}

// DropDatasetIndex implements store.DatasetIndexes.
func (c *Catalog) DropDatasetIndex(ctx context.Context, id []string, name string) (string, *store.DatasetIndex, error) {
	var txID string
	var dropped *store.DatasetIndex
	err := c.db.Write(ctx, func(tx Tx) error {
		o := c.ops
		t, err := o.FindTable(ctx, tx, id)
		if err != nil {
			return err
		}
		if dropped, err = o.findDatasetIndex(ctx, tx, t, name); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM dataset_indexes WHERE table_id = ? AND name = ?`, t.RowID, name); err != nil {
			return internal("drop index", err)
		}
		txID, err = o.RecordTx(ctx, tx, "DropTableIndex", &t.Table, store.TxSucceeded, map[string]string{"index": name}, nil)
		return err
	})
	return txID, dropped, err
}

// FailDatasetIndexStatement marks the index a failed build job was
// building FAILED (parameters: the status, the error, the index uuid, the
// building status), unless it was dropped, replaced or built meanwhile:
// for the backends' Jobs.FinishJob, in the transaction that ends the job.
const FailDatasetIndexStatement = `UPDATE dataset_indexes SET status = ?, error = ? WHERE uuid = ? AND status = ?`
