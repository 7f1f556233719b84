package sqlite

import (
	"context"
	"fmt"
	"strings"

	"github.com/lancens/lancens/store"
)

// Describe implements store.ManagedData.
func (db *DB) Describe(ctx context.Context, id []string, version *int64) (*store.TableData, error) {
	var out *store.TableData
	err := db.read(ctx, func(tx *Tx) error {
		t, err := findManaged(ctx, tx, id)
		if err != nil {
			return err
		}
		v, ts, err := schemaAt(ctx, tx, t, version)
		if err != nil {
			return err
		}
		rec, err := getVersion(ctx, tx, t, t.branch, v)
		if err != nil {
			return err
		}
		out = &store.TableData{Version: v, Schema: ts.arrow, Timestamp: rec.Timestamp}
		if out.View, err = findView(ctx, tx, t); err != nil {
			return err
		}
		// A fragment is the rows one version wrote (one _from), as long as
		// version v still shows one of them; its deleted rows are the ones
		// v no longer shows (deleted, or replaced by an update). That is
		// Lance's accounting: an update or delete marks rows deleted in
		// their fragment, and a fragment left with no row is dropped.
		q := fmt.Sprintf(`WITH live AS (SELECT DISTINCT _from FROM %[1]s WHERE _from <= ?1 AND _to > ?1)
			SELECT count(*) FILTER (WHERE _to > ?1), count(*) FILTER (WHERE _to <= ?1), (SELECT count(*) FROM live)
			FROM %[1]s WHERE _from IN live`, dataTable(t))
		if err := tx.QueryRow(ctx, q, v).Scan(&out.NumRows, &out.Deleted, &out.Fragments); err != nil {
			return internal("describe", err)
		}
		return nil
	})
	return out, err
}

// Stats implements store.ManagedData.
func (db *DB) Stats(ctx context.Context, id []string) (*store.TableStats, error) {
	out := &store.TableStats{FragmentRows: []int64{}}
	err := db.read(ctx, func(tx *Tx) error {
		t, err := findManaged(ctx, tx, id)
		if err != nil {
			return err
		}
		v, ts, err := schemaAt(ctx, tx, t, nil)
		if err != nil {
			return err
		}
		// Fixed-width values count 8 bytes; text and blobs their length.
		var size []string
		for _, fl := range ts.fields {
			for _, c := range fl.Columns() {
				size = append(size, fmt.Sprintf("coalesce(CASE typeof(%[1]s) WHEN 'text' THEN length(CAST(%[1]s AS BLOB)) WHEN 'blob' THEN length(%[1]s) ELSE 8 END, 0)", quoteColumn(c)))
			}
		}
		// The fragments are those of the latest version (see Describe),
		// with all their rows, the deleted ones included, as Lance counts
		// a fragment's rows and bytes. Rows a staged write is adding
		// (_from past the latest version) are not counted.
		rows, err := tx.Query(ctx, fmt.Sprintf(`SELECT count(*) FILTER (WHERE _to = ?1), count(*), sum(%[1]s) FROM %[2]s
			WHERE _from IN (SELECT _from FROM %[2]s WHERE _to = ?1 AND _from <= ?2) GROUP BY _from ORDER BY _from`,
			strings.Join(size, " + "), dataTable(t)), maxVersion, v)
		if err != nil {
			return internal("stats", err)
		}
		defer rows.Close()
		for rows.Next() {
			var live, n, bytes int64
			if err := rows.Scan(&live, &n, &bytes); err != nil {
				return internal("stats", err)
			}
			out.NumRows += live
			out.TotalBytes += bytes
			out.FragmentRows = append(out.FragmentRows, n)
		}
		if err := rows.Err(); err != nil {
			return internal("stats", err)
		}
		out.NumIndices, err = numIndices(ctx, tx, t)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
