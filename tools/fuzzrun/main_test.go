package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestFuzzAll fuzzes the two targets of testdata/targets (a copy of it):
// the slow one passes once its time is up, stopped by the interrupt, and
// the failing one fails and leaves its input under testdata/fuzz.
func TestFuzzAll(t *testing.T) {
	if testing.Short() {
		t.Skip("builds an instrumented test binary")
	}
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("testdata/targets")); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	r := runner{goCmd: "go", dir: dir, out: &out, limit: fuzzLimit{duration: 2 * time.Second}, minimizeTime: "1s"}
	start := time.Now()
	failed, err := r.fuzzAll(context.Background(), []string{"./..."})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(failed, []string{"FuzzFails"}) {
		t.Errorf("failed %v, want [FuzzFails]\n%s", failed, out.String())
	}
	if took := time.Since(start); took < r.limit.duration {
		t.Errorf("both targets took %s, less than FuzzSlow's %s", took, r.limit.duration)
	}
	if !strings.Contains(out.String(), "== FuzzSlow (example.com/fuzzrun-targets, 2s)") {
		t.Errorf("output does not announce FuzzSlow:\n%s", out.String())
	}
	inputs, err := os.ReadDir(filepath.Join(dir, "testdata", "fuzz", "FuzzFails"))
	if err != nil || len(inputs) == 0 {
		t.Errorf("FuzzFails left no failing input (%v):\n%s", err, out.String())
	}
}

// TestParseFuzzTime: durations and counts are taken, anything else refused.
func TestParseFuzzTime(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want fuzzLimit
		ok   bool
	}{
		{"4s", fuzzLimit{duration: 4 * time.Second}, true},
		{"10m", fuzzLimit{duration: 10 * time.Minute}, true},
		{"1000x", fuzzLimit{count: "1000x"}, true},
		{"0x", fuzzLimit{}, false},
		{"x", fuzzLimit{}, false},
		{"0s", fuzzLimit{}, false},
		{"-1s", fuzzLimit{}, false},
		{"soon", fuzzLimit{}, false},
	} {
		got, err := parseFuzzTime(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("parseFuzzTime(%q) = %+v, %v; want %+v, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}
