package sqlcatalog

import (
	"context"
	"errors"
	"strings"

	"github.com/lancens/lancens/store"
)

// findNamespace returns the row id of namespace id. Returns
// NamespaceNotFound (1) naming the first level of it that is missing.
func (o *Ops) findNamespace(ctx context.Context, tx Tx, id []string) (int64, error) {
	rowID, depth, err := o.d.WalkNamespaces(ctx, tx, id)
	if err != nil {
		return 0, internal("find namespace", err)
	}
	if depth < len(id) {
		return 0, store.Errorf(store.CodeNamespaceNotFound, "namespace %s not found", DisplayID(id[:depth+1]))
	}
	return rowID, nil
}

// CreateNamespace implements store.Namespaces.
func (c *Catalog) CreateNamespace(ctx context.Context, id []string, mode store.CreateMode, properties map[string]string) (*store.Namespace, error) {
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
	err = c.db.Write(ctx, func(tx Tx) error {
		o := c.ops
		parentID, err := o.findNamespace(ctx, tx, id[:len(id)-1])
		if err != nil {
			return err
		}
		existing, err := o.findNamespace(ctx, tx, id)
		switch {
		case err == nil && mode == store.ModeExistOk:
			out, err = o.describeNamespace(ctx, tx, id, existing)
			return err
		case err == nil && mode == store.ModeCreate:
			return store.Errorf(store.CodeNamespaceAlreadyExists, "namespace %s already exists", DisplayID(id))
		case err == nil && mode == store.ModeOverwrite:
			if _, err := o.dropNamespaceTree(ctx, tx, id, existing); err != nil {
				return err
			}
		case !errors.Is(err, store.ErrNamespaceNotFound):
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO namespaces (parent_id, name, properties, created_at) VALUES (?, ?, ?, ?)`,
			parentID, id[len(id)-1], props, tx.Now().UnixMilli()); err != nil {
			if o.d.UniqueViolation(err) {
				return conflict(err, store.CodeNamespaceAlreadyExists, "namespace %s already exists", DisplayID(id))
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

func (o *Ops) describeNamespace(ctx context.Context, tx Tx, id []string, rowID int64) (*store.Namespace, error) {
	var props string
	if err := tx.QueryRow(ctx, `SELECT properties FROM namespaces WHERE id = ?`, rowID).Scan(&props); err != nil {
		return nil, internal("describe namespace", err)
	}
	m, err := decodeMap(props)
	if err != nil {
		return nil, err
	}
	return &store.Namespace{ID: id, Properties: m}, nil
}

// ListNamespaces implements store.Namespaces.
func (c *Catalog) ListNamespaces(ctx context.Context, parent []string, page store.Page) ([]string, string, error) {
	return c.listNames(ctx, parent, page, `SELECT name FROM namespaces WHERE parent_id = ? AND name > ? ORDER BY name LIMIT ?`)
}

// listNames returns a page of the names query lists in namespace ns. Its
// parameters are the namespace's row id, the name to resume after, those
// of filter, and the number of names to read.
func (c *Catalog) listNames(ctx context.Context, ns []string, page store.Page, query string, filter ...any) ([]string, string, error) {
	after, err := store.NameAfter(page.Token)
	if err != nil {
		return nil, "", err
	}
	size := store.PageSize(page.Limit)
	var names []string
	err = c.db.Read(ctx, func(tx Tx) error {
		nsID, err := c.ops.findNamespace(ctx, tx, ns)
		if err != nil {
			return err
		}
		args := append(append([]any{nsID, after}, filter...), size+1)
		names, err = QueryStrings(ctx, tx, query, args...)
		return err
	})
	if err != nil {
		return nil, "", err
	}
	names, next := store.CutNames(names, size)
	return names, next, nil
}

// DescribeNamespace implements store.Namespaces.
func (c *Catalog) DescribeNamespace(ctx context.Context, id []string) (*store.Namespace, error) {
	var out *store.Namespace
	err := c.db.Read(ctx, func(tx Tx) error {
		rowID, err := c.ops.findNamespace(ctx, tx, id)
		if err != nil {
			return err
		}
		out, err = c.ops.describeNamespace(ctx, tx, id, rowID)
		return err
	})
	return out, err
}

// NamespaceExists implements store.Namespaces.
func (c *Catalog) NamespaceExists(ctx context.Context, id []string) error {
	return c.db.Read(ctx, func(tx Tx) error {
		_, err := c.ops.findNamespace(ctx, tx, id)
		return err
	})
}

// DropNamespace implements store.Namespaces.
func (c *Catalog) DropNamespace(ctx context.Context, id []string, mode store.DropMode, behavior store.DropBehavior) (*store.Namespace, []string, error) {
	if len(id) == 0 {
		return nil, nil, store.Errorf(store.CodeInvalidInput, "the root namespace cannot be dropped")
	}
	var out *store.Namespace
	var txIDs []string
	err := c.db.Write(ctx, func(tx Tx) error {
		o := c.ops
		out, txIDs = nil, nil
		rowID, err := o.findNamespace(ctx, tx, id)
		if errors.Is(err, store.ErrNamespaceNotFound) && mode == store.DropSkip {
			return nil
		}
		if err != nil {
			return err
		}
		out, err = o.describeNamespace(ctx, tx, id, rowID)
		if err != nil {
			return err
		}
		if behavior == store.DropRestrict {
			var children bool
			if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM namespaces WHERE parent_id = ?)
				OR EXISTS (SELECT 1 FROM tables WHERE namespace_id = ?)`, rowID, rowID).Scan(&children); err != nil {
				return internal("count children", err)
			}
			if children {
				return store.Errorf(store.CodeNamespaceNotEmpty, "namespace %s is not empty", DisplayID(id))
			}
		}
		txIDs, err = o.dropNamespaceTree(ctx, tx, id, rowID)
		return err
	})
	return out, txIDs, err
}

// dropNamespaceTree drops every table under namespace id (row rowID), at
// any depth, then the namespace itself and, through ON DELETE CASCADE, its
// descendants. It returns the transaction ids of the table drops.
func (o *Ops) dropNamespaceTree(ctx context.Context, tx Tx, id []string, rowID int64) ([]string, error) {
	rows, err := tx.Query(ctx, o.q.tablesUnder, rowID, idSeparator)
	if err != nil {
		return nil, internal("list tables to drop", err)
	}
	var tables []*Table
	for rows.Next() {
		var path string
		t, err := scanTable(rows, &path)
		if err != nil {
			rows.Close()
			return nil, internal("list tables to drop", err)
		}
		t.ID = append(append([]string(nil), id...), strings.Split(path, idSeparator)...)
		tables = append(tables, t)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, internal("list tables to drop", err)
	}
	var txIDs []string
	for _, t := range tables {
		txID, err := o.dropTable(ctx, tx, t)
		if err != nil {
			return nil, err
		}
		txIDs = append(txIDs, txID)
	}
	if _, err := tx.Exec(ctx, `DELETE FROM namespaces WHERE id = ?`, rowID); err != nil {
		return nil, internal("delete namespace", err)
	}
	return txIDs, nil
}
