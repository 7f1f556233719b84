package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"strconv"

	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/store/sqlite/internal/sqlitedb"
)

var (
	_ store.Tags     = (*DB)(nil)
	_ store.Branches = (*DB)(nil)
)

// ListTags implements store.Tags.
func (db *DB) ListTags(ctx context.Context, id []string, page store.Page) ([]store.Tag, string, error) {
	after, err := store.DecodePageToken(page.Token)
	if err != nil {
		return nil, "", err
	}
	size := store.PageSize(page.Limit)
	var out []store.Tag
	err = db.read(ctx, func(tx *Tx) error {
		t, err := findTable(ctx, tx, id)
		if err != nil {
			return err
		}
		rows, err := tx.QueryCached(ctx, `SELECT g.name, g.branch, g.version, coalesce(v.manifest_size, 0)
			FROM table_tags g LEFT JOIN table_versions v ON v.table_id = g.table_id AND v.branch = g.branch AND v.version = g.version
			WHERE g.table_id = ? AND g.name > ? ORDER BY g.name LIMIT ?`, t.rowID, after, size+1)
		if err != nil {
			return internal("list tags", err)
		}
		defer rows.Close()
		out = []store.Tag{}
		for rows.Next() {
			var g store.Tag
			if err := rows.Scan(&g.Name, &g.Branch, &g.Version, &g.ManifestSize); err != nil {
				return internal("list tags", err)
			}
			out = append(out, g)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, "", err
	}
	out, next := store.CutPage(out, size, func(x store.Tag) string { return x.Name })
	return out, next, nil
}

func getTag(ctx context.Context, tx *Tx, t *tableRow, name string) (*store.Tag, error) {
	g := store.Tag{Name: name}
	err := tx.QueryRowCached(ctx, `SELECT g.branch, g.version, coalesce(v.manifest_size, 0)
		FROM table_tags g LEFT JOIN table_versions v ON v.table_id = g.table_id AND v.branch = g.branch AND v.version = g.version
		WHERE g.table_id = ? AND g.name = ?`, t.rowID, name).Scan(&g.Branch, &g.Version, &g.ManifestSize)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, store.Errorf(store.CodeTableTagNotFound, "tag %q of table %s not found", name, displayID(t.ID))
	}
	if err != nil {
		return nil, internal("get tag", err)
	}
	return &g, nil
}

// GetTag implements store.Tags.
func (db *DB) GetTag(ctx context.Context, id []string, name string) (*store.Tag, error) {
	var out *store.Tag
	err := db.read(ctx, func(tx *Tx) error {
		t, err := findTable(ctx, tx, id)
		if err != nil {
			return err
		}
		out, err = getTag(ctx, tx, t, name)
		return err
	})
	return out, err
}

func checkTagName(name string) error {
	return store.ValidateName("tag", name)
}

// CreateTag implements store.Tags.
func (db *DB) CreateTag(ctx context.Context, id []string, name, branch string, version int64) (string, error) {
	return db.writeTag(ctx, id, name, branch, version, "CreateTableTag", func(ctx context.Context, tx *Tx, t *tableRow) error {
		_, err := tx.ExecCached(ctx, `INSERT INTO table_tags (table_id, name, branch, version, created_at) VALUES (?, ?, ?, ?, ?)`,
			t.rowID, name, branch, version, tx.Now().UnixMilli())
		if isConstraint(err) {
			return store.Errorf(store.CodeTableTagAlreadyExists, "tag %q of table %s already exists", name, displayID(id))
		}
		if err != nil {
			return internal("create tag", err)
		}
		return nil
	})
}

// UpdateTag implements store.Tags.
func (db *DB) UpdateTag(ctx context.Context, id []string, name, branch string, version int64) (string, error) {
	return db.writeTag(ctx, id, name, branch, version, "UpdateTableTag", func(ctx context.Context, tx *Tx, t *tableRow) error {
		if _, err := getTag(ctx, tx, t, name); err != nil {
			return err
		}
		_, err := tx.ExecCached(ctx, `UPDATE table_tags SET branch = ?, version = ? WHERE table_id = ? AND name = ?`,
			branch, version, t.rowID, name)
		if err != nil {
			return internal("update tag", err)
		}
		return nil
	})
}

// writeTag checks the tag name and its target version, runs apply and
// records the transaction.
func (db *DB) writeTag(ctx context.Context, id []string, name, branch string, version int64, op string,
	apply func(ctx context.Context, tx *Tx, t *tableRow) error) (string, error) {
	if err := checkTagName(name); err != nil {
		return "", err
	}
	var txID string
	err := db.write(ctx, func(tx *Tx) error {
		t, err := findTable(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := checkBranch(ctx, tx, t, branch); err != nil {
			return err
		}
		if _, err := getVersion(ctx, tx, t, branch, version); err != nil {
			return err
		}
		if err := apply(ctx, tx, t); err != nil {
			return err
		}
		txID, err = recordTx(ctx, tx, op, &t.Table, store.TxSucceeded,
			map[string]string{"tag": name, "branch": store.BranchName(branch), "version": strconv.FormatInt(version, 10)}, nil)
		return err
	})
	return txID, err
}

// DeleteTag implements store.Tags.
func (db *DB) DeleteTag(ctx context.Context, id []string, name string) (string, error) {
	var txID string
	err := db.write(ctx, func(tx *Tx) error {
		t, err := findTable(ctx, tx, id)
		if err != nil {
			return err
		}
		if _, err := getTag(ctx, tx, t, name); err != nil {
			return err
		}
		if _, err := tx.ExecCached(ctx, `DELETE FROM table_tags WHERE table_id = ? AND name = ?`, t.rowID, name); err != nil {
			return internal("delete tag", err)
		}
		txID, err = recordTx(ctx, tx, "DeleteTableTag", &t.Table, store.TxSucceeded, map[string]string{"tag": name}, nil)
		return err
	})
	return txID, err
}

// CreateBranch implements store.Branches.
func (db *DB) CreateBranch(ctx context.Context, id []string, name, fromBranch string, fromVersion *int64) (string, error) {
	if name == "" {
		return "", store.Errorf(store.CodeInvalidInput, "branch name must not be empty")
	}
	if name != store.MainBranch {
		if _, err := store.NormalizeBranch(name); err != nil {
			return "", err
		}
	}
	var txID string
	err := db.write(ctx, func(tx *Tx) error {
		t, err := findTable(ctx, tx, id)
		if err != nil {
			return err
		}
		if name == store.MainBranch {
			return store.Errorf(store.CodeTableBranchAlreadyExists, "branch main of table %s already exists", displayID(id))
		}
		if err := checkBranch(ctx, tx, t, fromBranch); err != nil {
			return store.Errorf(store.CodeInvalidInput, "source branch %q of table %s does not exist", store.BranchName(fromBranch), displayID(id))
		}
		if fromVersion != nil && *fromVersion <= 0 {
			return store.Errorf(store.CodeInvalidInput, "from_version must be positive")
		}
		src, err := describeVersion(ctx, tx, t, fromBranch, fromVersion)
		if errors.Is(err, store.ErrTableVersionNotFound) {
			return store.Errorf(store.CodeInvalidInput, "source version of the branch does not exist: %s", err.Error())
		}
		if err != nil {
			return err
		}
		_, err = tx.ExecCached(ctx, `INSERT INTO table_branches (table_id, name, parent_branch, parent_version, created_at)
			VALUES (?, ?, ?, ?, ?)`, t.rowID, name, fromBranch, src.Version, tx.Now().UnixMilli())
		if isConstraint(err) {
			return store.Errorf(store.CodeTableBranchAlreadyExists, "branch %q of table %s already exists", name, displayID(id))
		}
		if err != nil {
			return internal("create branch", err)
		}
		txID, err = recordTx(ctx, tx, "CreateTableBranch", &t.Table, store.TxSucceeded, map[string]string{
			"branch": name, "parent_branch": store.BranchName(fromBranch), "parent_version": strconv.FormatInt(src.Version, 10)}, nil)
		if err != nil || t.Kind != store.Managed {
			return err
		}
		return forkLine(ctx, tx, t, name, fromBranch, src.Version, txID)
	})
	return txID, err
}

// ListBranches implements store.Branches.
func (db *DB) ListBranches(ctx context.Context, id []string, page store.Page) ([]store.Branch, string, error) {
	after, err := store.DecodePageToken(page.Token)
	if err != nil {
		return nil, "", err
	}
	size := store.PageSize(page.Limit)
	var out []store.Branch
	err = db.read(ctx, func(tx *Tx) error {
		t, err := findTable(ctx, tx, id)
		if err != nil {
			return err
		}
		rows, err := tx.QueryCached(ctx, `SELECT b.name, b.parent_branch, b.parent_version, b.created_at, b.metadata,
			coalesce(v.manifest_size, 0)
			FROM table_branches b LEFT JOIN table_versions v
				ON v.table_id = b.table_id AND v.branch = b.parent_branch AND v.version = b.parent_version
			WHERE b.table_id = ? AND b.name > ? ORDER BY b.name LIMIT ?`, t.rowID, after, size+1)
		if err != nil {
			return internal("list branches", err)
		}
		defer rows.Close()
		out = []store.Branch{}
		for rows.Next() {
			var b store.Branch
			var created int64
			var meta string
			if err := rows.Scan(&b.Name, &b.ParentBranch, &b.ParentVersion, &created, &meta, &b.ManifestSize); err != nil {
				return internal("list branches", err)
			}
			b.CreatedAt = msTime(created)
			if b.Metadata, err = decodeMap(meta); err != nil {
				return err
			}
			out = append(out, b)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, "", err
	}
	out, next := store.CutPage(out, size, func(x store.Branch) string { return x.Name })
	return out, next, nil
}

// DeleteBranch implements store.Branches.
func (db *DB) DeleteBranch(ctx context.Context, id []string, name string) (string, error) {
	var txID string
	err := db.write(ctx, func(tx *Tx) error {
		t, err := findTable(ctx, tx, id)
		if err != nil {
			return err
		}
		if name == "" || name == store.MainBranch {
			return store.Errorf(store.CodeInvalidInput, "the main branch cannot be deleted")
		}
		if err := checkBranch(ctx, tx, t, name); err != nil {
			return err
		}
		var children int
		if err := tx.QueryRowCached(ctx, `SELECT count(*) FROM table_branches WHERE table_id = ? AND parent_branch = ?`,
			t.rowID, name).Scan(&children); err != nil {
			return internal("delete branch", err)
		}
		if children > 0 {
			return store.Errorf(store.CodeInvalidInput, "branch %q of table %s has %d branches forked from it; delete them first", name, displayID(id), children)
		}
		if err := dropLine(ctx, tx, t, name); err != nil {
			return err
		}
		for _, q := range []sqlitedb.Const{
			`DELETE FROM table_tags WHERE table_id = ? AND branch = ?`,
			`DELETE FROM table_versions WHERE table_id = ? AND branch = ?`,
			`DELETE FROM table_branches WHERE table_id = ? AND name = ?`,
		} {
			if _, err := tx.ExecCached(ctx, q, t.rowID, name); err != nil {
				return internal("delete branch", err)
			}
		}
		txID, err = recordTx(ctx, tx, "DeleteTableBranch", &t.Table, store.TxSucceeded, map[string]string{"branch": name}, nil)
		return err
	})
	return txID, err
}
