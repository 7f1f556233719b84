package engine

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/lancens/lancens/store"
)

// What plans say of indexes (explain.go).

// explainVectorIndex describes how a vector search of field fi goes:
// through an index (its name, then a line of how) or exactly. It returns
// the errors of vectorIndexFor.
func (rd *reader) explainVectorIndex(ctx context.Context, vs *store.VectorSearch, fi int) (how, detail string, err error) {
	used, metric, err := rd.vectorIndexFor(ctx, vs, fi)
	if err != nil {
		return "", "", err
	}
	if used == nil {
		return "exact search (flat; no index, or bypassed)", fmt.Sprintf("  metric: %s\n", metric.String()), nil
	}
	rest := "the others searched exactly (flat)"
	if vs.FastSearch {
		rest = "the others left out (fast_search)"
	}
	return fmt.Sprintf("search through %s index %s", used.rec.Type, used.rec.Name),
		fmt.Sprintf("  index: metric %s, nprobes %d, ef %d, refine_factor %d; covers %d of %d fragments, %s\n",
			metric.String(), vs.Nprobes, vs.Ef, vs.RefineFactor, len(used.cov.covered), len(rd.s.ds.Manifest().Fragments), rest), nil
}

// explainText describes a full-text search. It returns InvalidInput (13)
// when the table has no full-text index, as the search does.
func (rd *reader) explainText(ctx context.Context, q store.Query) (string, error) {
	cols, err := rd.textIndexes(ctx)
	if err != nil {
		return "", err
	}
	if len(cols) == 0 {
		return "", store.Errorf(store.CodeInvalidInput, "table %s has no full-text index; create an INVERTED index first", displayID(rd.ref.id))
	}
	k := q.Limit
	if k <= 0 {
		k = store.DefaultSearchK
	}
	var sb strings.Builder
	m := rd.s.ds.Manifest()
	fmt.Fprintf(&sb, "FTS: full-text search (BM25 scores) of table %s at version %d, %d fragments, %d rows\n  k: %d\n",
		displayID(rd.ref.id), m.Version, len(m.Fragments), m.Rows(), k)
	for _, name := range slices.Sorted(maps.Keys(cols)) {
		c := cols[name]
		cov, err := rd.coverageOf(c.rec.build, c.col)
		if err != nil {
			return "", dataError(rd.ref.id, err)
		}
		fmt.Fprintf(&sb, "  column %s: INVERTED index %s over %d of %d fragments, the others analysed when first searched\n",
			name, c.rec.Name, len(cov.covered), len(m.Fragments))
	}
	if q.Filter != "" {
		fmt.Fprintf(&sb, "  filter (prefilter): %s\n", q.Filter)
	}
	return sb.String(), nil
}

// explainNarrowing describes what scalar indexes answer of a scan's
// filter, or "" when none does. It returns the errors of narrowFilter.
func (rd *reader) explainNarrowing(ctx context.Context, filter string) (string, error) {
	if err := rd.narrowFilter(ctx, filter); err != nil {
		return "", err
	}
	n := rd.narrowed
	if n == nil {
		return "", nil
	}
	used := slices.Compact(slices.Sorted(slices.Values(n.used)))
	return fmt.Sprintf("ScalarIndexQuery: %s; the filter is evaluated on the rows they leave in %d of %d fragments, on every row of the others",
		strings.Join(used, ", "), len(n.frags), len(rd.s.ds.Manifest().Fragments)), nil
}
