package sqlcatalog

import (
	"context"
	"errors"
	"strconv"

	"github.com/lancens/lancens/store"
)

// ListTags implements store.Tags.
func (c *Catalog) ListTags(ctx context.Context, id []string, page store.Page) ([]store.Tag, string, error) {
	return listByName(ctx, c, id, page, func(g store.Tag) string { return g.Name }, func(r Row) (g store.Tag, err error) {
		return g, r.Scan(&g.Name, &g.Branch, &g.Version, &g.ManifestSize)
	}, `SELECT g.name, g.branch, g.version, coalesce(v.manifest_size, 0)
		FROM table_tags g LEFT JOIN table_versions v ON v.table_id = g.table_id AND v.branch = g.branch AND v.version = g.version
		WHERE g.table_id = ? AND g.name > ? ORDER BY g.name LIMIT ?`)
}

// listByName returns a page of what query lists of table id, sorted by
// name: its parameters are the table's row id, the name to resume after
// and the number of rows to read; scan reads a row.
func listByName[T any](ctx context.Context, c *Catalog, id []string, page store.Page, name func(T) string,
	scan func(Row) (T, error), query string) ([]T, string, error) {
	after, err := store.DecodePageToken(page.Token)
	if err != nil {
		return nil, "", err
	}
	size := store.PageSize(page.Limit)
	var out []T
	err = c.readTable(ctx, id, func(tx Tx, t *Table) (err error) {
		out, err = queryRows(ctx, tx, scan, query, t.RowID, after, size+1)
		return internal("list", err)
	})
	if err != nil {
		return nil, "", err
	}
	out, next := store.CutPage(out, size, name)
	return out, next, nil
}

func (o *Ops) getTag(ctx context.Context, tx Tx, t *Table, name string) (*store.Tag, error) {
	g := store.Tag{Name: name}
	err := tx.QueryRow(ctx, `SELECT g.branch, g.version, coalesce(v.manifest_size, 0)
		FROM table_tags g LEFT JOIN table_versions v ON v.table_id = g.table_id AND v.branch = g.branch AND v.version = g.version
		WHERE g.table_id = ? AND g.name = ?`, t.RowID, name).Scan(&g.Branch, &g.Version, &g.ManifestSize)
	if o.d.NoRows(err) {
		return nil, store.Errorf(store.CodeTableTagNotFound, "tag %q of table %s not found", name, DisplayID(t.ID))
	}
	if err != nil {
		return nil, internal("get tag", err)
	}
	return &g, nil
}

// GetTag implements store.Tags.
func (c *Catalog) GetTag(ctx context.Context, id []string, name string) (*store.Tag, error) {
	var out *store.Tag
	err := c.readTable(ctx, id, func(tx Tx, t *Table) (err error) {
		out, err = c.ops.getTag(ctx, tx, t, name)
		return err
	})
	return out, err
}

// CreateTag implements store.Tags.
func (c *Catalog) CreateTag(ctx context.Context, id []string, name, branch string, version int64) (string, error) {
	return c.writeTag(ctx, id, name, branch, version, "CreateTableTag", func(ctx context.Context, tx Tx, t *Table) error {
		if _, err := c.ops.getTag(ctx, tx, t, name); err == nil {
			return store.Errorf(store.CodeTableTagAlreadyExists, "tag %q of table %s already exists", name, DisplayID(id))
		} else if !errors.Is(err, store.ErrTableTagNotFound) {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO table_tags (table_id, name, branch, version, created_at) VALUES (?, ?, ?, ?, ?)`,
			t.RowID, name, branch, version, tx.Now().UnixMilli())
		if c.ops.d.UniqueViolation(err) {
			return conflict(err, store.CodeTableTagAlreadyExists, "tag %q of table %s already exists", name, DisplayID(id))
		}
		return internal("create tag", err)
	})
}

// UpdateTag implements store.Tags.
func (c *Catalog) UpdateTag(ctx context.Context, id []string, name, branch string, version int64) (string, error) {
	return c.writeTag(ctx, id, name, branch, version, "UpdateTableTag", func(ctx context.Context, tx Tx, t *Table) error {
		if _, err := c.ops.getTag(ctx, tx, t, name); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `UPDATE table_tags SET branch = ?, version = ? WHERE table_id = ? AND name = ?`,
			branch, version, t.RowID, name)
		return internal("update tag", err)
	})
}

// writeTag checks the tag name and its target version, runs apply and
// records the transaction.
func (c *Catalog) writeTag(ctx context.Context, id []string, name, branch string, version int64, op string,
	apply func(ctx context.Context, tx Tx, t *Table) error) (string, error) {
	if err := store.ValidateName("tag", name); err != nil {
		return "", err
	}
	o := c.ops
	return c.writeLocked(ctx, id, func(tx Tx, t *Table) (string, error) {
		if err := o.CheckBranch(ctx, tx, t, branch); err != nil {
			return "", err
		}
		if _, err := o.GetVersion(ctx, tx, t, branch, version); err != nil {
			return "", err
		}
		if err := apply(ctx, tx, t); err != nil {
			return "", err
		}
		return o.RecordTx(ctx, tx, op, &t.Table, store.TxSucceeded,
			map[string]string{"tag": name, "branch": store.BranchName(branch), "version": strconv.FormatInt(version, 10)}, nil)
	})
}

// writeLocked runs fn on table id, under the table's row lock, in a
// WriteTable transaction, and returns the transaction id fn returns.
func (c *Catalog) writeLocked(ctx context.Context, id []string, fn func(tx Tx, t *Table) (string, error)) (string, error) {
	var txID string
	err := c.db.WriteTable(ctx, func(tx Tx) error {
		t, err := c.ops.FindTable(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := c.ops.lockTable(ctx, tx, t); err != nil {
			return err
		}
		txID, err = fn(tx, t)
		return err
	})
	return txID, err
}

// DeleteTag implements store.Tags.
func (c *Catalog) DeleteTag(ctx context.Context, id []string, name string) (string, error) {
	o := c.ops
	return c.writeLocked(ctx, id, func(tx Tx, t *Table) (string, error) {
		if _, err := o.getTag(ctx, tx, t, name); err != nil {
			return "", err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM table_tags WHERE table_id = ? AND name = ?`, t.RowID, name); err != nil {
			return "", internal("delete tag", err)
		}
		return o.RecordTx(ctx, tx, "DeleteTableTag", &t.Table, store.TxSucceeded, map[string]string{"tag": name}, nil)
	})
}

// CreateBranch implements store.Branches.
func (c *Catalog) CreateBranch(ctx context.Context, id []string, name, fromBranch string, fromVersion *int64) (string, error) {
	if name == "" {
		return "", store.Errorf(store.CodeInvalidInput, "branch name must not be empty")
	}
	if name != store.MainBranch {
		if _, err := store.NormalizeBranch(name); err != nil {
			return "", err
		}
	}
	o := c.ops
	return c.writeLocked(ctx, id, func(tx Tx, t *Table) (string, error) {
		if name == store.MainBranch {
			return "", store.Errorf(store.CodeTableBranchAlreadyExists, "branch main of table %s already exists", DisplayID(id))
		}
		if err := o.CheckBranch(ctx, tx, t, fromBranch); err != nil {
			return "", store.Errorf(store.CodeInvalidInput, "source branch %q of table %s does not exist", store.BranchName(fromBranch), DisplayID(id))
		}
		if fromVersion != nil && *fromVersion <= 0 {
			return "", store.Errorf(store.CodeInvalidInput, "from_version must be positive")
		}
		src, err := o.describeVersion(ctx, tx, t, fromBranch, fromVersion)
		if errors.Is(err, store.ErrTableVersionNotFound) {
			return "", store.Errorf(store.CodeInvalidInput, "source version of the branch does not exist: %s", err.Error())
		}
		if err != nil {
			return "", err
		}
		if _, err := o.findBranch(ctx, tx, t, name); err == nil {
			return "", store.Errorf(store.CodeTableBranchAlreadyExists, "branch %q of table %s already exists", name, DisplayID(id))
		} else if !errors.Is(err, store.ErrTableBranchNotFound) {
			return "", err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO table_branches (table_id, name, parent_branch, parent_version, created_at)
			VALUES (?, ?, ?, ?, ?)`, t.RowID, name, fromBranch, src.Version, tx.Now().UnixMilli()); err != nil {
			if o.d.UniqueViolation(err) {
				return "", conflict(err, store.CodeTableBranchAlreadyExists, "branch %q of table %s already exists", name, DisplayID(id))
			}
			return "", internal("create branch", err)
		}
		txID, err := o.RecordTx(ctx, tx, "CreateTableBranch", &t.Table, store.TxSucceeded, map[string]string{
			"branch": name, "parent_branch": store.BranchName(fromBranch), "parent_version": strconv.FormatInt(src.Version, 10)}, nil)
		if err != nil || o.m == nil {
			return txID, err
		}
		return txID, o.m.BranchCreated(ctx, tx, t, name, fromBranch, src.Version, txID)
	})
}

// ListBranches implements store.Branches.
func (c *Catalog) ListBranches(ctx context.Context, id []string, page store.Page) ([]store.Branch, string, error) {
	return listByName(ctx, c, id, page, func(b store.Branch) string { return b.Name }, func(r Row) (b store.Branch, err error) {
		var created int64
		var meta string
		if err := r.Scan(&b.Name, &b.ParentBranch, &b.ParentVersion, &created, &meta, &b.ManifestSize); err != nil {
			return b, err
		}
		b.CreatedAt = msTime(created)
		b.Metadata, err = decodeMap(meta)
		return b, err
	}, `SELECT b.name, b.parent_branch, b.parent_version, b.created_at, b.metadata, coalesce(v.manifest_size, 0)
		FROM table_branches b LEFT JOIN table_versions v
			ON v.table_id = b.table_id AND v.branch = b.parent_branch AND v.version = b.parent_version
		WHERE b.table_id = ? AND b.name > ? ORDER BY b.name LIMIT ?`)
}

// DeleteBranch implements store.Branches.
func (c *Catalog) DeleteBranch(ctx context.Context, id []string, name string) (string, error) {
	o := c.ops
	return c.writeLocked(ctx, id, func(tx Tx, t *Table) (string, error) {
		if name == "" || name == store.MainBranch {
			return "", store.Errorf(store.CodeInvalidInput, "the main branch cannot be deleted")
		}
		if err := o.CheckBranch(ctx, tx, t, name); err != nil {
			return "", err
		}
		var children int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM table_branches WHERE table_id = ? AND parent_branch = ?`,
			t.RowID, name).Scan(&children); err != nil {
			return "", internal("delete branch", err)
		}
		if children > 0 {
			return "", store.Errorf(store.CodeInvalidInput, "branch %q of table %s has %d branches forked from it; delete them first", name, DisplayID(id), children)
		}
		if o.m != nil {
			if err := o.m.BranchDeleting(ctx, tx, t, name); err != nil {
				return "", err
			}
		}
		for _, q := range []string{
			`DELETE FROM table_tags WHERE table_id = ? AND branch = ?`,
			`DELETE FROM table_versions WHERE table_id = ? AND branch = ?`,
			`DELETE FROM table_branches WHERE table_id = ? AND name = ?`,
		} {
			if _, err := tx.Exec(ctx, q, t.RowID, name); err != nil {
				return "", internal("delete branch", err)
			}
		}
		return o.RecordTx(ctx, tx, "DeleteTableBranch", &t.Table, store.TxSucceeded, map[string]string{"branch": name}, nil)
	})
}
