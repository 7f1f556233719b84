package conformance

import (
	"slices"

	"github.com/lancens/lancens/store"
)

// branchedTarget is a target that keeps the rows of managed tables on
// branches.
type branchedTarget interface {
	DataTarget
	store.BranchedData
}

func (s *suite) branchedData(t T) {
	Subtest(t, "WritesStayOnTheirBranch", func(t T) {
		tg := implementing[branchedTarget](t, s.dataTarget(t), "BranchedData")
		id := createItems(t, tg, "items", 5)
		must(tg.CreateBranch(ctx(t), id, "b", "", nil))(t)
		b := tg.OnBranch("b")
		res := must(b.Insert(ctx(t), id, store.InsertAppend, itemsData(t, makeItems(6, 8))))(t)
		if res.Version != 2 {
			t.Fatalf("the first write on the branch made version %d, want 2 (the fork version and one)", res.Version)
		}
		if n := count(t, tg, id, nil, ""); n != 5 {
			t.Fatalf("main has %d rows after a write on the branch, want 5", n)
		}
		must(tg.Insert(ctx(t), id, store.InsertAppend, itemsData(t, makeItems(9, 9))))(t)
		if rs, _ := query(t, b, id, store.Query{}); !slices.Equal(sorted(ints(t, rs, "id")), span(1, 8)) {
			t.Fatalf("the branch reads %v after a write on main, want 1..8", sorted(ints(t, rs, "id")))
		}
		fork := int64(1)
		if rs, _ := query(t, b, id, store.Query{Version: &fork}); !slices.Equal(sorted(ints(t, rs, "id")), span(1, 5)) {
			t.Fatalf("the branch's fork version reads %v, want 1..5", sorted(ints(t, rs, "id")))
		}
		if d := must(b.Describe(ctx(t), id, nil))(t); d.Version != 2 || d.NumRows != 8 {
			t.Fatalf("the branch describes as version %d with %d rows, want 2 with 8", d.Version, d.NumRows)
		}
		// The catalog records the branch's versions.
		if v := must(tg.DescribeVersion(ctx(t), id, "b", nil))(t); v.Version != 2 {
			t.Fatalf("the catalog's latest version of the branch is %d, want 2", v.Version)
		}
		if n := count(t, tg.OnBranch(""), id, nil, ""); n != 6 {
			t.Fatalf("main (branch \"\") has %d rows, want 6", n)
		}
	})

	Subtest(t, "Errors", func(t T) {
		tg := implementing[branchedTarget](t, s.dataTarget(t), "BranchedData")
		id := createItems(t, tg, "items", 3)
		declared := declare(t, tg, "declared")
		must(tg.CreateBranch(ctx(t), id, "gone", "", nil))(t)
		must(tg.DeleteBranch(ctx(t), id, "gone"))(t)
		for _, tc := range []struct {
			name   string
			id     []string
			branch string
			want   store.Code
		}{
			{"MissingBranch", id, "nope", store.CodeTableBranchNotFound},
			{"DeletedBranch", id, "gone", store.CodeTableBranchNotFound},
			{"TableWithoutRows", declared.ID, "b", store.CodeInvalidTableState},
			{"MissingTable", []string{"nope"}, "b", store.CodeTableNotFound},
		} {
			Subtest(t, tc.name, func(t T) {
				_, _, err := tg.OnBranch(tc.branch).CountRows(ctx(t), tc.id, nil, "")
				wantCode(t, err, tc.want)
				_, err = tg.OnBranch(tc.branch).Insert(ctx(t), tc.id, store.InsertAppend, itemsData(t, makeItems(4, 4)))
				wantCode(t, err, tc.want)
			})
		}
	})
}
