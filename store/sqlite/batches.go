package sqlite

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/lancens/lancens/store"
)

var _ store.Batches = (*DB)(nil)

// checkBatch rejects malformed batches before anything is applied: every
// operation must set exactly one kind and name a table, and no table may be
// declared twice nor one version committed twice.
func checkBatch(ops []store.BatchOperation) error {
	seen := map[string]int{}
	for i, op := range ops {
		kinds := 0
		for _, set := range []bool{op.Declare != nil, op.CommitVersion != nil, op.DeleteVersions != nil, op.Deregister} {
			if set {
				kinds++
			}
		}
		if kinds != 1 {
			return store.Errorf(store.CodeInvalidInput, "operation %d must set exactly one operation, not %d", i, kinds)
		}
		if err := checkTableID(op.ID); err != nil {
			return fmt.Errorf("operation %d: %w", i, err)
		}
		key := ""
		switch {
		case op.Declare != nil:
			key = "declare"
		case op.CommitVersion != nil:
			key = "version:" + op.CommitVersion.Branch + ":" + strconv.FormatInt(op.CommitVersion.Version, 10)
		default:
			continue
		}
		key += "\x00" + strings.Join(op.ID, idKeySeparator)
		if j, dup := seen[key]; dup {
			return store.Errorf(store.CodeInvalidInput, "operations %d and %d do the same thing to table %s", j, i, displayID(op.ID))
		}
		seen[key] = i
	}
	return nil
}

// CommitBatch implements store.Batches.
func (db *DB) CommitBatch(ctx context.Context, ops []store.BatchOperation) ([]store.BatchResult, string, error) {
	if err := checkBatch(ops); err != nil {
		return nil, "", err
	}
	var results []store.BatchResult
	var txID string
	err := db.write(ctx, func(tx *Tx) error {
		var err error
		txID, err = recordTx(ctx, tx, "BatchCommitTables", nil, store.TxSucceeded,
			map[string]string{"operations": strconv.Itoa(len(ops))}, nil)
		if err != nil {
			return err
		}
		results = make([]store.BatchResult, len(ops))
		for i, op := range ops {
			if results[i], err = applyBatchOperation(ctx, tx, op, txID); err != nil {
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

func applyBatchOperation(ctx context.Context, tx *Tx, op store.BatchOperation, txID string) (store.BatchResult, error) {
	var r store.BatchResult
	if op.Declare != nil {
		t, err := declareTable(ctx, tx, op.ID, *op.Declare)
		r.Table = t
		return r, err
	}
	if op.Deregister {
		t, err := deregisterTable(ctx, tx, op.ID)
		r.Table = t
		return r, err
	}
	t, err := findTable(ctx, tx, op.ID)
	if err != nil {
		return r, err
	}
	if op.CommitVersion != nil {
		r.Version, _, err = commitVersion(ctx, tx, t, *op.CommitVersion, txID)
		return r, err
	}
	r.DeletedCount, err = deleteVersions(ctx, tx, t, op.DeleteVersions.Branch, op.DeleteVersions.Ranges)
	return r, err
}
