package sqlite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/store/sqlite/legacy"
)

// Version retention of managed tables. A cleanup has three steps, each in
// write transactions of bounded size, so that other writes commit in
// between and reads never wait:
//
//  1. expire: the version records the retention policy lets go are
//     deleted (one transaction). From then on those versions answer
//     TableVersionNotFound; a read that resolved one before keeps reading
//     it in its own snapshot (WAL), which the deletes below do not change.
//  2. sweep: on each line (main and every branch), the row versions no
//     remaining version record shows are deleted, with their full-text and
//     label-list index entries, a chunk at a time. A row [from, to) is
//     needed while some recorded version r of its line has from <= r < to;
//     between consecutive recorded versions lo < hi, the rows with
//     lo < from and to <= hi are not.
//  3. give back: the database's free pages are returned to the file system
//     (incremental vacuum), a bounded number per transaction. The sweep
//     itself leaves no mostly empty pages behind: SQLite merges underfull
//     b-tree pages as rows are deleted, so the pages a sweep empties end
//     up free.

var _ store.VersionCleanup = (*DB)(nil)

// sweepChunk bounds the row versions one sweep transaction deletes.
const sweepChunk = 20000

// removable is the SQL condition of a version record v (of table ?1,
// committed before ?2) that nothing keeps: not the latest of its branch,
// not tagged, not a version a branch forks from.
const removable = `v.timestamp_millis < ?2
	AND v.version < (SELECT max(l.version) FROM table_versions l WHERE l.table_id = v.table_id AND l.branch = v.branch)
	AND NOT EXISTS (SELECT 1 FROM table_tags g WHERE g.table_id = v.table_id AND g.branch = v.branch AND g.version = v.version)
	AND NOT EXISTS (SELECT 1 FROM table_branches b WHERE b.table_id = v.table_id AND b.parent_branch = v.branch AND b.parent_version = v.version)`

// CleanupVersions implements store.VersionCleanup.
func (db *DB) CleanupVersions(ctx context.Context, id []string, before time.Time) (store.CleanupResult, string, error) {
	ctx = onBranch(ctx, "")
	var uuid string
	err := db.read(ctx, func(tx *Tx) error {
		t, err := findManaged(ctx, tx, id)
		if err != nil {
			return err
		}
		uuid = t.UUID
		return nil
	})
	if err != nil {
		return store.CleanupResult{}, "", err
	}
	res, err := db.cleanup(ctx, uuid, before.UnixMilli())
	if err != nil {
		return res, "", err
	}
	var txID string
	err = db.write(ctx, func(tx *Tx) error {
		t, err := findManagedByUUID(ctx, tx, uuid)
		if err != nil {
			return err
		}
		txID, err = recordTx(ctx, tx, "CleanupVersions", &t.Table, store.TxSucceeded, map[string]string{
			"versions_removed": strconv.FormatInt(res.Versions, 10), "rows_removed": strconv.FormatInt(res.Rows, 10),
			"bytes_freed": strconv.FormatInt(res.BytesFreed, 10)}, nil)
		return err
	})
	return res, txID, err
}

// Optimize implements store.VersionCleanup: rows are not kept in
// fragments here, so there is nothing to compact, and it cleans up.
func (db *DB) Optimize(ctx context.Context, id []string, before time.Time) (store.CleanupResult, string, error) {
	return db.CleanupVersions(ctx, id, before)
}

// RunCleanup implements store.VersionCleanup.
func (db *DB) RunCleanup(ctx context.Context, job store.CleanupVersions) (store.CleanupResult, error) {
	res, err := db.cleanup(onBranch(ctx, ""), job.TableUUID, job.BeforeMillis)
	if errors.Is(err, store.ErrTableNotFound) {
		return res, nil // dropped meanwhile: nothing left to clean
	}
	return res, err
}

// QueueCleanups implements store.VersionCleanup.
func (db *DB) QueueCleanups(ctx context.Context, before time.Time) (int, error) {
	ctx = onBranch(ctx, "")
	cutoff := before.UnixMilli()
	n := 0
	err := db.write(ctx, func(tx *Tx) error {
		uuids, err := queryStrings(ctx, tx, `SELECT t.uuid FROM tables t WHERE t.kind = 'managed'
			AND EXISTS (SELECT 1 FROM table_versions v WHERE v.table_id = t.id AND `+removable+`)
			AND NOT EXISTS (SELECT 1 FROM transactions x WHERE x.status = 'Queued' AND x.kind = ?3 AND x.table_uuid = t.uuid)
			ORDER BY t.id`, nil, cutoff, store.JobCleanupVersions)
		if err != nil {
			return err
		}
		for _, uuid := range uuids {
			t, err := findManagedByUUID(ctx, tx, uuid)
			if err != nil {
				return err
			}
			if _, err := queueCleanup(ctx, tx, t, cutoff); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return n, err
}

// queueCleanup queues a cleanup of t removing the versions committed
// before the time beforeMillis (0: none, only the rows of versions gone).
func queueCleanup(ctx context.Context, tx *Tx, t *tableRow, beforeMillis int64) (string, error) {
	return recordTx(ctx, tx, store.JobCleanupVersions, &t.Table, store.TxQueued, nil,
		store.CleanupVersions{TableUUID: t.UUID, BeforeMillis: beforeMillis})
}

// cleanup removes the versions of table uuid committed before beforeMillis
// that nothing keeps, the rows no remaining version shows, and the space
// they took. Returns TableNotFound (4) when the table is gone.
func (db *DB) cleanup(ctx context.Context, uuid string, beforeMillis int64) (store.CleanupResult, error) {
	var res store.CleanupResult
	startBytes, err := db.fileBytes(ctx)
	if err != nil {
		return res, err
	}
	var lines []tableLine
	err = db.write(ctx, func(tx *Tx) error {
		t, err := findManagedByUUID(ctx, tx, uuid)
		if err != nil {
			return err
		}
		if beforeMillis > 0 {
			r, err := tx.ExecCached(ctx, `DELETE FROM table_versions AS v WHERE v.table_id = ?1 AND `+removable, t.rowID, beforeMillis)
			if err != nil {
				return internal("remove versions", err)
			}
			if res.Versions, err = r.RowsAffected(); err != nil {
				return internal("remove versions", err)
			}
		}
		lines, err = linesOf(ctx, tx, t)
		return err
	})
	if err != nil {
		return res, err
	}
	for _, l := range lines {
		n, err := db.sweepLine(ctx, uuid, l)
		res.Rows += n
		if err != nil {
			return res, err
		}
	}
	if err := legacy.GiveBackSpace(ctx, db); err != nil {
		return res, err
	}
	endBytes, err := db.fileBytes(ctx)
	if err != nil {
		return res, err
	}
	res.BytesFreed = max(0, startBytes-endBytes)
	return res, nil
}

// sweepLine deletes the row versions of line l of table uuid that no
// version record of the line shows, and their index entries, a chunk per
// transaction. It returns how many it deleted.
func (db *DB) sweepLine(ctx context.Context, uuid string, l tableLine) (int64, error) {
	var total int64
	for {
		var n int
		err := db.write(ctx, func(tx *Tx) error {
			t, err := findManagedByUUID(ctx, tx, uuid)
			if err != nil {
				return err
			}
			t = t.onLine(l)
			if l.line != 0 {
				var exists int
				if err := tx.QueryRowCached(ctx, `SELECT count(*) FROM branch_lines WHERE table_id = ? AND line = ?`, t.rowID, l.line).Scan(&exists); err != nil {
					return internal("sweep rows", err)
				}
				if exists == 0 {
					return nil // the branch was deleted meanwhile
				}
			}
			gaps, err := versionGaps(ctx, tx, t)
			if err != nil || gaps == "" {
				return err
			}
			// The row with the highest row id stays, seen by no version:
			// SQLite hands out the id after the highest left, and the
			// full-text index catches up only from ids above the last it
			// holds (see staging.go's tombstones).
			ids, err := queryInts(ctx, tx, fmt.Sprintf(`SELECT r._rowid FROM json_each(?) AS g CROSS JOIN %[1]s AS r
				WHERE r._to > g.value->>0 AND r._to <= g.value->>1 AND r._from > g.value->>0
				AND r._rowid < (SELECT max(_rowid) FROM %[1]s) LIMIT ?`, dataTable(t)), gaps, sweepChunk)
			if err != nil {
				return err
			}
			n = len(ids)
			if n == 0 {
				return nil
			}
			return deleteRows(ctx, tx, t, ids)
		})
		total += int64(n)
		if err != nil || n < sweepChunk {
			return total, err
		}
	}
}

// versionGaps returns, as a JSON array of [lo, hi] pairs, the spans
// between consecutive version records of t's line (from 0 before the
// first) in which a row can begin and end unseen; "" when there is none.
func versionGaps(ctx context.Context, tx *Tx, t *tableRow) (string, error) {
	versions, err := queryInts(ctx, tx, `SELECT version FROM table_versions WHERE table_id = ? AND branch = ? ORDER BY version`, t.rowID, t.branch)
	if err != nil {
		return "", err
	}
	var gaps [][2]int64
	prev := int64(0)
	for _, v := range versions {
		// A row visible at no version in (prev, v] starts after prev and
		// ends by v, so it needs two versions of room.
		if v-prev >= 2 {
			gaps = append(gaps, [2]int64{prev, v})
		}
		prev = v
	}
	if len(gaps) == 0 {
		return "", nil
	}
	b, err := json.Marshal(gaps)
	if err != nil {
		return "", internal("sweep rows", err)
	}
	return string(b), nil
}

// deleteRows deletes the row versions ids of t's line and their entries in
// its full-text and label-list indexes.
func deleteRows(ctx context.Context, tx *Tx, t *tableRow, ids []int64) error {
	idJSON, err := json.Marshal(ids)
	if err != nil {
		return internal("sweep rows", err)
	}
	targets := []struct{ table, column string }{{dataTable(t), "_rowid"}}
	indexes, err := listIndexRows(ctx, tx, t)
	if err != nil {
		return err
	}
	for _, r := range indexes {
		switch r.indexType {
		case store.IndexInverted:
			targets = append(targets, struct{ table, column string }{sqlIndexName(t, r), "rowid"})
		case store.IndexLabelList:
			targets = append(targets, struct{ table, column string }{sqlIndexName(t, r), "row"})
		}
	}
	for _, d := range targets {
		if _, err := tx.Exec(ctx, fmt.Sprintf(`DELETE FROM %s WHERE %s IN (SELECT value FROM json_each(?))`, d.table, d.column),
			string(idJSON)); err != nil {
			if strings.Contains(err.Error(), "no such table") {
				continue // an index whose build has not made its table yet
			}
			return internal("sweep rows", err)
		}
	}
	return nil
}

// queryInts runs a query of one integer column and returns its values.
func queryInts(ctx context.Context, tx *Tx, query string, args ...any) ([]int64, error) {
	rows, err := tx.Query(ctx, query, args...)
	if err != nil {
		return nil, queryError(ctx, err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var v int64
		if err := rows.Scan(&v); err != nil {
			return nil, internal("read", err)
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// fileBytes returns the size of the database: its pages.
func (db *DB) fileBytes(ctx context.Context) (int64, error) {
	var pages, size int64
	err := db.read(ctx, func(tx *Tx) error {
		if err := tx.QueryRow(ctx, `PRAGMA page_count`).Scan(&pages); err != nil {
			return internal("measure database", err)
		}
		return tx.QueryRow(ctx, `PRAGMA page_size`).Scan(&size)
	})
	return pages * size, err
}

// removeManagedVersions deletes the version records of managed table t on
// branch in ranges, refusing the ones something keeps, and queues the
// sweep of their rows. It returns how many it deleted. Returns
// InvalidInput (13) for the latest version of the branch, a tagged version
// or a version a branch forks from.
func removeManagedVersions(ctx context.Context, tx *Tx, t *tableRow, branch string, ranges []store.VersionRange) (int64, error) {
	var total int64
	for _, r := range ranges {
		kept, err := queryStrings(ctx, tx, `SELECT v.version || ': ' || CASE
				WHEN v.version = (SELECT max(l.version) FROM table_versions l WHERE l.table_id = v.table_id AND l.branch = v.branch) THEN 'the latest version'
				WHEN EXISTS (SELECT 1 FROM table_tags g WHERE g.table_id = v.table_id AND g.branch = v.branch AND g.version = v.version)
					THEN 'tagged ' || (SELECT group_concat(g.name, ', ') FROM table_tags g WHERE g.table_id = v.table_id AND g.branch = v.branch AND g.version = v.version)
				ELSE 'branch ' || (SELECT group_concat(b.name, ', ') FROM table_branches b WHERE b.table_id = v.table_id AND b.parent_branch = v.branch AND b.parent_version = v.version) || ' forks from it'
			END FROM table_versions v WHERE v.table_id = ?1 AND v.branch = ?5 AND v.version >= ?3 AND (?4 < 0 OR v.version < ?4) AND NOT (`+
			removable+`) ORDER BY v.version LIMIT 1`, t.rowID, maxVersion, r.Start, r.End, branch)
		if err != nil {
			return 0, err
		}
		if len(kept) > 0 {
			return 0, store.Errorf(store.CodeInvalidInput, "version %s of table %s cannot be removed", kept[0], displayID(t.ID))
		}
		res, err := tx.ExecCached(ctx, `DELETE FROM table_versions WHERE table_id = ? AND branch = ? AND version >= ? AND (? < 0 OR version < ?)`,
			t.rowID, branch, r.Start, r.End, r.End)
		if err != nil {
			return 0, internal("delete versions", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return 0, internal("delete versions", err)
		}
		total += n
	}
	if total > 0 {
		if _, err := queueCleanup(ctx, tx, t, 0); err != nil {
			return 0, err
		}
	}
	return total, nil
}
