package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"

	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/store/sqlcatalog"
	"github.com/lancens/lancens/store/sqlite/internal/sqlitedb"
)

var _ store.Jobs = (*DB)(nil)

// ClaimJob implements store.Jobs.
func (db *DB) ClaimJob(ctx context.Context, kinds ...string) (*store.Job, error) {
	var out *store.Job
	err := db.write(ctx, func(tx *Tx) error {
		for _, kind := range kinds {
			var j store.Job
			var payload string
			err := tx.QueryRowCached(ctx, `SELECT id, kind, payload FROM transactions WHERE status = 'Queued' AND kind = ?
				ORDER BY created_at, id LIMIT 1`, kind).Scan(&j.TransactionID, &j.Kind, &payload)
			if errors.Is(err, sql.ErrNoRows) {
				continue
			}
			if err != nil {
				return internal("claim job", err)
			}
			if _, err := tx.ExecCached(ctx, `UPDATE transactions SET status = 'Running', updated_at = ? WHERE id = ?`,
				tx.Now().UnixMilli(), j.TransactionID); err != nil {
				return internal("claim job", err)
			}
			j.Payload = json.RawMessage(payload)
			out = &j
			return nil
		}
		return nil
	})
	return out, err
}

// FinishJob implements store.Jobs.
func (db *DB) FinishJob(ctx context.Context, transactionID string, jobErr error) error {
	return db.write(ctx, func(tx *Tx) error {
		var kind, payload string
		err := tx.QueryRowCached(ctx, `SELECT kind, payload FROM transactions WHERE id = ? AND status = 'Running'`, transactionID).Scan(&kind, &payload)
		if errors.Is(err, sql.ErrNoRows) {
			return store.Errorf(store.CodeTransactionNotFound, "no running job %s", transactionID)
		}
		if err != nil {
			return internal("finish job", err)
		}
		status, patch := store.TxSucceeded, "{}"
		if jobErr != nil {
			status = store.TxFailed
			b, _ := json.Marshal(map[string]string{"error": jobErr.Error()})
			patch = string(b)
			if kind == store.JobBuildIndex {
				if err := failIndex(ctx, tx, payload, jobErr.Error()); err != nil {
					return err
				}
			}
		}
		if _, err := tx.ExecCached(ctx, `UPDATE transactions SET status = ?, properties = json_patch(properties, ?), updated_at = ?
			WHERE id = ?`, string(status), patch, tx.Now().UnixMilli(), transactionID); err != nil {
			return internal("finish job", err)
		}
		return nil
	})
}

// failIndex marks the index a build job (payload) was building FAILED with
// message, unless it was dropped, replaced or built meanwhile.
func failIndex(ctx context.Context, tx *Tx, payload, message string) error {
	var job store.BuildIndex
	if err := json.Unmarshal([]byte(payload), &job); err != nil {
		return nil // nothing names the index
	}
	for _, q := range []sqlitedb.Const{`UPDATE table_indexes SET status = ?, error = ? WHERE uuid = ? AND status = ?`, sqlcatalog.FailDatasetIndexStatement} {
		if _, err := tx.ExecCached(ctx, q, store.IndexFailed, message, job.IndexUUID, store.IndexBuilding); err != nil {
			return internal("record index failure", err)
		}
	}
	return nil
}

// ReleaseJob implements store.Jobs.
func (db *DB) ReleaseJob(ctx context.Context, transactionID string) error {
	return db.write(ctx, func(tx *Tx) error {
		res, err := tx.ExecCached(ctx, `UPDATE transactions SET status = 'Queued', updated_at = ? WHERE id = ? AND status = 'Running'`,
			tx.Now().UnixMilli(), transactionID)
		if err != nil {
			return internal("release job", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return store.Errorf(store.CodeTransactionNotFound, "no running job %s", transactionID)
		}
		tx.queuedJob()
		return nil
	})
}

// RecoverJobs implements store.Jobs.
func (db *DB) RecoverJobs(ctx context.Context) (int, error) {
	var n int64
	err := db.write(ctx, func(tx *Tx) error {
		res, err := tx.ExecCached(ctx, `UPDATE transactions SET status = 'Queued', updated_at = ? WHERE status = 'Running'`, tx.Now().UnixMilli())
		if err != nil {
			return internal("requeue jobs", err)
		}
		if n, err = res.RowsAffected(); err != nil {
			return internal("requeue jobs", err)
		}
		orphans, err := unbuiltIndexes(ctx, tx)
		if err != nil {
			return err
		}
		for _, o := range orphans {
			if err := queueBuild(ctx, tx, o); err != nil {
				return err
			}
			n++
		}
		if n > 0 {
			tx.queuedJob()
		}
		return nil
	})
	return int(n), err
}

// orphanIndex is an index left BUILDING with no job to build it.
type orphanIndex struct {
	tableUUID, indexUUID, name, indexType, column string
}

// unbuiltIndexes returns the vector indexes left BUILDING with no queued or
// running build job: the job ended without recording it on the index (a
// shutdown used to fail the job and leave the index so), or was altered.
func unbuiltIndexes(ctx context.Context, tx *Tx) ([]orphanIndex, error) {
	rows, err := tx.QueryCached(ctx, `SELECT t.uuid, i.uuid, i.name, i.index_type, i.column_path
		FROM table_indexes i JOIN tables t ON t.id = i.table_id
		WHERE i.status = ? AND i.index_type LIKE 'IVF\_%' ESCAPE '\' AND NOT EXISTS (
			SELECT 1 FROM transactions x WHERE x.status IN ('Queued', 'Running') AND x.kind = ?
			AND json_extract(x.payload, '$.index_uuid') = i.uuid)
		ORDER BY i.id`, store.IndexBuilding, store.JobBuildIndex)
	if err != nil {
		return nil, internal("find unbuilt indexes", err)
	}
	defer rows.Close()
	var out []orphanIndex
	for rows.Next() {
		var o orphanIndex
		if err := rows.Scan(&o.tableUUID, &o.indexUUID, &o.name, &o.indexType, &o.column); err != nil {
			return nil, internal("find unbuilt indexes", err)
		}
		out = append(out, o)
	}
	return out, rows.Err()
}

// queueBuild records a new build job for orphan index o.
func queueBuild(ctx context.Context, tx *Tx, o orphanIndex) error {
	id, err := tableIDByUUID(ctx, tx, o.tableUUID)
	if err != nil {
		return err
	}
	t, err := findManaged(ctx, tx, id)
	if err != nil {
		return err
	}
	props := map[string]string{"index": o.name, "index_type": o.indexType, "column": o.column}
	_, err = recordTx(ctx, tx, store.JobBuildIndex, &t.Table, store.TxQueued, props, store.BuildIndex{TableUUID: o.tableUUID, IndexUUID: o.indexUUID})
	return err
}
