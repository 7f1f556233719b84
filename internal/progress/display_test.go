package progress

import (
	"bytes"
	"strings"
	"testing"
)

// TestDisplay checks the final status each mode shows: a bar redrawn in
// place, a plain line, nothing.
func TestDisplay(t *testing.T) {
	for _, tc := range []struct {
		mode       DisplayMode
		status     Status
		want, deny []string
	}{
		{Bar, Status{Done: 512 << 10, Total: 1 << 20, Unit: "bytes", Rows: 42},
			[]string{"\r\x1b[K", "task: [============            ]  50% 512.0 KiB of 1.0 MiB, 42 rows, "}, nil},
		{Lines, Status{Done: 3, Total: 3, Unit: "rows", Rows: 3},
			[]string{"task: 100% 3 rows, "}, []string{"\r", "["}},
		{Lines, Status{Done: 100, Total: -1, Unit: "bytes", Rows: 1},
			[]string{"task: 100 B, 1 rows, "}, []string{"%"}},
	} {
		var buf bytes.Buffer
		Show(&buf, tc.mode, "task", func() Status { return tc.status }).Finish()
		out := buf.String()
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("mode %d shows %q, want %q in it", tc.mode, out, w)
			}
		}
		for _, d := range tc.deny {
			if strings.Contains(out, d) {
				t.Errorf("mode %d shows %q, want no %q in it", tc.mode, out, d)
			}
		}
		if !strings.HasSuffix(out, "\n") {
			t.Errorf("mode %d shows %q, not ending its line", tc.mode, out)
		}
	}
	var buf bytes.Buffer
	Show(&buf, Quiet, "task", func() Status { return Status{} }).Finish()
	if buf.Len() != 0 {
		t.Errorf("quiet shows %q", buf.String())
	}
	if m, err := ParseDisplayMode("auto", &buf); err != nil || m != Lines {
		t.Errorf("auto on a buffer is %d (%v), want lines", m, err)
	}
}
