package conformance

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/lancens/lancens/store"
)

// commit returns a commit of version v of the table with a staged path
// unique to the table and version.
func commit(v int64, table string) store.VersionCommit {
	p := fmt.Sprintf("conformance-bucket/%s/_versions/%d.manifest-staged", table, v)
	size := int64(100 + v)
	return store.VersionCommit{Version: v, StagedPath: p, ManifestPath: p, ManifestSize: &size}
}

func versionNumbers(vs []store.TableVersion) []int64 {
	out := make([]int64, len(vs))
	for i, v := range vs {
		out[i] = v.Version
	}
	return out
}

func (s *suite) versions(t T) {
	Subtest(t, "StrictChain", func(t T) {
		tg := s.target(t)
		declare(t, tg, "t")
		id := []string{"t"}
		for _, tc := range []struct {
			name   string
			commit store.VersionCommit
			want   store.Code // -1: success
		}{
			{"FirstMustBeOne", commit(2, "t"), store.CodeConcurrentModification},
			{"One", commit(1, "t"), -1},
			{"Two", commit(2, "t"), -1},
			{"Gap", commit(4, "t"), store.CodeConcurrentModification},
			{"Duplicate", store.VersionCommit{Version: 2, StagedPath: "other", ManifestPath: "other"}, store.CodeConcurrentModification},
			{"IdenticalRetry", commit(2, "t"), -1},
			{"Three", commit(3, "t"), -1},
			{"Negative", commit(-1, "t"), store.CodeInvalidInput},
		} {
			Subtest(t, tc.name, func(t T) {
				v, txID, err := tg.CommitVersion(ctx(t), id, tc.commit)
				if tc.want >= 0 {
					wantCode(t, err, tc.want)
					return
				}
				if err != nil {
					failUnexpected(t, err)
				}
				if v.Version != tc.commit.Version || v.ManifestPath != tc.commit.StagedPath || *v.ManifestSize != *tc.commit.ManifestSize || txID == "" {
					t.Fatalf("commit returned %+v, %q", v, txID)
				}
				if v.Timestamp.IsZero() {
					t.Fatalf("no timestamp")
				}
			})
		}
		if d := must(tg.DescribeTable(ctx(t), id))(t); d.Declared {
			t.Fatalf("a table with versions is still only declared")
		}
		_, _, err := tg.CommitVersion(ctx(t), []string{"nope"}, commit(1, "nope"))
		wantCode(t, err, store.CodeTableNotFound)
	})

	Subtest(t, "ListAndDescribe", func(t T) {
		tg := s.target(t)
		declare(t, tg, "t")
		id := []string{"t"}
		_, err := tg.DescribeVersion(ctx(t), id, "", nil)
		wantCode(t, err, store.CodeTableVersionNotFound)
		for v := int64(1); v <= 7; v++ {
			must3(tg.CommitVersion(ctx(t), id, commit(v, "t")))(t)
		}
		for _, tc := range []struct {
			descending bool
			limit      int
			want       []int64
		}{
			{false, 0, []int64{1, 2, 3, 4, 5, 6, 7}},
			{false, 3, []int64{1, 2, 3, 4, 5, 6, 7}},
			{true, 0, []int64{7, 6, 5, 4, 3, 2, 1}},
			{true, 2, []int64{7, 6, 5, 4, 3, 2, 1}},
		} {
			var got []int64
			token := ""
			for {
				vs, next, err := tg.ListVersions(ctx(t), id, "", tc.descending, store.Page{Token: token, Limit: tc.limit})
				if err != nil {
					failUnexpected(t, err)
				}
				if tc.limit > 0 && len(vs) > tc.limit {
					t.Fatalf("page of %d over limit %d", len(vs), tc.limit)
				}
				got = append(got, versionNumbers(vs)...)
				if next == "" {
					break
				}
				token = next
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("descending=%v limit=%d: %v, want %v", tc.descending, tc.limit, got, tc.want)
			}
		}
		latest, _, err := tg.ListVersions(ctx(t), id, "", true, store.Page{Limit: 1})
		if err != nil || len(latest) != 1 || latest[0].Version != 7 {
			t.Fatalf("latest lookup: %v %v", latest, err)
		}
		if v := must(tg.DescribeVersion(ctx(t), id, "", nil))(t); v.Version != 7 {
			t.Fatalf("describe without version gave %d, want the latest", v.Version)
		}
		three := int64(3)
		if v := must(tg.DescribeVersion(ctx(t), id, "", &three))(t); v.Version != 3 || v.ManifestPath != commit(3, "t").StagedPath {
			t.Fatalf("describe 3 gave %+v", v)
		}
		missing := int64(99)
		_, err = tg.DescribeVersion(ctx(t), id, "", &missing)
		wantCode(t, err, store.CodeTableVersionNotFound)
		_, _, err = tg.ListVersions(ctx(t), id, "nobranch", false, store.Page{})
		wantCode(t, err, store.CodeTableBranchNotFound)
		_, _, err = tg.ListVersions(ctx(t), []string{"nope"}, "", false, store.Page{})
		wantCode(t, err, store.CodeTableNotFound)
	})

	Subtest(t, "Delete", func(t T) {
		for _, tc := range []struct {
			name   string
			ranges []store.VersionRange
			count  int64
			left   []int64
		}{
			{"Range", []store.VersionRange{{Start: 2, End: 4}}, 2, []int64{1, 4, 5, 6}},
			{"ThroughLatest", []store.VersionRange{{Start: 4, End: -1}}, 3, []int64{1, 2, 3}},
			{"All", []store.VersionRange{{Start: 0, End: -1}}, 6, []int64{}},
			{"Union", []store.VersionRange{{Start: 1, End: 2}, {Start: 5, End: 7}}, 3, []int64{2, 3, 4}},
			{"MissingSkipped", []store.VersionRange{{Start: 10, End: 20}}, 0, []int64{1, 2, 3, 4, 5, 6}},
		} {
			Subtest(t, tc.name, func(t T) {
				tg := s.target(t)
				declare(t, tg, "t")
				for v := int64(1); v <= 6; v++ {
					must3(tg.CommitVersion(ctx(t), []string{"t"}, commit(v, "t")))(t)
				}
				n, _, err := tg.DeleteVersions(ctx(t), []string{"t"}, "", tc.ranges)
				if err != nil {
					failUnexpected(t, err)
				}
				if n != tc.count {
					t.Fatalf("deleted %d, want %d", n, tc.count)
				}
				vs := must3(tg.ListVersions(ctx(t), []string{"t"}, "", false, store.Page{}))(t)
				if got := versionNumbers(vs); !slices.Equal(got, tc.left) {
					t.Fatalf("left %v, want %v", got, tc.left)
				}
			})
		}
		tg := s.target(t)
		declare(t, tg, "t")
		_, _, err := tg.DeleteVersions(ctx(t), []string{"t"}, "", []store.VersionRange{{Start: 5, End: 2}})
		wantCode(t, err, store.CodeInvalidInput)
	})

	Subtest(t, "Race", func(t T) {
		tg := s.target(t)
		declare(t, tg, "t")
		const racers = 16
		for v := int64(1); v <= 3; v++ {
			var wg sync.WaitGroup
			errs := make([]error, racers)
			for i := range racers {
				wg.Go(func() {
					c := commit(v, "t")
					c.StagedPath = fmt.Sprintf("%s-%d", c.StagedPath, i)
					c.ManifestPath = c.StagedPath
					_, _, errs[i] = tg.CommitVersion(ctx(t), []string{"t"}, c)
				})
			}
			wg.Wait()
			wins := 0
			for _, err := range errs {
				switch {
				case err == nil:
					wins++
				case !errors.Is(err, store.ErrConcurrentModification):
					t.Fatalf("racer failed with %v, want code 14", err)
				}
			}
			if wins != 1 {
				t.Fatalf("version %d: %d winners, want exactly 1", v, wins)
			}
		}
		vs := must3(tg.ListVersions(ctx(t), []string{"t"}, "", false, store.Page{}))(t)
		if got := versionNumbers(vs); !slices.Equal(got, []int64{1, 2, 3}) {
			t.Fatalf("chain %v after races, want [1 2 3]", got)
		}
	})
}

func (s *suite) versionFinder(t T) {
	tg := s.target(t)
	f := implementing[store.VersionFinder](t, tg, "VersionFinder")
	declared := declare(t, tg, "t")
	id := []string{"t"}
	for v := int64(1); v <= 2; v++ {
		_, _, err := tg.CommitVersion(ctx(t), id, commit(v, "t"))
		noErr(t, err)
	}
	must(tg.CreateBranch(ctx(t), id, "dev", "", nil))(t)
	for _, tc := range []struct {
		name    string
		id      []string
		branch  string
		version int64
		want    store.Code // -1: found the table; its version as found
		found   bool
	}{
		{"Recorded", id, "", 2, -1, true},
		{"First", id, "", 1, -1, true},
		{"NotYet", id, "", 3, -1, false},
		{"EmptyBranch", id, "dev", 3, -1, false},
		{"MissingBranch", id, "nope", 1, store.CodeTableBranchNotFound, false},
		{"MissingTable", []string{"missing"}, "", 1, store.CodeTableNotFound, false},
	} {
		Subtest(t, tc.name, func(t T) {
			table, v, err := f.FindVersion(ctx(t), tc.id, tc.branch, tc.version)
			if tc.want >= 0 {
				wantCode(t, err, tc.want)
				return
			}
			noErr(t, err)
			if table.UUID != declared.UUID || table.Location != declared.Location {
				t.Fatalf("found table %+v, want %+v", table, declared)
			}
			switch {
			case !tc.found && v != nil:
				t.Fatalf("found version %+v of an unrecorded version", v)
			case tc.found && (v == nil || v.Version != tc.version || v.ManifestPath != commit(tc.version, "t").StagedPath):
				t.Fatalf("found version %+v, want version %d", v, tc.version)
			}
		})
	}
}
