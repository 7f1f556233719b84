package engine

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/lancens/lancens/store"
)

// ExplainQuery implements store.ManagedData: how q reads the table's
// dataset, and with analyze what it read and how long it took.
func (e *Engine) ExplainQuery(ctx context.Context, id []string, q store.Query, analyze bool) (string, error) {
	r, err := e.findData(ctx, id)
	if err != nil {
		return "", err
	}
	s, err := e.open(ctx, r, q.Version)
	if err != nil {
		return "", err
	}
	rd := e.reader(r, s)
	m := s.ds.Manifest()
	var sb strings.Builder
	var run func(*scanStats) error
	switch {
	case q.Text != nil:
		return "", store.Errorf(store.CodeUnsupported, "full-text search needs a full-text index, which tables of the Lance engine do not have yet")
	case q.Vector != nil:
		fi, err := vectorField(s.arrow, q.Vector.Column)
		if err != nil {
			return "", err
		}
		k := q.Limit
		if k <= 0 {
			k = defaultK
		}
		f := s.arrow.Field(fi)
		fmt.Fprintf(&sb, "Vector search of table %s at version %d\n  column: %s (%s)\n  k: %d, queries: %d\n  exact search over every fragment (flat)\n",
			displayID(id), m.Version, f.Name, f.Type, k, len(q.Vector.Vectors))
		if q.Filter != "" {
			mode := "prefilter"
			if q.Vector.Postfilter {
				mode = "postfilter"
			}
			fmt.Fprintf(&sb, "  filter (%s): %s\n", mode, q.Filter)
		}
		run = func(st *scanStats) error {
			_, err := rd.searchVectors(ctx, q, st)
			return err
		}
	default:
		plan, err := rd.planScan(q)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&sb, "Scan of table %s at version %d (Lance dataset at %s)\n", displayID(id), m.Version, r.t.Location)
		fmt.Fprintf(&sb, "  output: %s\n", plan.outSchm)
		if plan.filter != nil {
			fmt.Fprintf(&sb, "  filter: %s, evaluated in memory over columns %s\n", q.Filter, boundNames(plan.fcols))
		}
		if plan.order != nil {
			fmt.Fprintf(&sb, "  order by: %d keys over columns %s\n", len(q.OrderBy), boundNames(plan.ocols))
		}
		if q.Limit > 0 || q.Offset > 0 {
			fmt.Fprintf(&sb, "  offset %d, limit %d\n", q.Offset, q.Limit)
		}
		run = func(st *scanStats) error {
			res, err := rd.scan(ctx, plan, st)
			if err == nil {
				st.rowsMatched = 0
				for _, b := range res.Batches {
					st.rowsMatched += b.NumRows()
				}
			}
			return err
		}
	}
	fmt.Fprintf(&sb, "  fragments: %d, rows: %d, data format %s %s\n", len(m.Fragments), m.Rows(), m.DataFormat.FileFormat, m.DataFormat.Version)
	if analyze {
		var st scanStats
		start := time.Now()
		if err := run(&st); err != nil {
			return "", err
		}
		fmt.Fprintf(&sb, "  metrics: output_rows=%d fragments=%d rows_scanned=%d elapsed=%s\n", st.rowsMatched, st.fragments, st.rowsScanned, time.Since(start))
	}
	return sb.String(), nil
}

// boundNames lists the columns a binder binds, for plans.
func boundNames(b *colBinder) string {
	names := make([]string, len(b.used))
	for k, f := range b.batchSchema().Fields() {
		names[k] = f.Name
	}
	return "[" + strings.Join(names, ", ") + "]"
}
