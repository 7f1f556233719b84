package legacy

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/store/sqlite/internal/sqlitedb"
)

// A conversion is resumable: the location of a table's dataset is
// recorded (legacy_conversions, a table this package creates and drops)
// before any file is written there, so that a conversion a crash stopped
// finds its files again, removes them and starts over; the catalog is
// switched to the dataset in one transaction (Record), which also drops
// the rows. Until then the table is what it was.

// Reserve returns the location recorded for the dataset of table r, and
// whether it was recorded by an earlier, unfinished conversion (whose
// files the caller removes first). Without one, it records the location
// allocate returns. It returns the errors of allocate and the database's.
func Reserve(ctx context.Context, st Store, r Ref, allocate func() (string, error)) (location string, earlier bool, err error) {
	err = st.WriteLegacy(ctx, func(tx Tx) error {
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS legacy_conversions (
			table_id INTEGER PRIMARY KEY, uuid TEXT NOT NULL, location TEXT NOT NULL)`); err != nil {
			return fmt.Errorf("record the conversion: %w", err)
		}
		err := tx.QueryRow(ctx, `SELECT location FROM legacy_conversions WHERE table_id = ? AND uuid = ?`, r.RowID, r.UUID).Scan(&location)
		if err == nil {
			earlier = true
			return nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("record the conversion: %w", err)
		}
		if location, err = allocate(); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT OR REPLACE INTO legacy_conversions (table_id, uuid, location) VALUES (?, ?, ?)`,
			r.RowID, r.UUID, location); err != nil {
			return fmt.Errorf("record the conversion: %w", err)
		}
		return nil
	})
	return location, earlier, err
}

// Abandoned returns the locations of conversions that never finished and
// whose table is gone or no longer managed (dropped or converted by other
// means): their files belong to nobody. It returns the database's error.
func Abandoned(ctx context.Context, st Store) ([]string, error) {
	var out []string
	err := st.ReadLegacy(ctx, func(tx Tx) error {
		out = nil
		if ok, err := hasTable(ctx, tx, "legacy_conversions"); err != nil || !ok {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT c.location FROM legacy_conversions c WHERE NOT EXISTS (
			SELECT 1 FROM tables t WHERE t.id = c.table_id AND t.uuid = c.uuid AND t.kind = 'managed')
			AND NOT EXISTS (SELECT 1 FROM tables t WHERE t.location = c.location)`)
		if err != nil {
			return fmt.Errorf("find abandoned conversions: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var loc string
			if err := rows.Scan(&loc); err != nil {
				return fmt.Errorf("find abandoned conversions: %w", err)
			}
			out = append(out, loc)
		}
		return rows.Err()
	})
	return out, err
}

// Forget removes the record of the conversion at location (its files are
// gone). It returns the database's error.
func Forget(ctx context.Context, st Store, location string) error {
	return st.WriteLegacy(ctx, func(tx Tx) error {
		_, err := tx.Exec(ctx, `DELETE FROM legacy_conversions WHERE location = ?`, location)
		return err
	})
}

// Manifest is the manifest of one converted version: its path as the
// catalog records manifest paths (an object-store path) and its size.
type Manifest struct {
	Branch  string
	Version int64
	Path    string
	Size    int64
}

// Record makes table t the Lance dataset at location, whose manifests
// are manifests (one per recorded version of every branch), in one
// transaction: the catalog entry's kind and location change (uuid,
// properties, versions, tags, branches and transaction history stay), the
// version records name the manifests, and the rows tables, their indexes,
// schemas and layouts are dropped. Index definitions stay in
// table_indexes, emptied and marked BUILDING, until RebuildIndexes has
// built them again on the dataset; the row store's queued index builds,
// backfills and cleanups of the table are canceled (a materialized view's
// definition and its queued refreshes stay: they name tables, not rows).
// A ConvertTable transaction is recorded. It returns TableNotFound (4)
// when t is no longer managed, InvalidInput (13) for a location that
// clashes with another table's, an error for a version without its
// manifest, and the database's.
func Record(ctx context.Context, st Store, t *Table, location string, manifests []Manifest) error {
	type key struct {
		branch  string
		version int64
	}
	byVersion := map[key]Manifest{}
	for _, m := range manifests {
		byVersion[key{m.Branch, m.Version}] = m
	}
	var versions int64
	for _, l := range t.Lines {
		for _, v := range l.Versions {
			if _, ok := byVersion[key{l.Branch, v.Version}]; !ok {
				return fmt.Errorf("version %d of branch %q has no manifest", v.Version, l.Branch)
			}
			versions++
		}
	}
	return st.WriteLegacy(ctx, func(tx Tx) error {
		if err := tx.Ops().ConvertManaged(ctx, tx.Catalog(), t.RowID, t.UUID, location); err != nil {
			return err
		}
		for _, m := range manifests {
			if _, err := tx.Exec(ctx, `UPDATE table_versions SET manifest_path = ?, staged_path = ?, manifest_size = ?, e_tag = NULL
				WHERE table_id = ? AND branch = ? AND version = ?`, m.Path, m.Path, m.Size, t.RowID, m.Branch, m.Version); err != nil {
				return fmt.Errorf("record version %d: %w", m.Version, err)
			}
		}
		if err := dropRows(ctx, tx, t); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE transactions SET status = ?, updated_at = ?,
			properties = json_set(properties, '$.error', 'canceled: the table was converted into a Lance dataset')
			WHERE table_uuid = ? AND status IN (?, ?) AND kind IN (?, ?, ?)`,
			string(store.TxCanceled), tx.Catalog().Now().UnixMilli(), t.UUID, string(store.TxQueued), string(store.TxRunning),
			store.JobBuildIndex, store.JobBackfillColumn, store.JobCleanupVersions); err != nil {
			return fmt.Errorf("cancel the table's jobs: %w", err)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM legacy_conversions WHERE table_id = ?`, t.RowID); err != nil {
			return fmt.Errorf("record the conversion: %w", err)
		}
		entry := &store.Table{ID: t.ID, UUID: t.UUID}
		_, err := tx.Ops().RecordTx(ctx, tx.Catalog(), "ConvertTable", entry, store.TxSucceeded, map[string]string{
			"location": location, "versions": strconv.FormatInt(versions, 10)}, nil)
		return err
	})
}

// dropRows drops the rows tables of every line of t with their indexes
// and triggers, the full-text and label-list tables of its indexes, and
// its schemas and layouts; the index definitions stay for RebuildIndexes.
func dropRows(ctx context.Context, tx Tx, t *Table) error {
	names := []string{}
	for _, l := range t.Lines {
		if l.HasRows() {
			names = append(names, l.rows)
		}
	}
	rows, err := tx.Query(ctx, `SELECT id FROM table_indexes WHERE table_id = ?`, t.RowID)
	if err != nil {
		return fmt.Errorf("list indexes: %w", err)
	}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return fmt.Errorf("list indexes: %w", err)
		}
		names = append(names, fmt.Sprintf("rows_%d_i%d", t.RowID, id))
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("list indexes: %w", err)
	}
	for _, name := range names {
		if _, err := tx.Exec(ctx, `DROP TABLE IF EXISTS `+name); err != nil {
			return fmt.Errorf("drop %s: %w", name, err)
		}
	}
	for _, q := range []string{
		`DELETE FROM table_schemas WHERE table_id = ?`,
		`DELETE FROM branch_schemas WHERE table_id = ?`,
		`DELETE FROM branch_lines WHERE table_id = ?`,
		`DELETE FROM managed_tables WHERE table_id = ?`,
		`UPDATE table_indexes SET data = NULL, status = 'BUILDING', error = NULL, built_version = NULL, max_rowid = NULL WHERE table_id = ?`,
	} {
		if _, err := tx.Exec(ctx, q, t.RowID); err != nil {
			return fmt.Errorf("drop the rows' records: %w", err)
		}
	}
	return nil
}

// IndexDef is the definition of an index of a converted table, still to
// be built on its dataset.
type IndexDef struct {
	// RowID is the definition's row in table_indexes.
	RowID int64
	Table []string
	Spec  store.IndexSpec
}

// PendingIndexes returns the index definitions of converted tables that
// RebuildIndexes has not built yet. It returns the database's error, and
// an error for parameters that do not decode.
func PendingIndexes(ctx context.Context, st Store) ([]IndexDef, error) {
	var out []IndexDef
	err := st.ReadLegacy(ctx, func(tx Tx) error {
		out = nil
		rows, err := tx.Query(ctx, `SELECT i.id, t.uuid, i.name, i.index_type, i.column_path, i.metric, i.params
			FROM table_indexes i JOIN tables t ON t.id = i.table_id WHERE t.kind <> 'managed' ORDER BY i.id`)
		if err != nil {
			return fmt.Errorf("list index definitions: %w", err)
		}
		var uuids []string
		for rows.Next() {
			var d IndexDef
			var uuid, params string
			if err := rows.Scan(&d.RowID, &uuid, &d.Spec.Name, &d.Spec.Type, &d.Spec.Column, &d.Spec.Metric, &params); err != nil {
				rows.Close()
				return fmt.Errorf("list index definitions: %w", err)
			}
			var p struct {
				Vector store.VectorIndexParams `json:"vector"`
				Text   store.TextIndexParams   `json:"text"`
			}
			if err := json.Unmarshal([]byte(params), &p); err != nil {
				rows.Close()
				return fmt.Errorf("index %s: parameters: %w", d.Spec.Name, err)
			}
			d.Spec.Vector, d.Spec.Text, d.Spec.Replace = p.Vector, p.Text, true
			out = append(out, d)
			uuids = append(uuids, uuid)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for i := range out {
			if out[i].Table, err = tx.Ops().TableIDByUUID(ctx, tx.Catalog(), uuids[i]); err != nil {
				return err
			}
		}
		return nil
	})
	return out, err
}

// IndexRebuilt removes the definition d, which the engine now keeps. It
// returns the database's error.
func IndexRebuilt(ctx context.Context, st Store, d IndexDef) error {
	return st.WriteLegacy(ctx, func(tx Tx) error {
		_, err := tx.Exec(ctx, `DELETE FROM table_indexes WHERE id = ?`, d.RowID)
		return err
	})
}

// Finish removes what the row store leaves once no managed table is left:
// the staging tables of writes a crash interrupted, and this package's
// record of conversions. It does nothing while managed tables remain. It
// returns the database's error.
func Finish(ctx context.Context, st Store) error {
	return st.WriteLegacy(ctx, func(tx Tx) error {
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM tables WHERE kind = 'managed'`).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return nil
		}
		rows, err := tx.Query(ctx, `SELECT name FROM sqlite_master WHERE type = 'table' AND (name LIKE 'staging\_%' ESCAPE '\' OR name = 'legacy_conversions')`)
		if err != nil {
			return err
		}
		var names []string
		for rows.Next() {
			var name string
			if err := rows.Scan(&name); err != nil {
				rows.Close()
				return err
			}
			names = append(names, name)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, name := range names {
			if _, err := tx.Exec(ctx, `DROP TABLE IF EXISTS "`+strings.ReplaceAll(name, `"`, `""`)+`"`); err != nil {
				return fmt.Errorf("drop %s: %w", name, err)
			}
		}
		return nil
	})
}

func hasTable(ctx context.Context, tx Tx, name string) (bool, error) {
	var n int
	err := tx.QueryRow(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?`, name).Scan(&n)
	return n > 0, err
}

// vacuumPages bounds the pages one incremental vacuum transaction frees.
const vacuumPages = 4096

// GiveBackSpace returns the database's free pages (those of dropped rows)
// to the file system, a bounded number per transaction, so that other
// writes wait little. A database whose auto_vacuum is not INCREMENTAL
// (made before lancens set it, and too large for Open to convert) keeps
// them for reuse. It returns the database's error.
func GiveBackSpace(ctx context.Context, st Store) error {
	for {
		var free int64
		err := st.WriteLegacy(ctx, func(tx Tx) error {
			var mode int
			if err := tx.QueryRow(ctx, `PRAGMA auto_vacuum`).Scan(&mode); err != nil {
				return fmt.Errorf("vacuum: %w", err)
			}
			if mode != sqlitedb.AutoVacuumIncremental {
				return nil
			}
			if err := tx.QueryRow(ctx, `PRAGMA freelist_count`).Scan(&free); err != nil {
				return fmt.Errorf("vacuum: %w", err)
			}
			if free == 0 {
				return nil
			}
			if _, err := tx.Exec(ctx, fmt.Sprintf(`PRAGMA incremental_vacuum(%d)`, vacuumPages)); err != nil {
				return fmt.Errorf("vacuum: %w", err)
			}
			return nil
		})
		if err != nil || free <= vacuumPages {
			return err
		}
	}
}

// DropRows drops the rows tables of the managed table whose catalog row is
// rowID (rows_N and its lines' and indexes' rows_N_…), with their indexes
// and triggers: what its catalog entry's deletion does not take with it
// (ON DELETE CASCADE does the rest). It returns the database's error.
func DropRows(ctx context.Context, tx Tx, rowID int64) error {
	prefix := fmt.Sprintf("rows_%d", rowID)
	rows, err := tx.Query(ctx, `SELECT name FROM sqlite_master WHERE type = 'table' AND (name = ? OR name LIKE ? ESCAPE '\')`,
		prefix, prefix+`\_%`)
	if err != nil {
		return fmt.Errorf("list the rows tables of table %d: %w", rowID, err)
	}
	var names []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return fmt.Errorf("list the rows tables of table %d: %w", rowID, err)
		}
		names = append(names, name)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("list the rows tables of table %d: %w", rowID, err)
	}
	for _, name := range names {
		if _, err := tx.Exec(ctx, `DROP TABLE IF EXISTS "`+name+`"`); err != nil {
			return fmt.Errorf("drop %s: %w", name, err)
		}
	}
	return nil
}
