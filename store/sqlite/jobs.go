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
	if _, err := tx.ExecCached(ctx, sqlitedb.Const(sqlcatalog.FailDatasetIndexStatement), store.IndexFailed, message, job.IndexUUID, store.IndexBuilding); err != nil {
		return internal("record index failure", err)
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
		if n > 0 {
			tx.queuedJob()
		}
		return nil
	})
	return int(n), err
}
