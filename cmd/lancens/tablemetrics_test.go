package main

import (
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lancens/lancens/client"
)

// TestServeTableMetricsFlags serves with the per-table metrics flags and
// checks /metrics follows them: one table of its own, the rest summed.
func TestServeTableMetricsFlags(t *testing.T) {
	addr, _ := startServe(t, "--table-metrics-interval", "50ms", "--table-metrics-limit", "1")
	c, err := client.New("http://" + addr)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a", "b", "c"} {
		if _, err := c.Table(name).Create(t.Context(), client.Structs([]traceRow{{1, []float32{0, 1}}}), nil); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{`lancens_table_rows{table="(other)"} 2`, `lancens_table_rows{table="a"} 1`}
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		var got []string
		for _, line := range strings.Split(string(body), "\n") {
			if strings.HasPrefix(line, "lancens_table_rows{") {
				got = append(got, line)
			}
		}
		slices.Sort(got)
		if slices.Equal(got, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("/metrics has %q, want %q", got, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
