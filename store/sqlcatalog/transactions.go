package sqlcatalog

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/lancens/lancens/store"
)

// RecordTx records a transaction of the given kind about table t (nil for
// none) and returns its id. props are added to the standard properties
// (operation, table, table_uuid); payload, when not nil, is the input of a
// queued job, which the transaction leaves queued when status is
// TxQueued. It returns the database's error, or Tx.JobQueued's.
func (o *Ops) RecordTx(ctx context.Context, tx Tx, kind string, t *store.Table, status store.TransactionStatus, props map[string]string, payload any) (string, error) {
	all := map[string]string{"operation": kind}
	var tableUUID *string
	if t != nil {
		all["table"] = DisplayID(t.ID)
		all["table_uuid"] = t.UUID
		tableUUID = &t.UUID
	}
	for k, v := range props {
		all[k] = v
	}
	propsJSON, err := encodeMap(all)
	if err != nil {
		return "", err
	}
	payloadJSON := []byte("{}")
	if payload != nil {
		if payloadJSON, err = json.Marshal(payload); err != nil {
			return "", internal("encode job payload", err)
		}
	}
	id := NewUUID()
	now := tx.Now().UnixMilli()
	if _, err := tx.Exec(ctx, `INSERT INTO transactions (id, kind, status, table_uuid, properties, payload, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, id, kind, string(status), tableUUID, propsJSON, string(payloadJSON), now, now); err != nil {
		return "", internal("record transaction", err)
	}
	if status == store.TxQueued {
		if err := tx.JobQueued(ctx); err != nil {
			return "", err
		}
	}
	return id, nil
}

// findTransaction resolves a transaction identifier: a transaction id
// (the last name), or a table identifier followed by a version number, which
// names the transaction that committed that version on main.
func (o *Ops) findTransaction(ctx context.Context, tx Tx, id []string) (string, error) {
	notFound := store.Errorf(store.CodeTransactionNotFound, "transaction %s not found", DisplayID(id))
	if len(id) == 0 {
		return "", notFound
	}
	var txID string
	err := tx.QueryRow(ctx, `SELECT id FROM transactions WHERE id = ?`, id[len(id)-1]).Scan(&txID)
	if err == nil {
		return txID, nil
	}
	if !o.d.NoRows(err) {
		return "", internal("find transaction", err)
	}
	v, convErr := strconv.ParseInt(id[len(id)-1], 10, 64)
	if convErr != nil || len(id) < 2 {
		return "", notFound
	}
	t, err := o.FindTable(ctx, tx, id[:len(id)-1])
	if err != nil {
		return "", notFound
	}
	err = tx.QueryRow(ctx, `SELECT transaction_id FROM table_versions WHERE table_id = ? AND branch = '' AND version = ?`,
		t.RowID, v).Scan(&txID)
	if o.d.NoRows(err) {
		return "", notFound
	}
	if err != nil {
		return "", internal("find version transaction", err)
	}
	return txID, nil
}

func (o *Ops) loadTransaction(ctx context.Context, tx Tx, txID string) (*store.Transaction, error) {
	var status, props string
	var tableUUID *string
	if err := tx.QueryRow(ctx, `SELECT status, properties, table_uuid FROM transactions WHERE id = ?`, txID).
		Scan(&status, &props, &tableUUID); err != nil {
		return nil, internal("load transaction", err)
	}
	m, err := decodeMap(props)
	if err != nil {
		return nil, err
	}
	out := &store.Transaction{ID: txID, Status: store.TransactionStatus(status), Properties: m}
	if tableUUID != nil {
		id, err := o.TableIDByUUID(ctx, tx, *tableUUID)
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
func (c *Catalog) DescribeTransaction(ctx context.Context, id []string) (*store.Transaction, error) {
	var out *store.Transaction
	err := c.db.Read(ctx, func(tx Tx) error {
		txID, err := c.ops.findTransaction(ctx, tx, id)
		if err != nil {
			return err
		}
		out, err = c.ops.loadTransaction(ctx, tx, txID)
		return err
	})
	return out, err
}

// AlterTransaction implements store.Transactions.
func (c *Catalog) AlterTransaction(ctx context.Context, id []string, actions []store.TransactionAction) (*store.Transaction, error) {
	if len(actions) == 0 {
		return nil, store.Errorf(store.CodeInvalidInput, "at least one action is required")
	}
	var out *store.Transaction
	err := c.db.Write(ctx, func(tx Tx) error {
		txID, err := c.ops.findTransaction(ctx, tx, id)
		if err != nil {
			return err
		}
		t, err := c.ops.loadTransaction(ctx, tx, txID)
		if err != nil {
			return err
		}
		for i, a := range actions {
			if err := t.Apply(a); err != nil {
				return fmt.Errorf("action %d: %w", i, err)
			}
		}
		props, err := encodeMap(t.Properties)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE transactions SET status = ?, properties = ?, updated_at = ? WHERE id = ?`,
			string(t.Status), props, tx.Now().UnixMilli(), txID); err != nil {
			return internal("alter transaction", err)
		}
		if t.Status == store.TxQueued {
			if err := tx.JobQueued(ctx); err != nil {
				return err
			}
		}
		out = t
		return nil
	})
	return out, err
}

// PendingJobs implements the part of store.Probe the catalog answers: the
// jobs Queued or Running, by kind and status (only the non-zero counts),
// from the partial index of pending transactions.
func (c *Catalog) PendingJobs(ctx context.Context) ([]store.JobCount, error) {
	var out []store.JobCount
	err := c.db.Read(ctx, func(tx Tx) (err error) {
		out, err = queryRows(ctx, tx, func(r Row) (j store.JobCount, err error) {
			var status string
			err = r.Scan(&j.Kind, &status, &j.Count)
			j.Status = store.TransactionStatus(status)
			return j, err
		}, `SELECT kind, status, count(*) FROM transactions
			WHERE status IN ('Queued', 'Running') GROUP BY kind, status ORDER BY kind, status`)
		return internal("count jobs", err)
	})
	return out, err
}
