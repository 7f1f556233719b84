package conformance

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// maxMessages is how many messages of a failed case a report shows unless
// it is verbose: the last ones, where the failure is.
const maxMessages = 12

// WriteGroupLine writes one line of counts for a top-level result, as the
// groups end.
func WriteGroupLine(w io.Writer, r *Result) {
	c := r.Count()
	fmt.Fprintf(w, "%-18s %s (%s)\n", r.Path, c, r.Elapsed.Round(time.Millisecond))
}

// String renders counts as "N passed, M failed, K unsupported", with the
// skipped when there are any.
func (c Counts) String() string {
	s := fmt.Sprintf("%d passed, %d failed, %d unsupported", c.Passed, c.Failed, c.Unsupported)
	if c.Skipped > 0 {
		s += fmt.Sprintf(", %d skipped", c.Skipped)
	}
	return s
}

// WriteReport writes what a run found: each failed case with its messages,
// the capability gaps grouped by where they are, then a table of counts
// per top-level group. Verbose also lists every case and every message.
func WriteReport(w io.Writer, res *Result, verbose bool) {
	if verbose {
		res.Walk(func(r *Result) {
			if r.Path == "" {
				return
			}
			fmt.Fprintf(w, "%-11s %s (%s)\n", r.Status, r.Path, r.Elapsed.Round(time.Millisecond))
			for _, m := range r.Messages {
				fmt.Fprintf(w, "    %s\n", indent(m))
			}
		})
		fmt.Fprintln(w)
	}
	failed := 0
	res.Walk(func(r *Result) {
		if r.Status != Failed {
			return
		}
		failed++
		fmt.Fprintf(w, "FAIL %s\n", r.Path)
		msgs := r.Messages
		if !verbose && len(msgs) > maxMessages {
			fmt.Fprintf(w, "    … %d earlier messages (--verbose shows them)\n", len(msgs)-maxMessages)
			msgs = msgs[len(msgs)-maxMessages:]
		}
		for _, m := range msgs {
			fmt.Fprintf(w, "    %s\n", indent(m))
		}
	})
	if failed > 0 {
		fmt.Fprintln(w)
	}
	writeGaps(w, res)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "group\tpassed\tfailed\tunsupported\tskipped\t")
	for _, g := range res.Children {
		c := g.Count()
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t\n", g.Path, c.Passed, c.Failed, c.Unsupported, c.Skipped)
	}
	tw.Flush()
}

// writeGaps lists the unsupported cases by their first two path parts, with
// the first reason given in each.
func writeGaps(w io.Writer, res *Result) {
	type gap struct {
		n      int
		reason string
	}
	gaps := map[string]*gap{}
	res.Walk(func(r *Result) {
		if r.Status != Unsupported {
			return
		}
		parts := strings.SplitN(r.Path, "/", 3)
		key := strings.Join(parts[:min(2, len(parts))], "/")
		g := gaps[key]
		if g == nil {
			g = &gap{}
			if len(r.Messages) > 0 {
				g.reason = r.Messages[len(r.Messages)-1]
			}
			gaps[key] = g
		}
		g.n++
	})
	if len(gaps) == 0 {
		return
	}
	keys := make([]string, 0, len(gaps))
	for k := range gaps {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fmt.Fprintln(w, "Capability gaps (answered Unsupported, or not claimed):")
	for _, k := range keys {
		g := gaps[k]
		reason := g.reason
		if i := strings.IndexByte(reason, '\n'); i >= 0 {
			reason = reason[:i]
		}
		if len(reason) > 160 {
			reason = reason[:160] + "…"
		}
		fmt.Fprintf(w, "  %s: %d unsupported — %s\n", k, g.n, reason)
	}
	fmt.Fprintln(w)
}

func indent(s string) string {
	return strings.ReplaceAll(s, "\n", "\n    ")
}
