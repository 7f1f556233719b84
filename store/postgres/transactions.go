package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/lancens/lancens/store"
)

var _ store.Transactions = (*DB)(nil)

// recordTx records a transaction of the given kind about table t (may be
// nil) and returns its id. props are added to the standard properties
// (operation, table, table_uuid); payload, when not nil, is the input of a
// queued job.
func recordTx(ctx context.Context, tx *tx, kind string, t *store.Table, status store.TransactionStatus, props map[string]string, payload any) (string, error) {
	all := map[string]string{"operation": kind}
	var tableUUID *string
	if t != nil {
		all["table"] = displayID(t.ID)
		all["table_uuid"] = t.UUID
		tableUUID = &t.UUID
	}
	for k, v := range props {
		all[k] = v
	}
	if payload == nil {
		payload = struct{}{}
	}
	id := newUUID()
	if _, err := tx.Exec(ctx, `INSERT INTO transactions (id, kind, status, table_uuid, properties, payload, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $7)`, id, kind, string(status), tableUUID, all, payload, tx.now.UnixMilli()); err != nil {
		return "", internal("record transaction", err)
	}
	if status == store.TxQueued {
		if err := tx.queueJob(ctx); err != nil {
			return "", err
		}
	}
	return id, nil
}

// findTransaction resolves a transaction identifier: a transaction id
// (the last name), or a table identifier followed by a version number, which
// names the transaction that committed that version on main.
func findTransaction(ctx context.Context, tx *tx, id []string) (string, error) {
	notFound := store.Errorf(store.CodeTransactionNotFound, "transaction %s not found", displayID(id))
	if len(id) == 0 {
		return "", notFound
	}
	var txID string
	err := tx.QueryRow(ctx, `SELECT id FROM transactions WHERE id = $1`, id[len(id)-1]).Scan(&txID)
	if err == nil {
		return txID, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return "", internal("find transaction", err)
	}
	v, convErr := strconv.ParseInt(id[len(id)-1], 10, 64)
	if convErr != nil || len(id) < 2 {
		return "", notFound
	}
	t, err := findTable(ctx, tx, id[:len(id)-1])
	if err != nil {
		return "", notFound
	}
	err = tx.QueryRow(ctx, `SELECT transaction_id FROM table_versions WHERE table_id = $1 AND branch = '' AND version = $2`, t.rowID, v).Scan(&txID)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", notFound
	}
	if err != nil {
		return "", internal("find version transaction", err)
	}
	return txID, nil
}

func loadTransaction(ctx context.Context, tx *tx, txID string) (*store.Transaction, error) {
	var status string
	var props map[string]string
	var tableUUID *string
	if err := tx.QueryRow(ctx, `SELECT status, properties, table_uuid FROM transactions WHERE id = $1`, txID).Scan(&status, &props, &tableUUID); err != nil {
		return nil, internal("load transaction", err)
	}
	out := &store.Transaction{ID: txID, Status: store.TransactionStatus(status), Properties: orEmpty(props)}
	if tableUUID != nil {
		id, err := tableIDByUUID(ctx, tx, *tableUUID)
		switch {
		case err == nil:
			out.Table = id
		case store.ErrorCode(err) != store.CodeTableNotFound:
			return nil, err
		}
	}
	return out, nil
}

// DescribeTransaction implements store.Transactions.
func (db *DB) DescribeTransaction(ctx context.Context, id []string) (*store.Transaction, error) {
	var out *store.Transaction
	err := db.read(ctx, func(tx *tx) error {
		txID, err := findTransaction(ctx, tx, id)
		if err != nil {
			return err
		}
		out, err = loadTransaction(ctx, tx, txID)
		return err
	})
	return out, err
}

// AlterTransaction implements store.Transactions.
func (db *DB) AlterTransaction(ctx context.Context, id []string, actions []store.TransactionAction) (*store.Transaction, error) {
	if len(actions) == 0 {
		return nil, store.Errorf(store.CodeInvalidInput, "at least one action is required")
	}
	var out *store.Transaction
	err := db.write(ctx, func(tx *tx) error {
		txID, err := findTransaction(ctx, tx, id)
		if err != nil {
			return err
		}
		t, err := loadTransaction(ctx, tx, txID)
		if err != nil {
			return err
		}
		for i, a := range actions {
			if err := t.Apply(a); err != nil {
				return fmt.Errorf("action %d: %w", i, err)
			}
		}
		if _, err := tx.Exec(ctx, `UPDATE transactions SET status = $1, properties = $2, updated_at = $3 WHERE id = $4`,
			string(t.Status), t.Properties, tx.now.UnixMilli(), txID); err != nil {
			return internal("alter transaction", err)
		}
		if t.Status == store.TxQueued {
			if err := tx.queueJob(ctx); err != nil {
				return err
			}
		}
		out = t
		return nil
	})
	return out, err
}
