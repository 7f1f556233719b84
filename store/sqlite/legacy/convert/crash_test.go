package convert_test

import (
	"testing"

	"github.com/lancens/lancens/store/sqlite/legacy/convert"
)

// crashed is what a conversion stopped by crashAt panics with.
type crashed struct{}

// crashAt returns a step hook that stops the conversion after its n-th
// durable step (from 1), as a crash would there: nothing of the
// conversion runs after it (no deferred cleanup of files or records).
func crashAt(n int) func(string) {
	seen := 0
	return func(string) {
		if seen++; seen == n {
			panic(crashed{})
		}
	}
}

// runUntilCrash runs a conversion that crashes after step n; it reports
// whether it crashed (false: it finished before step n).
func runUntilCrash(t *testing.T, v *env, n int) (stopped bool) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(crashed); !ok {
				panic(r)
			}
			stopped = true
		}
	}()
	v.run(t, convert.WithStep(convert.Options{}, crashAt(n)))
	return false
}

// TestConvertResumesAfterACrash stops the conversion of the fixture after
// durable steps of its first table (the one with branches: its location
// reserved, versions of main and of each branch written, the catalog
// switched) and of the next one, runs it again on what it left, and
// checks the result against f365447's answers: every table converted
// once, nothing recorded twice, no row lost or doubled.
func TestConvertResumesAfterACrash(t *testing.T) {
	fx := loadFixture(t)
	var steps []string
	probe := newEnv(t)
	probe.run(t, convert.WithStep(convert.Options{}, func(what string) { steps = append(steps, what) }))
	crashes := []int{1, 2, 4, 6, 7, 9, 10, 11}
	if len(steps) < crashes[len(crashes)-1] {
		t.Fatalf("the conversion has %d steps: %v", len(steps), steps)
	}
	for _, n := range crashes {
		v := newEnv(t)
		if !runUntilCrash(t, v, n) {
			t.Fatalf("the conversion did not reach step %d (%s)", n, steps[n-1])
		}
		sum, err := v.run(t, convert.Options{})
		checkOnlyUnconvertible(t, fx, sum, err)
		if t.Failed() {
			t.Fatalf("after a crash past step %d (%s)", n, steps[n-1])
		}
		checkConverted(t, v, fx)
		if t.Failed() {
			t.Fatalf("after a crash past step %d (%s)", n, steps[n-1])
		}
	}
}
