package conformance

import (
	"slices"
	"time"

	"github.com/lancens/lancens/store"
)

// cleanupTarget is a target that removes old versions of managed tables.
type cleanupTarget interface {
	DataTarget
	store.VersionCleanup
}

// aged returns table "items" with versions 1..5 (a create and four
// updates), version 2 tagged and branch "b" forked from version 3: a
// cleanup of everything keeps 2, 3 and the latest, 5, and removes 1 and 4.
func aged(t T, tg cleanupTarget) *store.Table {
	t.Helper()
	id := createItems(t, tg, "items", 6)
	for range 4 {
		must(tg.Update(ctx(t), id, []store.ColumnUpdate{{Path: "qty", Expr: "qty + 1"}}, ""))(t)
	}
	must(tg.CreateTag(ctx(t), id, "keep", "", 2))(t)
	must(tg.CreateBranch(ctx(t), id, "b", "", ptr(int64(3))))(t)
	return must(tg.DescribeTable(ctx(t), id))(t)
}

// mainVersions lists the versions of table id on main.
func mainVersions(t T, tg store.Catalog, id []string) []int64 {
	t.Helper()
	vs, _, err := tg.ListVersions(ctx(t), id, "", false, store.Page{})
	noErr(t, err)
	return versionNumbers(vs)
}

func (s *suite) versionCleanup(t T) {
	later := func() time.Time { return time.Now().Add(time.Hour) }

	Subtest(t, "KeepsLatestTaggedAndForked", func(t T) {
		tg := implementing[cleanupTarget](t, s.dataTarget(t), "VersionCleanup")
		tbl := aged(t, tg)
		before := make(map[int64]int64)
		for _, v := range []int64{2, 3, 5} {
			before[v] = count(t, tg, tbl.ID, ptr(v), "qty > 40")
		}
		res, txID, err := tg.CleanupVersions(ctx(t), tbl.ID, later())
		noErr(t, err)
		if res.Versions != 2 || txID == "" {
			t.Fatalf("cleanup removed %d versions (transaction %q), want 2 and a transaction", res.Versions, txID)
		}
		if got := mainVersions(t, tg, tbl.ID); !slices.Equal(got, []int64{2, 3, 5}) {
			t.Fatalf("versions left %v, want [2 3 5]", got)
		}
		for v, n := range before {
			if got := count(t, tg, tbl.ID, ptr(v), "qty > 40"); got != n {
				t.Errorf("kept version %d counts %d rows, %d before the cleanup", v, got, n)
			}
		}
		for _, v := range []int64{1, 4} {
			_, _, err := tg.CountRows(ctx(t), tbl.ID, ptr(v), "")
			wantCode(t, err, store.CodeTableVersionNotFound)
		}
		again, _, err := tg.CleanupVersions(ctx(t), tbl.ID, later())
		noErr(t, err)
		if again.Versions != 0 || again.Rows != 0 {
			t.Fatalf("a second cleanup removed %+v, want nothing", again)
		}
		if res := must(tg.Update(ctx(t), tbl.ID, []store.ColumnUpdate{{Path: "qty", Expr: "0"}}, ""))(t); res.Version != 6 {
			t.Fatalf("the write after the cleanup made version %d, want 6", res.Version)
		}
	})

	Subtest(t, "OnlyBefore", func(t T) {
		tg := implementing[cleanupTarget](t, s.dataTarget(t), "VersionCleanup")
		tbl := aged(t, tg)
		res, _, err := tg.CleanupVersions(ctx(t), tbl.ID, time.Now().Add(-time.Hour))
		noErr(t, err)
		if res.Versions != 0 {
			t.Fatalf("a cleanup of versions older than an hour removed %d", res.Versions)
		}
		if got := mainVersions(t, tg, tbl.ID); !slices.Equal(got, span(1, 5)) {
			t.Fatalf("versions left %v, want 1..5", got)
		}
	})

	Subtest(t, "QueueAndRun", func(t T) {
		tg := implementing[cleanupTarget](t, s.dataTarget(t), "VersionCleanup")
		tbl := aged(t, tg)
		if n := must(tg.QueueCleanups(ctx(t), later()))(t); n < 1 {
			t.Fatalf("QueueCleanups queued %d cleanups, want one for the table", n)
		}
		res := must(tg.RunCleanup(ctx(t), store.CleanupVersions{TableUUID: tbl.UUID, BeforeMillis: later().UnixMilli()}))(t)
		if res.Versions != 2 {
			t.Fatalf("the queued cleanup removed %d versions, want 2", res.Versions)
		}
		must3(tg.DropTable(ctx(t), tbl.ID))(t)
		must(tg.RunCleanup(ctx(t), store.CleanupVersions{TableUUID: tbl.UUID, BeforeMillis: later().UnixMilli()}))(t)
	})

	Subtest(t, "Errors", func(t T) {
		tg := implementing[cleanupTarget](t, s.dataTarget(t), "VersionCleanup")
		declare(t, tg, "declared")
		for _, tc := range []struct {
			name string
			id   []string
			want store.Code
		}{
			{"MissingTable", []string{"nope"}, store.CodeTableNotFound},
			{"TableWithoutRows", []string{"declared"}, store.CodeInvalidTableState},
		} {
			Subtest(t, tc.name, func(t T) {
				_, _, err := tg.CleanupVersions(ctx(t), tc.id, later())
				wantCode(t, err, tc.want)
			})
		}
	})
}
