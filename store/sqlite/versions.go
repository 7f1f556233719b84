package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"strconv"

	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/store/sqlite/internal/sqlitedb"
)

var _ store.Versions = (*DB)(nil)

// checkBranch returns nil when branch exists on table t ("" is main, which
// always exists) and TableBranchNotFound otherwise.
func checkBranch(ctx context.Context, tx *Tx, t *tableRow, branch string) error {
	_, err := findBranch(ctx, tx, t, branch)
	return err
}

// findBranch returns the branch's fork point (nil for main). Returns
// TableBranchNotFound.
func findBranch(ctx context.Context, tx *Tx, t *tableRow, branch string) (*store.Branch, error) {
	if branch == "" {
		return nil, nil
	}
	var b store.Branch
	var created int64
	var meta string
	err := tx.QueryRowCached(ctx, `SELECT name, parent_branch, parent_version, created_at, metadata FROM table_branches
		WHERE table_id = ? AND name = ?`, t.rowID, branch).Scan(&b.Name, &b.ParentBranch, &b.ParentVersion, &created, &meta)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, store.Errorf(store.CodeTableBranchNotFound, "branch %q of table %s not found", branch, displayID(t.ID))
	}
	if err != nil {
		return nil, internal("find branch", err)
	}
	b.CreatedAt = msTime(created)
	if b.Metadata, err = decodeMap(meta); err != nil {
		return nil, err
	}
	return &b, nil
}

const versionColumns = `version, manifest_path, manifest_size, e_tag, timestamp_millis, metadata`

func scanVersion(row interface{ Scan(...any) error }) (*store.TableVersion, error) {
	var v store.TableVersion
	var size sql.NullInt64
	var etag, meta sql.NullString
	var ts int64
	if err := row.Scan(&v.Version, &v.ManifestPath, &size, &etag, &ts, &meta); err != nil {
		return nil, err
	}
	if size.Valid {
		v.ManifestSize = &size.Int64
	}
	if etag.Valid {
		v.ETag = &etag.String
	}
	v.Timestamp = msTime(ts)
	if meta.Valid {
		m, err := decodeMap(meta.String)
		if err != nil {
			return nil, err
		}
		v.Metadata = m
	}
	return &v, nil
}

// latestVersion returns the newest version of a branch, or nil if it has none.
func latestVersion(ctx context.Context, tx *Tx, t *tableRow, branch string) (*store.TableVersion, error) {
	row := tx.QueryRowCached(ctx, `SELECT `+versionColumns+` FROM table_versions WHERE table_id = ? AND branch = ?
		ORDER BY version DESC LIMIT 1`, t.rowID, branch)
	v, err := scanVersion(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, internal("latest version", err)
	}
	return v, nil
}

// getVersion returns version v of a branch. Returns TableVersionNotFound.
func getVersion(ctx context.Context, tx *Tx, t *tableRow, branch string, v int64) (*store.TableVersion, error) {
	row := tx.QueryRowCached(ctx, `SELECT `+versionColumns+` FROM table_versions WHERE table_id = ? AND branch = ? AND version = ?`,
		t.rowID, branch, v)
	out, err := scanVersion(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, store.Errorf(store.CodeTableVersionNotFound, "version %d of table %s not found on branch %s", v, displayID(t.ID), store.BranchName(branch))
	}
	if err != nil {
		return nil, internal("get version", err)
	}
	return out, nil
}

// nextVersion returns latest+1, or the chain's first version when the branch
// has none: 1 on main, the fork version on another branch.
func nextVersion(ctx context.Context, tx *Tx, t *tableRow, branch string) (int64, error) {
	b, err := findBranch(ctx, tx, t, branch)
	if err != nil {
		return 0, err
	}
	latest, err := latestVersion(ctx, tx, t, branch)
	if err != nil {
		return 0, err
	}
	switch {
	case latest != nil:
		return latest.Version + 1, nil
	case b != nil:
		return b.ParentVersion, nil
	}
	return 1, nil
}

// CommitVersion implements store.Versions.
func (db *DB) CommitVersion(ctx context.Context, id []string, c store.VersionCommit) (*store.TableVersion, string, error) {
	var out *store.TableVersion
	var txID string
	err := db.write(ctx, func(tx *Tx) error {
		t, err := findTable(ctx, tx, id)
		if err != nil {
			return err
		}
		out, txID, err = commitVersion(ctx, tx, t, c, "")
		return err
	})
	return out, txID, err
}

// commitVersion records a commit on table t. batchTx, when set, is the
// transaction id of the batch the commit belongs to.
func commitVersion(ctx context.Context, tx *Tx, t *tableRow, c store.VersionCommit, batchTx string) (*store.TableVersion, string, error) {
	if t.Kind == store.Managed {
		return nil, "", store.Errorf(store.CodeInvalidTableState, "table %s keeps its rows inside lancens; its versions are made by writes, not committed", displayID(t.ID))
	}
	if c.Version < 0 {
		return nil, "", store.Errorf(store.CodeInvalidInput, "version must not be negative")
	}
	if c.StagedPath == "" || c.ManifestPath == "" {
		return nil, "", store.Errorf(store.CodeInvalidInput, "manifest_path must not be empty")
	}
	// A retry of a commit that already succeeded gets the stored record.
	var staged string
	var size sql.NullInt64
	var storedTx string
	err := tx.QueryRowCached(ctx, `SELECT staged_path, manifest_size, transaction_id FROM table_versions
		WHERE table_id = ? AND branch = ? AND version = ?`, t.rowID, c.Branch, c.Version).Scan(&staged, &size, &storedTx)
	switch {
	case err == nil:
		if staged == c.StagedPath && (c.ManifestSize == nil || !size.Valid || size.Int64 == *c.ManifestSize) {
			v, err := getVersion(ctx, tx, t, c.Branch, c.Version)
			return v, storedTx, err
		}
		return nil, "", store.Errorf(store.CodeConcurrentModification, "version %d of table %s already exists", c.Version, displayID(t.ID))
	case !errors.Is(err, sql.ErrNoRows):
		return nil, "", internal("find version", err)
	}
	want, err := nextVersion(ctx, tx, t, c.Branch)
	if err != nil {
		return nil, "", err
	}
	if c.Version != want {
		return nil, "", store.Errorf(store.CodeConcurrentModification, "cannot commit version %d of table %s on branch %s: the next version is %d",
			c.Version, displayID(t.ID), store.BranchName(c.Branch), want)
	}
	txID := batchTx
	if txID == "" {
		txID, err = recordTx(ctx, tx, "CreateTableVersion", &t.Table, store.TxSucceeded,
			map[string]string{"version": strconv.FormatInt(c.Version, 10), "branch": store.BranchName(c.Branch)}, nil)
		if err != nil {
			return nil, "", err
		}
	}
	var meta any
	if c.Metadata != nil {
		if meta, err = encodeMap(c.Metadata); err != nil {
			return nil, "", err
		}
	}
	ts := tx.Now().UnixMilli()
	if _, err := tx.ExecCached(ctx, `INSERT INTO table_versions (table_id, branch, version, manifest_path, staged_path,
		manifest_size, e_tag, timestamp_millis, metadata, transaction_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		t.rowID, c.Branch, c.Version, c.ManifestPath, c.StagedPath, c.ManifestSize, c.ETag, ts, meta, txID); err != nil {
		if isConstraint(err) {
			return nil, "", store.Errorf(store.CodeConcurrentModification, "version %d of table %s already exists", c.Version, displayID(t.ID))
		}
		return nil, "", internal("insert version", err)
	}
	if t.Declared {
		if _, err := tx.ExecCached(ctx, `UPDATE tables SET declared = 0 WHERE id = ?`, t.rowID); err != nil {
			return nil, "", internal("mark table created", err)
		}
		t.Declared = false
	}
	// The record is what was just inserted; reading it back would cost a
	// query per commit.
	return &store.TableVersion{Version: c.Version, ManifestPath: c.ManifestPath, ManifestSize: c.ManifestSize,
		ETag: c.ETag, Timestamp: msTime(ts), Metadata: c.Metadata}, txID, nil
}

// ListVersions implements store.Versions.
func (db *DB) ListVersions(ctx context.Context, id []string, branch string, descending bool, page store.Page) ([]store.TableVersion, string, error) {
	afterKey, err := store.DecodePageToken(page.Token)
	if err != nil {
		return nil, "", err
	}
	var after *int64
	if afterKey != "" {
		v, err := strconv.ParseInt(afterKey, 10, 64)
		if err != nil {
			return nil, "", store.Errorf(store.CodeInvalidInput, "invalid page_token %q", page.Token)
		}
		after = &v
	}
	size := store.PageSize(page.Limit)
	var out []store.TableVersion
	err = db.read(ctx, func(tx *Tx) error {
		t, err := findTable(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := checkBranch(ctx, tx, t, branch); err != nil {
			return err
		}
		q := `SELECT ` + versionColumns + ` FROM table_versions WHERE table_id = ? AND branch = ?`
		args := []any{t.rowID, branch}
		switch {
		case after != nil && descending:
			q += ` AND version < ?`
			args = append(args, *after)
		case after != nil:
			q += ` AND version > ?`
			args = append(args, *after)
		}
		if descending {
			q += ` ORDER BY version DESC LIMIT ?`
		} else {
			q += ` ORDER BY version ASC LIMIT ?`
		}
		// q is one of four fixed texts.
		rows, err := tx.QueryCached(ctx, sqlitedb.Const(q), append(args, size+1)...)
		if err != nil {
			return internal("list versions", err)
		}
		defer rows.Close()
		out = []store.TableVersion{}
		for rows.Next() {
			v, err := scanVersion(rows)
			if err != nil {
				return internal("list versions", err)
			}
			out = append(out, *v)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, "", err
	}
	out, next := store.CutPage(out, size, func(x store.TableVersion) string { return strconv.FormatInt(x.Version, 10) })
	return out, next, nil
}

// DescribeVersion implements store.Versions.
func (db *DB) DescribeVersion(ctx context.Context, id []string, branch string, v *int64) (*store.TableVersion, error) {
	var out *store.TableVersion
	err := db.read(ctx, func(tx *Tx) error {
		t, err := findTable(ctx, tx, id)
		if err != nil {
			return err
		}
		out, err = describeVersion(ctx, tx, t, branch, v)
		return err
	})
	return out, err
}

func describeVersion(ctx context.Context, tx *Tx, t *tableRow, branch string, v *int64) (*store.TableVersion, error) {
	if err := checkBranch(ctx, tx, t, branch); err != nil {
		return nil, err
	}
	if v != nil {
		return getVersion(ctx, tx, t, branch, *v)
	}
	latest, err := latestVersion(ctx, tx, t, branch)
	if err != nil {
		return nil, err
	}
	if latest == nil {
		return nil, store.Errorf(store.CodeTableVersionNotFound, "table %s has no versions on branch %s", displayID(t.ID), store.BranchName(branch))
	}
	return latest, nil
}

// DeleteVersions implements store.Versions.
func (db *DB) DeleteVersions(ctx context.Context, id []string, branch string, ranges []store.VersionRange) (int64, string, error) {
	var n int64
	var txID string
	err := db.write(ctx, func(tx *Tx) error {
		t, err := findTable(ctx, tx, id)
		if err != nil {
			return err
		}
		if n, err = deleteVersions(ctx, tx, t, branch, ranges); err != nil {
			return err
		}
		txID, err = recordTx(ctx, tx, "DeleteTableVersions", &t.Table, store.TxSucceeded,
			map[string]string{"branch": store.BranchName(branch), "deleted_count": strconv.FormatInt(n, 10)}, nil)
		return err
	})
	return n, txID, err
}

// deleteVersions deletes the version records of t on branch in ranges;
// for a managed table, those something keeps are refused and their rows go
// too (see removeManagedVersions).
func deleteVersions(ctx context.Context, tx *Tx, t *tableRow, branch string, ranges []store.VersionRange) (int64, error) {
	if err := checkBranch(ctx, tx, t, branch); err != nil {
		return 0, err
	}
	for _, r := range ranges {
		if r.Start < 0 {
			return 0, store.Errorf(store.CodeInvalidInput, "start_version must not be negative")
		}
		if r.End >= 0 && r.End < r.Start {
			return 0, store.Errorf(store.CodeInvalidInput, "end_version %d is before start_version %d", r.End, r.Start)
		}
	}
	if t.Kind == store.Managed {
		return removeManagedVersions(ctx, tx, t, branch, ranges)
	}
	var total int64
	for _, r := range ranges {
		res, err := tx.ExecCached(ctx, `DELETE FROM table_versions WHERE table_id = ? AND branch = ? AND version >= ?
			AND (? < 0 OR version < ?)`, t.rowID, branch, r.Start, r.End, r.End)
		if err != nil {
			return 0, internal("delete versions", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return 0, internal("delete versions", err)
		}
		total += n
	}
	return total, nil
}
