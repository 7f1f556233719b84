package targets

import (
	"testing"
	"time"
)

// FuzzSlow passes for every input, slowly, as a target that drives a
// whole server does.
func FuzzSlow(f *testing.F) {
	f.Add(1)
	f.Fuzz(func(t *testing.T, n int) {
		time.Sleep(20 * time.Millisecond)
	})
}

// FuzzFails fails for any input but its seed.
func FuzzFails(f *testing.F) {
	f.Add(1)
	f.Fuzz(func(t *testing.T, n int) {
		if n != 1 {
			t.Fatalf("n = %d", n)
		}
	})
}
