package sqlcatalog

import (
	"context"
	"errors"
	"strconv"

	"github.com/lancens/lancens/store"
)

// CheckBranch returns nil when branch exists on table t ("" is main, which
// always exists) and TableBranchNotFound (22) otherwise.
func (o *Ops) CheckBranch(ctx context.Context, tx Tx, t *Table, branch string) error {
	_, err := o.findBranch(ctx, tx, t, branch)
	return err
}

// findBranch returns the branch's fork point (nil for main). Returns
// TableBranchNotFound (22).
func (o *Ops) findBranch(ctx context.Context, tx Tx, t *Table, branch string) (*store.Branch, error) {
	if branch == "" {
		return nil, nil
	}
	var b store.Branch
	var created int64
	var meta string
	err := tx.QueryRow(ctx, `SELECT name, parent_branch, parent_version, created_at, metadata FROM table_branches
		WHERE table_id = ? AND name = ?`, t.RowID, branch).Scan(&b.Name, &b.ParentBranch, &b.ParentVersion, &created, &meta)
	if o.d.NoRows(err) {
		return nil, store.Errorf(store.CodeTableBranchNotFound, "branch %q of table %s not found", branch, DisplayID(t.ID))
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

func scanVersion(row Row) (*store.TableVersion, error) {
	var v store.TableVersion
	var ts int64
	var meta *string
	if err := row.Scan(&v.Version, &v.ManifestPath, &v.ManifestSize, &v.ETag, &ts, &meta); err != nil {
		return nil, err
	}
	v.Timestamp = msTime(ts)
	if meta != nil {
		m, err := decodeMap(*meta)
		if err != nil {
			return nil, err
		}
		v.Metadata = m
	}
	return &v, nil
}

// LatestVersion returns the newest version of a branch of table t, or nil
// if it has none. It returns the database's error.
func (o *Ops) LatestVersion(ctx context.Context, tx Tx, t *Table, branch string) (*store.TableVersion, error) {
	v, err := scanVersion(tx.QueryRow(ctx, `SELECT `+versionColumns+` FROM table_versions WHERE table_id = ? AND branch = ?
		ORDER BY version DESC LIMIT 1`, t.RowID, branch))
	if o.d.NoRows(err) {
		return nil, nil
	}
	if err != nil {
		return nil, internal("latest version", err)
	}
	return v, nil
}

// GetVersion returns version v of a branch of table t. Returns
// TableVersionNotFound (11).
func (o *Ops) GetVersion(ctx context.Context, tx Tx, t *Table, branch string, v int64) (*store.TableVersion, error) {
	out, err := scanVersion(tx.QueryRow(ctx, `SELECT `+versionColumns+` FROM table_versions
		WHERE table_id = ? AND branch = ? AND version = ?`, t.RowID, branch, v))
	if o.d.NoRows(err) {
		return nil, store.Errorf(store.CodeTableVersionNotFound, "version %d of table %s not found on branch %s", v, DisplayID(t.ID), store.BranchName(branch))
	}
	if err != nil {
		return nil, internal("get version", err)
	}
	return out, nil
}

// nextVersion returns latest+1, or the chain's first version when the branch
// has none: 1 on main, the fork version on another branch.
func (o *Ops) nextVersion(ctx context.Context, tx Tx, t *Table, branch string) (int64, error) {
	b, err := o.findBranch(ctx, tx, t, branch)
	if err != nil {
		return 0, err
	}
	latest, err := o.LatestVersion(ctx, tx, t, branch)
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
func (c *Catalog) CommitVersion(ctx context.Context, id []string, vc store.VersionCommit) (*store.TableVersion, string, error) {
	var out *store.TableVersion
	var txID string
	err := c.db.WriteTable(ctx, func(tx Tx) error {
		t, err := c.ops.FindTable(ctx, tx, id)
		if err != nil {
			return err
		}
		out, txID, err = c.ops.commitVersion(ctx, tx, t, vc, "")
		return err
	})
	return out, txID, err
}

// commitVersion records commit vc on table t, under its row lock. batchTx,
// when set, is the transaction id of the batch the commit belongs to.
func (o *Ops) commitVersion(ctx context.Context, tx Tx, t *Table, vc store.VersionCommit, batchTx string) (*store.TableVersion, string, error) {
	if t.Kind == store.Managed {
		return nil, "", store.Errorf(store.CodeInvalidTableState, "table %s keeps its rows in the database file of an earlier lancens, not converted to a Lance dataset yet, and takes no commits: run lancens migrate", DisplayID(t.ID))
	}
	if vc.Version < 0 {
		return nil, "", store.Errorf(store.CodeInvalidInput, "version must not be negative")
	}
	if vc.Location != "" && vc.Location != t.Location {
		return nil, "", store.Errorf(store.CodeConcurrentModification, "table %s moved to %s while its version %d was committed; retry the commit",
			DisplayID(t.ID), t.Location, vc.Version)
	}
	if vc.StagedPath == "" || vc.ManifestPath == "" {
		return nil, "", store.Errorf(store.CodeInvalidInput, "manifest_path must not be empty")
	}
	if err := o.lockTable(ctx, tx, t); err != nil {
		return nil, "", err
	}
	want, err := o.nextVersion(ctx, tx, t, vc.Branch)
	if err != nil {
		return nil, "", err
	}
	if vc.Version < want {
		// The version may be recorded already (no version after the next
		// one is): a retry of a commit that succeeded gets the record.
		return o.recordedCommit(ctx, tx, t, vc, want)
	}
	if vc.Version > want {
		return nil, "", notNext(t, vc, want)
	}
	txID := batchTx
	if txID == "" {
		txID, err = o.RecordTx(ctx, tx, "CreateTableVersion", &t.Table, store.TxSucceeded,
			map[string]string{"version": strconv.FormatInt(vc.Version, 10), "branch": store.BranchName(vc.Branch)}, nil)
		if err != nil {
			return nil, "", err
		}
	}
	var meta *string
	if vc.Metadata != nil {
		m, err := encodeMap(vc.Metadata)
		if err != nil {
			return nil, "", err
		}
		meta = &m
	}
	ts := tx.Now().UnixMilli()
	if _, err := tx.Exec(ctx, `INSERT INTO table_versions (table_id, branch, version, manifest_path, staged_path,
		manifest_size, e_tag, timestamp_millis, metadata, transaction_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		t.RowID, vc.Branch, vc.Version, vc.ManifestPath, vc.StagedPath, vc.ManifestSize, vc.ETag, ts, meta, txID); err != nil {
		if o.d.UniqueViolation(err) {
			return nil, "", conflict(err, store.CodeConcurrentModification, "version %d of table %s already exists", vc.Version, DisplayID(t.ID))
		}
		return nil, "", internal("insert version", err)
	}
	if err := o.viewCommitted(ctx, tx, t, vc); err != nil {
		return nil, "", err
	}
	if t.Declared {
		if _, err := tx.Exec(ctx, `UPDATE tables SET declared = false WHERE id = ?`, t.RowID); err != nil {
			return nil, "", internal("mark table created", err)
		}
		t.Declared = false
	}
	// The record is what was just inserted; reading it back would cost a
	// query per commit.
	return &store.TableVersion{Version: vc.Version, ManifestPath: vc.ManifestPath, ManifestSize: vc.ManifestSize,
		ETag: vc.ETag, Timestamp: msTime(ts), Metadata: vc.Metadata}, txID, nil
}

// recordedCommit answers a commit of a version before the next one, want:
// the stored record when the version holds this very commit (a retry),
// ConcurrentModification (14) otherwise.
func (o *Ops) recordedCommit(ctx context.Context, tx Tx, t *Table, vc store.VersionCommit, want int64) (*store.TableVersion, string, error) {
	var staged, storedTx string
	var size *int64
	err := tx.QueryRow(ctx, `SELECT staged_path, manifest_size, transaction_id FROM table_versions
		WHERE table_id = ? AND branch = ? AND version = ?`, t.RowID, vc.Branch, vc.Version).Scan(&staged, &size, &storedTx)
	switch {
	case o.d.NoRows(err):
		return nil, "", notNext(t, vc, want)
	case err != nil:
		return nil, "", internal("find version", err)
	case staged == vc.StagedPath && (vc.ManifestSize == nil || size == nil || *size == *vc.ManifestSize):
		v, err := o.GetVersion(ctx, tx, t, vc.Branch, vc.Version)
		return v, storedTx, err
	}
	return nil, "", store.Errorf(store.CodeConcurrentModification, "version %d of table %s already exists", vc.Version, DisplayID(t.ID))
}

// notNext is the ConcurrentModification (14) of a commit of another
// version than the next one, want.
func notNext(t *Table, vc store.VersionCommit, want int64) error {
	return store.Errorf(store.CodeConcurrentModification, "cannot commit version %d of table %s on branch %s: the next version is %d",
		vc.Version, DisplayID(t.ID), store.BranchName(vc.Branch), want)
}

// listVersions are the queries of a page of versions (parameters: the
// table, the branch, the version to resume after if any, the limit), by
// [descending][resuming].
var listVersions = [2][2]string{
	{
		`SELECT ` + versionColumns + ` FROM table_versions WHERE table_id = ? AND branch = ? ORDER BY version ASC LIMIT ?`,
		`SELECT ` + versionColumns + ` FROM table_versions WHERE table_id = ? AND branch = ? AND version > ? ORDER BY version ASC LIMIT ?`,
	},
	{
		`SELECT ` + versionColumns + ` FROM table_versions WHERE table_id = ? AND branch = ? ORDER BY version DESC LIMIT ?`,
		`SELECT ` + versionColumns + ` FROM table_versions WHERE table_id = ? AND branch = ? AND version < ? ORDER BY version DESC LIMIT ?`,
	},
}

// ListVersions implements store.Versions.
func (c *Catalog) ListVersions(ctx context.Context, id []string, branch string, descending bool, page store.Page) ([]store.TableVersion, string, error) {
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
	err = c.readTable(ctx, id, func(tx Tx, t *Table) error {
		if err := c.ops.CheckBranch(ctx, tx, t, branch); err != nil {
			return err
		}
		var desc, resume int
		args := []any{t.RowID, branch}
		if descending {
			desc = 1
		}
		if after != nil {
			resume = 1
			args = append(args, *after)
		}
		var err error
		out, err = queryRows(ctx, tx, func(r Row) (store.TableVersion, error) {
			v, err := scanVersion(r)
			if err != nil {
				return store.TableVersion{}, err
			}
			return *v, nil
		}, listVersions[desc][resume], append(args, size+1)...)
		return internal("list versions", err)
	})
	if err != nil {
		return nil, "", err
	}
	out, next := store.CutPage(out, size, func(x store.TableVersion) string { return strconv.FormatInt(x.Version, 10) })
	return out, next, nil
}

// DescribeVersion implements store.Versions.
func (c *Catalog) DescribeVersion(ctx context.Context, id []string, branch string, v *int64) (*store.TableVersion, error) {
	var out *store.TableVersion
	err := c.readTable(ctx, id, func(tx Tx, t *Table) (err error) {
		out, err = c.ops.describeVersion(ctx, tx, t, branch, v)
		return err
	})
	return out, err
}

// FindVersion implements store.VersionFinder.
func (c *Catalog) FindVersion(ctx context.Context, id []string, branch string, v int64) (*store.Table, *store.TableVersion, error) {
	var table *store.Table
	var version *store.TableVersion
	err := c.readTable(ctx, id, func(tx Tx, t *Table) error {
		table, version = &t.Table, nil
		if err := c.ops.CheckBranch(ctx, tx, t, branch); err != nil {
			return err
		}
		found, err := c.ops.GetVersion(ctx, tx, t, branch, v)
		switch {
		case errors.Is(err, store.ErrTableVersionNotFound):
			return nil
		case err != nil:
			return err
		}
		version = found
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return table, version, nil
}

func (o *Ops) describeVersion(ctx context.Context, tx Tx, t *Table, branch string, v *int64) (*store.TableVersion, error) {
	if err := o.CheckBranch(ctx, tx, t, branch); err != nil {
		return nil, err
	}
	if v != nil {
		return o.GetVersion(ctx, tx, t, branch, *v)
	}
	latest, err := o.LatestVersion(ctx, tx, t, branch)
	if err != nil {
		return nil, err
	}
	if latest == nil {
		return nil, store.Errorf(store.CodeTableVersionNotFound, "table %s has no versions on branch %s", DisplayID(t.ID), store.BranchName(branch))
	}
	return latest, nil
}

// DeleteVersions implements store.Versions.
func (c *Catalog) DeleteVersions(ctx context.Context, id []string, branch string, ranges []store.VersionRange) (int64, string, error) {
	var n int64
	var txID string
	err := c.db.WriteTable(ctx, func(tx Tx) error {
		t, err := c.ops.FindTable(ctx, tx, id)
		if err != nil {
			return err
		}
		if n, err = c.ops.deleteVersions(ctx, tx, t, branch, ranges); err != nil {
			return err
		}
		txID, err = c.ops.RecordTx(ctx, tx, "DeleteTableVersions", &t.Table, store.TxSucceeded,
			map[string]string{"branch": store.BranchName(branch), "deleted_count": strconv.FormatInt(n, 10)}, nil)
		return err
	})
	return n, txID, err
}

// deleteVersions deletes the version records of t on branch in ranges,
// under the table's row lock; those of a managed table go through the
// backend's Managed.
func (o *Ops) deleteVersions(ctx context.Context, tx Tx, t *Table, branch string, ranges []store.VersionRange) (int64, error) {
	if err := o.lockTable(ctx, tx, t); err != nil {
		return 0, err
	}
	if err := o.CheckBranch(ctx, tx, t, branch); err != nil {
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
		return o.m.DeleteVersions(ctx, tx, t, branch, ranges)
	}
	var total int64
	for _, r := range ranges {
		n, err := tx.Exec(ctx, `DELETE FROM table_versions WHERE table_id = ? AND branch = ? AND version >= ?
			AND (? < 0 OR version < ?)`, t.RowID, branch, r.Start, r.End, r.End)
		if err != nil {
			return 0, internal("delete versions", err)
		}
		total += n
	}
	return total, nil
}
