package conformance_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/lancens/lancens/internal/conformance"
)

// byPath indexes the results of a run by path.
func byPath(res *conformance.Result) map[string]*conformance.Result {
	out := map[string]*conformance.Result{}
	res.Walk(func(r *conformance.Result) { out[r.Path] = r })
	return out
}

func failHere(t conformance.T) {
	t.Helper()
	t.Errorf("from a helper")
}

func TestRunner(t *testing.T) {
	var order []string
	res := conformance.NewRunner(conformance.RunnerOptions{}).Run(t.Context(), func(t conformance.T) {
		conformance.Subtest(t, "Pass", func(t conformance.T) {
			t.Logf("a note")
			t.Cleanup(func() { order = append(order, "first registered") })
			t.Cleanup(func() { order = append(order, "last registered") })
		})
		conformance.Subtest(t, "Fatal", func(t conformance.T) {
			t.Fatalf("stop %d", 1)
			order = append(order, "after Fatalf")
		})
		conformance.Subtest(t, "Errors", func(t conformance.T) {
			t.Errorf("one")
			failHere(t)
			order = append(order, "after Errorf")
		})
		conformance.Subtest(t, "Skip", func(t conformance.T) { t.Skipf("not here") })
		conformance.Subtest(t, "Gap", func(t conformance.T) {
			t.(interface{ Unsupported(string, ...any) }).Unsupported("no tags")
		})
		conformance.Subtest(t, "Panic", func(t conformance.T) { panic("boom") })
		conformance.Subtest(t, "Parent", func(t conformance.T) {
			conformance.Subtest(t, "Good", func(t conformance.T) {})
			ok := conformance.Subtest(t, "Bad", func(t conformance.T) { t.Errorf("bad") })
			if ok || !t.Failed() {
				order = append(order, "parent did not see the failure")
			}
		})
		conformance.Subtest(t, "Context", func(t conformance.T) {
			if t.Context().Err() != nil || t.Name() != "Context" {
				t.Errorf("context %v, name %q", t.Context().Err(), t.Name())
			}
		})
	})
	got := byPath(res)
	for path, want := range map[string]conformance.Status{
		"Pass": conformance.Passed, "Fatal": conformance.Failed, "Errors": conformance.Failed, "Skip": conformance.Skipped,
		"Gap": conformance.Unsupported, "Panic": conformance.Failed, "Parent/Good": conformance.Passed, "Parent/Bad": conformance.Failed,
		"Parent": conformance.Passed, "Context": conformance.Passed,
	} {
		if r := got[path]; r == nil || r.Status != want {
			t.Errorf("%s: %v, want %s", path, r, want)
		}
	}
	if want := []string{"last registered", "first registered", "after Errorf"}; !slices.Equal(order, want) {
		t.Errorf("order of events %q, want %q", order, want)
	}
	// The helper's message names the line of its call, the one after the
	// first Errorf.
	msgs := got["Errors"].Messages
	var lines [2]int
	for i := range min(2, len(msgs)) {
		fmt.Sscanf(msgs[i], "runner_test.go:%d:", &lines[i])
	}
	if len(msgs) != 2 || lines[0] == 0 || lines[1] != lines[0]+1 || !strings.Contains(msgs[1], "from a helper") {
		t.Errorf("messages %q: want two, on consecutive lines of the case", msgs)
	}
	if msgs := got["Panic"].Messages; len(msgs) != 1 || !strings.Contains(msgs[0], "boom") {
		t.Errorf("panic messages %q", msgs)
	}
	if c := res.Count(); c != (conformance.Counts{Passed: 3, Failed: 4, Skipped: 1, Unsupported: 1}) {
		t.Errorf("counts %+v", c)
	}
}

func TestRunnerOnly(t *testing.T) {
	for _, tc := range []struct {
		only []string
		want []string
	}{
		{nil, []string{"A/x", "A/y", "B/x"}},
		{[]string{"a"}, []string{"A/x", "A/y"}},
		{[]string{"A/Y", " b "}, []string{"A/y", "B/x"}},
		{[]string{"C"}, nil},
	} {
		var ran []string
		conformance.NewRunner(conformance.RunnerOptions{Only: tc.only}).Run(context.Background(), func(t conformance.T) {
			for _, g := range []string{"A", "B"} {
				conformance.Subtest(t, g, func(t conformance.T) {
					for _, c := range []string{"x", "y"} {
						if g == "B" && c == "y" {
							continue
						}
						conformance.Subtest(t, c, func(t conformance.T) { ran = append(ran, t.Name()) })
					}
				})
			}
		})
		if !slices.Equal(ran, tc.want) {
			t.Errorf("only %q ran %q, want %q", tc.only, ran, tc.want)
		}
	}
}

// TestGroupsFor: the groups of a set of capabilities are those whose needs
// it meets, in run order; every group is some set's.
func TestGroupsFor(t *testing.T) {
	catalog := []string{"Namespaces", "Tables", "Versions", "Batches", "Tags", "Branches", "Transactions"}
	data := append(slices.Clone(catalog), "Data", "Streams", "SchemaEvolution", "ScalarIndexes", "VectorSearch", "VectorIndexes", "FullTextSearch",
		"BranchedData")
	for _, tc := range []struct {
		name string
		caps conformance.Capabilities
		want []string
	}{
		{"Catalog", conformance.Catalog(), catalog},
		{"Backend", conformance.Backend(), append(slices.Clone(catalog), "Jobs", "Probe", "LocationLocks", "VersionFinder", "DatasetIndexes")},
		{"Data", conformance.Data(), data},
		{"Full", conformance.Full(), func() (all []string) {
			for _, g := range conformance.Groups() {
				all = append(all, g.Name)
			}
			return all
		}()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := conformance.GroupsFor(tc.caps); !slices.Equal(got, tc.want) {
				t.Fatalf("GroupsFor = %q, want %q", got, tc.want)
			}
		})
	}
}
