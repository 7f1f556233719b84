package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"github.com/lancens/lancens/store"
)

const rootNamespaceID = 1

var _ store.Namespaces = (*DB)(nil)

// displayID renders an identifier for messages.
func displayID(id []string) string {
	if len(id) == 0 {
		return "the root namespace"
	}
	return strings.Join(id, "$")
}

// findNamespace returns the row id of namespace id. Returns NamespaceNotFound
// if any level of it is missing.
func findNamespace(ctx context.Context, tx *Tx, id []string) (int64, error) {
	nsID := int64(rootNamespaceID)
	for i, name := range id {
		err := tx.QueryRowCached(ctx, `SELECT id FROM namespaces WHERE parent_id = ? AND name = ?`, nsID, name).Scan(&nsID)
		if errors.Is(err, sql.ErrNoRows) {
			return 0, store.Errorf(store.CodeNamespaceNotFound, "namespace %s not found", displayID(id[:i+1]))
		}
		if err != nil {
			return 0, internal("find namespace", err)
		}
	}
	return nsID, nil
}

// CreateNamespace implements store.Namespaces.
func (db *DB) CreateNamespace(ctx context.Context, id []string, mode store.CreateMode, properties map[string]string) (*store.Namespace, error) {
	if len(id) == 0 {
		return nil, store.Errorf(store.CodeNamespaceAlreadyExists, "the root namespace always exists")
	}
	if err := store.ValidateID("namespace", id); err != nil {
		return nil, err
	}
	if err := store.ValidateNewName("namespace", id[len(id)-1]); err != nil {
		return nil, err
	}
	props, err := encodeMap(properties)
	if err != nil {
		return nil, err
	}
	var out *store.Namespace
	err = db.write(ctx, func(tx *Tx) error {
		parentID, err := findNamespace(ctx, tx, id[:len(id)-1])
		if err != nil {
			return err
		}
		existing, err := findNamespace(ctx, tx, id)
		switch {
		case err == nil && mode == store.ModeExistOk:
			out, err = describeNamespace(ctx, tx, id, existing)
			return err
		case err == nil && mode == store.ModeCreate:
			return store.Errorf(store.CodeNamespaceAlreadyExists, "namespace %s already exists", displayID(id))
		case err == nil && mode == store.ModeOverwrite:
			if _, err := dropNamespaceTree(ctx, tx, existing); err != nil {
				return err
			}
		case !errors.Is(err, store.ErrNamespaceNotFound):
			return err
		}
		if _, err := tx.ExecCached(ctx, `INSERT INTO namespaces (parent_id, name, properties, created_at) VALUES (?, ?, ?, ?)`,
			parentID, id[len(id)-1], props, tx.Now().UnixMilli()); err != nil {
			if isConstraint(err) {
				return store.Errorf(store.CodeNamespaceAlreadyExists, "namespace %s already exists", displayID(id))
			}
			return internal("insert namespace", err)
		}
		out = &store.Namespace{ID: id, Properties: orEmpty(properties)}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func describeNamespace(ctx context.Context, tx *Tx, id []string, rowID int64) (*store.Namespace, error) {
	var props string
	if err := tx.QueryRowCached(ctx, `SELECT properties FROM namespaces WHERE id = ?`, rowID).Scan(&props); err != nil {
		return nil, internal("describe namespace", err)
	}
	m, err := decodeMap(props)
	if err != nil {
		return nil, err
	}
	return &store.Namespace{ID: id, Properties: m}, nil
}

// ListNamespaces implements store.Namespaces.
func (db *DB) ListNamespaces(ctx context.Context, parent []string, page store.Page) ([]string, string, error) {
	after, err := store.NameAfter(page.Token)
	if err != nil {
		return nil, "", err
	}
	size := store.PageSize(page.Limit)
	var names []string
	err = db.read(ctx, func(tx *Tx) error {
		parentID, err := findNamespace(ctx, tx, parent)
		if err != nil {
			return err
		}
		names, err = queryStrings(ctx, tx, `SELECT name FROM namespaces WHERE parent_id = ? AND name > ? ORDER BY name LIMIT ?`,
			parentID, after, size+1)
		return err
	})
	if err != nil {
		return nil, "", err
	}
	names, next := store.CutNames(names, size)
	return names, next, nil
}

// DescribeNamespace implements store.Namespaces.
func (db *DB) DescribeNamespace(ctx context.Context, id []string) (*store.Namespace, error) {
	var out *store.Namespace
	err := db.read(ctx, func(tx *Tx) error {
		rowID, err := findNamespace(ctx, tx, id)
		if err != nil {
			return err
		}
		out, err = describeNamespace(ctx, tx, id, rowID)
		return err
	})
	return out, err
}

// NamespaceExists implements store.Namespaces.
func (db *DB) NamespaceExists(ctx context.Context, id []string) error {
	return db.read(ctx, func(tx *Tx) error {
		_, err := findNamespace(ctx, tx, id)
		return err
	})
}

// DropNamespace implements store.Namespaces.
func (db *DB) DropNamespace(ctx context.Context, id []string, mode store.DropMode, behavior store.DropBehavior) (*store.Namespace, []string, error) {
	if len(id) == 0 {
		return nil, nil, store.Errorf(store.CodeInvalidInput, "the root namespace cannot be dropped")
	}
	var out *store.Namespace
	var txIDs []string
	err := db.write(ctx, func(tx *Tx) error {
		rowID, err := findNamespace(ctx, tx, id)
		if errors.Is(err, store.ErrNamespaceNotFound) && mode == store.DropSkip {
			return nil
		}
		if err != nil {
			return err
		}
		out, err = describeNamespace(ctx, tx, id, rowID)
		if err != nil {
			return err
		}
		if behavior == store.DropRestrict {
			var children int
			if err := tx.QueryRowCached(ctx, `SELECT (SELECT count(*) FROM namespaces WHERE parent_id = ?)
				+ (SELECT count(*) FROM tables WHERE namespace_id = ?)`, rowID, rowID).Scan(&children); err != nil {
				return internal("count children", err)
			}
			if children > 0 {
				return store.Errorf(store.CodeNamespaceNotEmpty, "namespace %s is not empty", displayID(id))
			}
		}
		txIDs, err = dropNamespaceTree(ctx, tx, rowID)
		return err
	})
	return out, txIDs, err
}

// dropNamespaceTree drops every table under a namespace, at any depth, then
// the namespace itself and, through ON DELETE CASCADE, its descendants. It
// returns the transaction ids of the table drops.
func dropNamespaceTree(ctx context.Context, tx *Tx, rowID int64) ([]string, error) {
	rows, err := tx.QueryCached(ctx, `
		WITH RECURSIVE tree (id, path) AS (
			SELECT id, '' FROM namespaces WHERE id = ?
			UNION ALL
			SELECT n.id, t.path || n.name || char(0) FROM namespaces n JOIN tree t ON n.parent_id = t.id
		)
		SELECT tr.path || t.name, `+tableColumns+` FROM tables t JOIN tree tr ON tr.id = t.namespace_id`, rowID)
	if err != nil {
		return nil, internal("list tables to drop", err)
	}
	var tables []*tableRow
	for rows.Next() {
		var key string
		t, err := scanTable(prefixScanner{rows, &key}, nil)
		if err != nil {
			rows.Close()
			return nil, internal("list tables to drop", err)
		}
		t.ID = strings.Split(key, idKeySeparator)
		tables = append(tables, t)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, internal("list tables to drop", err)
	}
	var txIDs []string
	for _, t := range tables {
		txID, err := dropTable(ctx, tx, t)
		if err != nil {
			return nil, err
		}
		txIDs = append(txIDs, txID)
	}
	if _, err := tx.ExecCached(ctx, `DELETE FROM namespaces WHERE id = ?`, rowID); err != nil {
		return nil, internal("delete namespace", err)
	}
	return txIDs, nil
}

// prefixScanner scans a row's first column into key and the rest with the
// wrapped scanner's caller.
type prefixScanner struct {
	rows interface{ Scan(...any) error }
	key  *string
}

func (p prefixScanner) Scan(dest ...any) error {
	return p.rows.Scan(append([]any{p.key}, dest...)...)
}
