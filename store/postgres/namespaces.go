package postgres

import (
	"context"
	"errors"
	"strings"

	"github.com/jackc/pgx/v5"

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

// walkNamespaces is a query that follows the names in $1 (text[]) down
// from the root and yields the deepest namespace reached (id) and how many
// names it followed (depth).
const walkNamespaces = `WITH RECURSIVE walk (id, depth) AS (
		SELECT 1::bigint, 0
		UNION ALL
		SELECT n.id, w.depth + 1 FROM walk w JOIN namespaces n ON n.parent_id = w.id AND n.name = ($1::text[])[w.depth + 1]
		WHERE w.depth < cardinality($1::text[])
	)
	SELECT id, depth FROM walk ORDER BY depth DESC LIMIT 1`

// findNamespace returns the row id of namespace id. Returns
// NamespaceNotFound if any level of it is missing.
func findNamespace(ctx context.Context, tx *tx, id []string) (int64, error) {
	var nsID int64
	var depth int
	if err := tx.QueryRow(ctx, walkNamespaces, id).Scan(&nsID, &depth); err != nil {
		return 0, internal("find namespace", err)
	}
	if depth < len(id) {
		return 0, store.Errorf(store.CodeNamespaceNotFound, "namespace %s not found", displayID(id[:depth+1]))
	}
	return nsID, nil
}

func orEmpty(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
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
	var out *store.Namespace
	err := db.write(ctx, func(tx *tx) error {
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
		if _, err := tx.Exec(ctx, `INSERT INTO namespaces (parent_id, name, properties, created_at) VALUES ($1, $2, $3, $4)`,
			parentID, id[len(id)-1], orEmpty(properties), tx.now.UnixMilli()); err != nil {
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

func describeNamespace(ctx context.Context, tx *tx, id []string, rowID int64) (*store.Namespace, error) {
	var props map[string]string
	if err := tx.QueryRow(ctx, `SELECT properties FROM namespaces WHERE id = $1`, rowID).Scan(&props); err != nil {
		return nil, internal("describe namespace", err)
	}
	return &store.Namespace{ID: id, Properties: orEmpty(props)}, nil
}

// ListNamespaces implements store.Namespaces.
func (db *DB) ListNamespaces(ctx context.Context, parent []string, page store.Page) ([]string, string, error) {
	after, err := store.NameAfter(page.Token)
	if err != nil {
		return nil, "", err
	}
	size := store.PageSize(page.Limit)
	var names []string
	err = db.read(ctx, func(tx *tx) error {
		parentID, err := findNamespace(ctx, tx, parent)
		if err != nil {
			return err
		}
		names, err = queryStrings(ctx, tx, `SELECT name FROM namespaces WHERE parent_id = $1 AND name > $2 ORDER BY name LIMIT $3`,
			parentID, after, size+1)
		return err
	})
	if err != nil {
		return nil, "", err
	}
	names, next := store.CutNames(names, size)
	return names, next, nil
}

func queryStrings(ctx context.Context, tx *tx, query string, args ...any) ([]string, error) {
	rows, err := tx.Query(ctx, query, args...)
	if err != nil {
		return nil, internal("query", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, internal("query", err)
	}
	if out == nil {
		out = []string{}
	}
	return out, nil
}

// DescribeNamespace implements store.Namespaces.
func (db *DB) DescribeNamespace(ctx context.Context, id []string) (*store.Namespace, error) {
	var out *store.Namespace
	err := db.read(ctx, func(tx *tx) error {
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
	return db.read(ctx, func(tx *tx) error {
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
	err := db.write(ctx, func(tx *tx) error {
		out, txIDs = nil, nil
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
			var children bool
			if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM namespaces WHERE parent_id = $1)
				OR EXISTS (SELECT 1 FROM tables WHERE namespace_id = $1)`, rowID).Scan(&children); err != nil {
				return internal("count children", err)
			}
			if children {
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
func dropNamespaceTree(ctx context.Context, tx *tx, rowID int64) ([]string, error) {
	rows, err := tx.Query(ctx, `
		WITH RECURSIVE tree (id, path) AS (
			SELECT id, ARRAY[]::text[] COLLATE "C" FROM namespaces WHERE id = $1
			UNION ALL
			SELECT n.id, t.path || n.name::text FROM namespaces n JOIN tree t ON n.parent_id = t.id
		)
		SELECT tr.path || t.name::text, `+tableColumns+` FROM tables t JOIN tree tr ON tr.id = t.namespace_id`, rowID)
	if err != nil {
		return nil, internal("list tables to drop", err)
	}
	tables, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*tableRow, error) {
		var path []string
		t, err := scanTable(prefixScanner{row, &path}, nil)
		if err != nil {
			return nil, err
		}
		t.ID = path
		return t, nil
	})
	if err != nil {
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
	if _, err := tx.Exec(ctx, `DELETE FROM namespaces WHERE id = $1`, rowID); err != nil {
		return nil, internal("delete namespace", err)
	}
	return txIDs, nil
}

// prefixScanner scans a row's first column into key and the rest with the
// wrapped scanner's caller.
type prefixScanner struct {
	row interface{ Scan(...any) error }
	key *[]string
}

func (p prefixScanner) Scan(dest ...any) error {
	return p.row.Scan(append([]any{p.key}, dest...)...)
}
