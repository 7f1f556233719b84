package sqlcatalog

import (
	"context"
	"time"

	"github.com/lancens/lancens/store"
)

// The retention of old versions, as the catalog sees it (see
// store.EngineCatalog): a version record is kept while it is the latest of
// its branch, carries a tag, or is the version a branch forks from; the
// others may go. The engine removes what their records went with (the
// manifests and the files no remaining version refers to) after the
// records, so that no reader is sent to a version whose files are gone.

// keptBy is the SQL condition of a version record v that something keeps:
// the latest of its branch, a tagged version, a version a branch forks
// from. It has no parameters.
const keptBy = `(v.version = (SELECT max(l.version) FROM table_versions l WHERE l.table_id = v.table_id AND l.branch = v.branch)
	OR EXISTS (SELECT 1 FROM table_tags g WHERE g.table_id = v.table_id AND g.branch = v.branch AND g.version = v.version)
	OR EXISTS (SELECT 1 FROM table_branches b WHERE b.table_id = v.table_id AND b.parent_branch = v.branch AND b.parent_version = v.version))`

// RecordWork implements store.EngineCatalog.
func (c *Catalog) RecordWork(ctx context.Context, uuid, kind string, status store.TransactionStatus, props map[string]string, payload any) (string, error) {
	var txID string
	err := c.db.Write(ctx, func(tx Tx) error {
		t, err := c.ops.findTableByUUID(ctx, tx, uuid)
		if err != nil {
			return err
		}
		txID, err = c.ops.RecordTx(ctx, tx, kind, &t.Table, status, props, payload)
		return err
	})
	return txID, err
}

// RemoveOldVersions implements store.EngineCatalog.
func (c *Catalog) RemoveOldVersions(ctx context.Context, uuid string, before time.Time) (int64, error) {
	var n int64
	err := c.db.WriteTable(ctx, func(tx Tx) error {
		t, err := c.ops.findTableByUUID(ctx, tx, uuid)
		if err != nil {
			return err
		}
		if err := c.ops.lockTable(ctx, tx, t); err != nil {
			return err
		}
		n, err = tx.Exec(ctx, `DELETE FROM table_versions AS v WHERE v.table_id = ? AND v.timestamp_millis < ? AND NOT `+keptBy,
			t.RowID, before.UnixMilli())
		return internal("remove versions", err)
	})
	return n, err
}

// retainedTables are the queries of the tables QueueVersionCleanups looks
// at (parameters: the cutoff, the job kind), by whether the backend's
// tables record their kind.
var retainedTables = [2]string{
	`SELECT t.uuid FROM tables t WHERE t.owned AND t.managed_versioning AND NOT t.declared
		AND EXISTS (SELECT 1 FROM table_versions v WHERE v.table_id = t.id AND v.timestamp_millis < ? AND NOT ` + keptBy + `)
		AND NOT EXISTS (SELECT 1 FROM transactions x WHERE x.status = 'Queued' AND x.kind = ? AND x.table_uuid = t.uuid)
		ORDER BY t.id`,
	`SELECT t.uuid FROM tables t WHERE t.kind = 'external' AND t.owned AND t.managed_versioning AND NOT t.declared
		AND EXISTS (SELECT 1 FROM table_versions v WHERE v.table_id = t.id AND v.timestamp_millis < ? AND NOT ` + keptBy + `)
		AND NOT EXISTS (SELECT 1 FROM transactions x WHERE x.status = 'Queued' AND x.kind = ? AND x.table_uuid = t.uuid)
		ORDER BY t.id`,
}

// QueueVersionCleanups implements store.EngineCatalog.
func (c *Catalog) QueueVersionCleanups(ctx context.Context, before time.Time) (int, error) {
	var n int
	err := c.db.Write(ctx, func(tx Tx) error {
		n = 0
		o := c.ops
		query := retainedTables[0]
		if o.m != nil {
			query = retainedTables[1]
		}
		uuids, err := QueryStrings(ctx, tx, query, before.UnixMilli(), store.JobCleanupVersions)
		if err != nil {
			return err
		}
		for _, uuid := range uuids {
			t, err := o.findTableByUUID(ctx, tx, uuid)
			if err != nil {
				return err
			}
			if _, err := o.RecordTx(ctx, tx, store.JobCleanupVersions, &t.Table, store.TxQueued, nil,
				store.CleanupVersions{TableUUID: uuid, BeforeMillis: before.UnixMilli()}); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return n, err
}
