package sqlcatalog

import (
	"context"
	"fmt"
	"strconv"

	"github.com/lancens/lancens/store"
)

// CommitBatch implements store.Batches.
func (c *Catalog) CommitBatch(ctx context.Context, ops []store.BatchOperation) ([]store.BatchResult, string, error) {
	if err := store.ValidateBatch(ops); err != nil {
		return nil, "", err
	}
	var results []store.BatchResult
	var txID string
	err := c.db.Write(ctx, func(tx Tx) error {
		var err error
		txID, err = c.ops.RecordTx(ctx, tx, "BatchCommitTables", nil, store.TxSucceeded,
			map[string]string{"operations": strconv.Itoa(len(ops))}, nil)
		if err != nil {
			return err
		}
		results = make([]store.BatchResult, len(ops))
		for i, op := range ops {
			if results[i], err = c.ops.applyBatchOperation(ctx, tx, op, txID); err != nil {
				return fmt.Errorf("operation %d: %w", i, err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, "", err
	}
	return results, txID, nil
}

func (o *Ops) applyBatchOperation(ctx context.Context, tx Tx, op store.BatchOperation, txID string) (store.BatchResult, error) {
	var r store.BatchResult
	if op.Declare != nil {
		t, err := o.declareTable(ctx, tx, op.ID, *op.Declare)
		r.Table = t
		return r, err
	}
	if op.Deregister {
		t, err := o.deregisterTable(ctx, tx, op.ID)
		r.Table = t
		return r, err
	}
	t, err := o.FindTable(ctx, tx, op.ID)
	if err != nil {
		return r, err
	}
	if op.CommitVersion != nil {
		r.Version, _, err = o.commitVersion(ctx, tx, t, *op.CommitVersion, txID)
		return r, err
	}
	r.DeletedCount, err = o.deleteVersions(ctx, tx, t, op.DeleteVersions.Branch, op.DeleteVersions.Ranges)
	return r, err
}
