package engine

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

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
		text, err := rd.explainText(ctx, q)
		if err != nil {
			return "", err
		}
		sb.WriteString(text)
		run = func(st *scanStats) error {
			_, err := rd.searchText(ctx, q, st)
			return err
		}
	case q.Vector != nil:
		fi, err := vectorField(s.arrow, q.Vector.Column)
		if err != nil {
			return "", err
		}
		k := q.Limit
		if k <= 0 {
			k = store.DefaultSearchK
		}
		f := s.arrow.Field(fi)
		how, detail, err := rd.explainVectorIndex(ctx, q.Vector, fi)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&sb, "KNNVectorDistance: %s of table %s at version %d, %d fragments, %d rows\n  column: %s (%s)\n  k: %d, queries: %d\n%s",
			how, displayID(id), m.Version, len(m.Fragments), m.Rows(), f.Name, f.Type, k, len(q.Vector.Vectors), detail)
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
		// The shape of Lance's own plans, outermost first.
		indent := ""
		line := func(format string, args ...any) {
			fmt.Fprintf(&sb, indent+format+"\n", args...)
			indent += "  "
		}
		line("ProjectionExec: output=[%s]", fieldNames(plan.outSchm))
		if q.Limit > 0 || q.Offset > 0 {
			line("GlobalLimitExec: skip=%d, fetch=%d", q.Offset, q.Limit)
		}
		if plan.order != nil {
			line("SortExec: keys over [%s]", boundNames(plan.ocols))
		}
		if plan.filter != nil {
			how := "over Arrow"
			if plan.filter.values != nil {
				how = "over cached values"
			}
			line("FilterExec: %s (evaluated in memory %s, columns [%s]; then the rows kept taken)", q.Filter, how, boundNames(plan.filter.cols))
			narrowed, err := rd.explainNarrowing(ctx, q.Filter)
			if err != nil {
				return "", err
			}
			if narrowed != "" {
				line("%s", narrowed)
			}
		}
		line("LanceScan: table=%s, version=%d, uri=%s, fragments=%d, rows=%d, format=%s %s",
			displayID(id), m.Version, r.t.Location, len(m.Fragments), m.Rows(), m.DataFormat.FileFormat, m.DataFormat.Version)
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
	if analyze {
		var st scanStats
		start := time.Now()
		if err := run(&st); err != nil {
			return "", dataError(id, err)
		}
		fmt.Fprintf(&sb, "metrics: output_rows=%d fragments=%d rows_scanned=%d elapsed=%s\n", st.rowsMatched, st.fragments, st.rowsScanned, time.Since(start))
	}
	return sb.String(), nil
}

// boundNames lists the columns a binder binds, for plans.
func boundNames(b *colBinder) string { return fieldNames(b.batchSchema()) }

// fieldNames lists the fields of s, for plans.
func fieldNames(s *arrow.Schema) string {
	names := make([]string, s.NumFields())
	for k, f := range s.Fields() {
		names[k] = f.Name
	}
	return strings.Join(names, ", ")
}
