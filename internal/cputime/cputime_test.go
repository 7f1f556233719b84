//go:build unix

package cputime_test

import (
	"testing"

	"github.com/lancens/lancens/internal/cputime"
)

// TestProcessGrows checks that work on the CPU shows in Process.
func TestProcessGrows(t *testing.T) {
	start := cputime.Process()
	if start <= 0 {
		t.Fatalf("Process() = %v at start, want > 0", start)
	}
	x := 1.0
	for cputime.Process() == start {
		for range 1_000_000 {
			x = x*1.0000001 + 1e-9
		}
	}
	if x == 0 {
		t.Fatal("unreachable: keeps the loop")
	}
}
