package sqlite

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/lancens/lancens/store"
)

// ExplainQuery implements store.ManagedData.
func (db *DB) ExplainQuery(ctx context.Context, id []string, q store.Query, analyze bool) (string, error) {
	var out string
	err := db.read(ctx, func(tx *Tx) error {
		t, err := findManaged(ctx, tx, id)
		if err != nil {
			return err
		}
		if q.Vector != nil || q.Text != nil {
			out, err = db.explainSearch(ctx, tx, t, q, analyze)
			return err
		}
		pq, err := db.planQuery(ctx, tx, t, q)
		if err != nil {
			return err
		}
		var sb strings.Builder
		fmt.Fprintf(&sb, "Query of table %s at version %d\n", displayID(t.ID), pq.version)
		fmt.Fprintf(&sb, "  output: %s\n", pq.schema)
		if pq.note != "" {
			fmt.Fprintf(&sb, "  %s\n", pq.note)
		}
		fmt.Fprintf(&sb, "  sql: %s\n", pq.sql)
		rows, err := tx.Query(ctx, "EXPLAIN QUERY PLAN "+pq.sql, pq.args...)
		if err != nil {
			return queryError(ctx, err)
		}
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				rows.Close()
				return internal("explain", err)
			}
			fmt.Fprintf(&sb, "  plan: %s\n", detail)
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return queryError(ctx, err)
		}
		if analyze {
			start := time.Now()
			res, err := runQuery(ctx, tx, pq)
			if err != nil {
				return err
			}
			var n int64
			for _, b := range res.Batches {
				n += b.NumRows()
			}
			fmt.Fprintf(&sb, "  metrics: output_rows=%d batches=%d elapsed=%s\n", n, len(res.Batches), time.Since(start))
		}
		out = sb.String()
		return nil
	})
	return out, err
}

// explainSearch describes a vector or full-text search; with analyze it
// runs it and reports the rows and time.
func (db *DB) explainSearch(ctx context.Context, tx *Tx, t *tableRow, q store.Query, analyze bool) (string, error) {
	v, ts, err := schemaAt(ctx, tx, t, q.Version)
	if err != nil {
		return "", err
	}
	var sb strings.Builder
	k := q.Limit
	if k <= 0 {
		k = store.DefaultSearchK
	}
	if vs := q.Vector; vs != nil {
		f, fl, err := vectorColumn(ts, vs.Column)
		if err != nil {
			return "", err
		}
		idx, err := db.usableIndex(ctx, tx, t, fl.Column, v, vs)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&sb, "Vector search of table %s at version %d\n  column: %s (%s)\n  k: %d, queries: %d\n",
			displayID(t.ID), v, f.Name, f.Type, k, len(vs.Vectors))
		if idx != nil {
			p := idx.ix.Params()
			fmt.Fprintf(&sb, "  index: %v, metric %s, rows up to id %d indexed, nprobes %d, ef %d, refine %d\n",
				p.Kind, p.Metric.String(), idx.maxRowID, vs.Nprobes, vs.Ef, vs.RefineFactor)
			if !vs.FastSearch {
				sb.WriteString("  unindexed rows: exact scan\n")
			}
		} else {
			sb.WriteString("  exact search (no index or bypassed)\n")
		}
		if q.Filter != "" {
			mode := "prefilter"
			if vs.Postfilter {
				mode = "postfilter"
			}
			fmt.Fprintf(&sb, "  filter (%s): %s\n", mode, q.Filter)
		}
	} else {
		fmt.Fprintf(&sb, "Full-text search of table %s at version %d (inverted index in memory, BM25 scores)\n  k: %d\n", displayID(t.ID), v, k)
		if q.Filter != "" {
			fmt.Fprintf(&sb, "  filter: %s\n", q.Filter)
		}
	}
	if analyze {
		start := time.Now()
		var res *store.Result
		if q.Vector != nil {
			res, err = db.searchVectors(ctx, tx, t, q)
		} else {
			res, err = db.searchText(ctx, tx, t, q)
		}
		if err != nil {
			return "", err
		}
		var n int64
		for _, b := range res.Batches {
			n += b.NumRows()
		}
		fmt.Fprintf(&sb, "  metrics: output_rows=%d elapsed=%s\n", n, time.Since(start))
	}
	return sb.String(), nil
}
