package conformance

import (
	"slices"

	"github.com/lancens/lancens/store"
)

func commitOp(id []string, c store.VersionCommit) store.BatchOperation {
	return store.BatchOperation{ID: id, CommitVersion: &c}
}

func (s *suite) batches(t T) {
	Subtest(t, "AcrossTables", func(t T) {
		tg := s.target(t)
		declare(t, tg, "a")
		declare(t, tg, "b")
		must3(tg.CommitVersion(ctx(t), []string{"b"}, commit(1, "b")))(t)
		results, txID, err := tg.CommitBatch(ctx(t), []store.BatchOperation{
			commitOp([]string{"a"}, commit(1, "a")),
			commitOp([]string{"b"}, commit(2, "b")),
			commitOp([]string{"a"}, commit(2, "a")),
		})
		if err != nil {
			failUnexpected(t, err)
		}
		if txID == "" || len(results) != 3 {
			t.Fatalf("results %+v, tx %q", results, txID)
		}
		for i, want := range []int64{1, 2, 2} {
			if results[i].Version == nil || results[i].Version.Version != want {
				t.Fatalf("result %d = %+v, want version %d", i, results[i].Version, want)
			}
		}
	})

	Subtest(t, "DeclareThenCommit", func(t T) {
		tg := s.target(t)
		declare(t, tg, "old")
		must3(tg.CommitVersion(ctx(t), []string{"old"}, commit(1, "old")))(t)
		results, _, err := tg.CommitBatch(ctx(t), []store.BatchOperation{
			{ID: []string{"new"}, Declare: &store.TableDeclaration{Location: remote("new")}},
			commitOp([]string{"new"}, commit(1, "new")),
			{ID: []string{"old"}, DeleteVersions: &store.BatchDelete{Ranges: []store.VersionRange{{Start: 0, End: -1}}}},
			{ID: []string{"old"}, Deregister: true},
		})
		if err != nil {
			failUnexpected(t, err)
		}
		if results[0].Table == nil || results[0].Table.Location != remote("new") {
			t.Fatalf("declare result %+v", results[0])
		}
		if results[1].Version == nil || results[1].Version.Version != 1 {
			t.Fatalf("commit result %+v", results[1])
		}
		if results[2].DeletedCount != 1 {
			t.Fatalf("delete result %+v", results[2])
		}
		if results[3].Table == nil || results[3].Table.Location != remote("old") {
			t.Fatalf("deregister result %+v", results[3])
		}
		_, err = tg.DescribeTable(ctx(t), []string{"old"})
		wantCode(t, err, store.CodeTableNotFound)
		if d := must(tg.DescribeTable(ctx(t), []string{"new"}))(t); d.Declared {
			t.Fatalf("the batch's commit did not mark the new table as having data")
		}
	})

	Subtest(t, "AllOrNothing", func(t T) {
		for _, tc := range []struct {
			name string
			ops  []store.BatchOperation
			want store.Code
		}{
			{"OneConflict", []store.BatchOperation{
				{ID: []string{"fresh"}, Declare: &store.TableDeclaration{Location: remote("fresh")}},
				commitOp([]string{"a"}, commit(2, "a")),
				commitOp([]string{"b"}, store.VersionCommit{Version: 1, StagedPath: "elsewhere", ManifestPath: "elsewhere"}), // b is at 1 already
			}, store.CodeConcurrentModification},
			{"MissingTable", []store.BatchOperation{
				commitOp([]string{"a"}, commit(2, "a")),
				commitOp([]string{"ghost"}, commit(1, "ghost")),
			}, store.CodeTableNotFound},
			{"DuplicateCommit", []store.BatchOperation{
				commitOp([]string{"a"}, commit(2, "a")),
				commitOp([]string{"a"}, commit(2, "a")),
			}, store.CodeInvalidInput},
			{"DuplicateDeclare", []store.BatchOperation{
				{ID: []string{"fresh"}, Declare: &store.TableDeclaration{Location: remote("fresh")}},
				{ID: []string{"fresh"}, Declare: &store.TableDeclaration{Location: remote("fresh2")}},
			}, store.CodeInvalidInput},
			{"NoKind", []store.BatchOperation{{ID: []string{"a"}}}, store.CodeInvalidInput},
			{"NoID", []store.BatchOperation{commitOp(nil, commit(2, "a"))}, store.CodeInvalidInput},
		} {
			Subtest(t, tc.name, func(t T) {
				tg := s.target(t)
				declare(t, tg, "a")
				declare(t, tg, "b")
				must3(tg.CommitVersion(ctx(t), []string{"a"}, commit(1, "a")))(t)
				must3(tg.CommitVersion(ctx(t), []string{"b"}, commit(1, "b")))(t)
				_, _, err := tg.CommitBatch(ctx(t), tc.ops)
				wantCode(t, err, tc.want)
				for _, name := range []string{"a", "b"} {
					vs := must3(tg.ListVersions(ctx(t), []string{name}, "", false, store.Page{}))(t)
					if got := versionNumbers(vs); !slices.Equal(got, []int64{1}) {
						t.Fatalf("failed batch changed %s: versions %v", name, got)
					}
				}
				_, err = tg.DescribeTable(ctx(t), []string{"fresh"})
				wantCode(t, err, store.CodeTableNotFound)
			})
		}
	})

	Subtest(t, "Empty", func(t T) {
		tg := s.target(t)
		results, _, err := tg.CommitBatch(ctx(t), nil)
		if err != nil || len(results) != 0 {
			t.Fatalf("empty batch: %v, %v", results, err)
		}
	})
}
