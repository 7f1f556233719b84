package sqlcatalog_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/lancens/lancens/store"
)

// commitN commits versions from..to of table id on branch.
func commitN(t *testing.T, db store.Backend, id []string, branch string, from, to int64) {
	t.Helper()
	for v := from; v <= to; v++ {
		p := fmt.Sprintf("s3://bucket/%s/_versions/%s%d.manifest", id[len(id)-1], branch, v)
		if _, _, err := db.CommitVersion(t.Context(), id, store.VersionCommit{Branch: branch, Version: v, StagedPath: p + ".staged", ManifestPath: p}); err != nil {
			t.Fatalf("commit %d on %q: %v", v, branch, err)
		}
	}
}

// declareAt declares table name at s3://bucket/name.
func declareAt(t *testing.T, db store.Backend, name string, decl store.TableDeclaration) *store.Table {
	t.Helper()
	decl.Location = "s3://bucket/" + name
	tbl, _, err := db.DeclareTable(t.Context(), []string{name}, decl)
	if err != nil {
		t.Fatalf("declare %s: %v", name, err)
	}
	return tbl
}

// queuedRefreshes claims the queued refresh jobs and returns the views
// they refresh.
func queuedRefreshes(t *testing.T, db store.Backend) []string {
	t.Helper()
	var out []string
	for {
		job, err := db.ClaimJob(t.Context(), store.JobRefreshView)
		if err != nil {
			t.Fatal(err)
		}
		if job == nil {
			return out
		}
		var p store.RefreshView
		if err := json.Unmarshal(job.Payload, &p); err != nil {
			t.Fatal(err)
		}
		out = append(out, p.ViewUUID)
		if err := db.FinishJob(t.Context(), job.TransactionID, nil); err != nil {
			t.Fatal(err)
		}
	}
}

// TestViewRecords checks the catalog's part of materialized views: the
// record made with the view's declaration, a refresh's commit recording
// the source version, commits on a source's main branch queueing one
// refresh of its auto-refreshed views, and QueueViewRefresh's refusals.
func TestViewRecords(t *testing.T) {
	eachBackend(t, func(t *testing.T, db store.Backend) {
		ctx := t.Context()
		src := declareAt(t, db, "src", store.TableDeclaration{})
		commitN(t, db, []string{"src"}, "", 1, 1)
		q := &store.Query{Filter: "x > 1", Limit: 5}
		view := declareAt(t, db, "v", store.TableDeclaration{View: &store.ViewRecord{
			Kind: store.ViewQuery, SourceQuery: "SELECT x FROM src WHERE x > 1", SourceUUID: src.UUID, Query: q, AutoRefresh: true}})
		opaque := declareAt(t, db, "own", store.TableDeclaration{View: &store.ViewRecord{Kind: store.ViewQuery, SourceQuery: "my format"}})

		v, err := db.DescribeView(ctx, view.UUID)
		if err != nil || v == nil || !slices.Equal(v.Source, []string{"src"}) || v.SourceUUID != src.UUID || v.Query == nil ||
			v.Query.Filter != "x > 1" || v.Query.Limit != 5 || !v.AutoRefresh || v.SourceVersion != nil || v.SourceQuery != "SELECT x FROM src WHERE x > 1" {
			t.Fatalf("view: %+v %v", v, err)
		}
		if v, err := db.DescribeView(ctx, src.UUID); err != nil || v != nil {
			t.Fatalf("a plain table describes as view %+v %v", v, err)
		}
		if v, err := db.DescribeView(ctx, opaque.UUID); err != nil || v == nil || v.Query != nil || v.Source != nil {
			t.Fatalf("a view lancens does not run: %+v %v", v, err)
		}

		// Writes to the source's main branch queue one refresh at a time;
		// a branch's do not.
		commitN(t, db, []string{"src"}, "", 2, 3)
		if got := queuedRefreshes(t, db); !slices.Equal(got, []string{view.UUID}) {
			t.Fatalf("refreshes queued by two commits: %q, want one of the view", got)
		}
		if _, err := db.CreateBranch(ctx, []string{"src"}, "b", "", nil); err != nil {
			t.Fatal(err)
		}
		commitN(t, db, []string{"src"}, "b", 3, 4)
		if got := queuedRefreshes(t, db); len(got) != 0 {
			t.Fatalf("commits on a branch queued refreshes of %q", got)
		}

		// A refresh's commit records the source version it read.
		two := int64(2)
		p := "s3://bucket/v/_versions/1.manifest"
		if _, _, err := db.CommitVersion(ctx, []string{"v"}, store.VersionCommit{Version: 1, StagedPath: p + ".staged", ManifestPath: p, ViewSourceVersion: &two}); err != nil {
			t.Fatal(err)
		}
		if v, err := db.DescribeView(ctx, view.UUID); err != nil || v.SourceVersion == nil || *v.SourceVersion != 2 || time.Since(v.RefreshedAt) > time.Minute {
			t.Fatalf("after a refresh: %+v %v", v, err)
		}

		if txID, err := db.QueueViewRefresh(ctx, view.UUID, &two); err != nil || txID == "" {
			t.Fatalf("queue a refresh: %q %v", txID, err)
		}
		missing := int64(99)
		for _, tc := range []struct {
			name    string
			uuid    string
			version *int64
			want    store.Code
		}{
			{"PlainTable", src.UUID, nil, store.CodeInvalidInput},
			{"MissingSourceVersion", view.UUID, &missing, store.CodeTableVersionNotFound},
			{"NotRunnable", opaque.UUID, nil, store.CodeUnsupported},
			{"MissingView", "no-such-uuid", nil, store.CodeTableNotFound},
		} {
			t.Run(tc.name, func(t *testing.T) {
				if _, err := db.QueueViewRefresh(ctx, tc.uuid, tc.version); store.ErrorCode(err) != tc.want {
					t.Fatalf("got %v, want code %d", err, tc.want)
				}
			})
		}
		if _, _, err := db.DropTable(ctx, []string{"src"}); err != nil {
			t.Fatal(err)
		}
		if _, err := db.QueueViewRefresh(ctx, view.UUID, nil); store.ErrorCode(err) != store.CodeTableNotFound {
			t.Fatalf("refresh with the source dropped: %v", err)
		}
		if v, err := db.DescribeView(ctx, view.UUID); err != nil || v.Source != nil {
			t.Fatalf("a view of a dropped source: %+v %v", v, err)
		}
		_, _, err = db.DeclareTable(ctx, []string{"late"}, store.TableDeclaration{Location: "s3://bucket/late",
			View: &store.ViewRecord{Kind: store.ViewQuery, SourceQuery: "x", SourceUUID: src.UUID, Query: q}})
		if store.ErrorCode(err) != store.CodeTableNotFound {
			t.Fatalf("a view of a dropped source was declared: %v", err)
		}
		if _, err := db.DescribeTable(ctx, []string{"late"}); store.ErrorCode(err) != store.CodeTableNotFound {
			t.Fatalf("a refused view declaration left its table: %v", err)
		}
	})
}

// TestRetentionRecords checks the catalog's part of the retention of old
// versions: which records go and which tables get a cleanup queued.
func TestRetentionRecords(t *testing.T) {
	eachBackend(t, func(t *testing.T, db store.Backend) {
		ctx := t.Context()
		id := []string{"t"}
		tbl := declareAt(t, db, "t", store.TableDeclaration{Owned: true})
		commitN(t, db, id, "", 1, 6)
		declareAt(t, db, "theirs", store.TableDeclaration{})
		commitN(t, db, []string{"theirs"}, "", 1, 3)
		if _, err := db.CreateTag(ctx, id, "keep", "", 2); err != nil {
			t.Fatal(err)
		}
		three := int64(3)
		if _, err := db.CreateBranch(ctx, id, "b", "", &three); err != nil {
			t.Fatal(err)
		}
		if n, _, err := db.DeleteVersions(ctx, id, "", []store.VersionRange{{Start: 5, End: 6}}); err != nil || n != 1 {
			t.Fatalf("delete version 5: %d %v", n, err)
		}

		later := time.Now().Add(time.Hour)
		if n, err := db.QueueVersionCleanups(ctx, time.Now().Add(-time.Hour)); err != nil || n != 0 {
			t.Fatalf("cleanups queued for versions older than an hour: %d %v", n, err)
		}
		if n, err := db.QueueVersionCleanups(ctx, later); err != nil || n != 1 {
			t.Fatalf("cleanups queued: %d %v, want one (the table lancens placed)", n, err)
		}
		if n, err := db.QueueVersionCleanups(ctx, later); err != nil || n != 0 {
			t.Fatalf("cleanups queued again: %d %v, want none (one is queued)", n, err)
		}
		job, err := db.ClaimJob(ctx, store.JobCleanupVersions)
		if err != nil || job == nil {
			t.Fatalf("claim the cleanup: %+v %v", job, err)
		}
		var p store.CleanupVersions
		if err := json.Unmarshal(job.Payload, &p); err != nil || p.TableUUID != tbl.UUID || p.BeforeMillis != later.UnixMilli() {
			t.Fatalf("cleanup job %s: %v", job.Payload, err)
		}

		if n, err := db.RemoveOldVersions(ctx, tbl.UUID, time.Now().Add(-time.Hour)); err != nil || n != 0 {
			t.Fatalf("removed %d versions older than an hour (%v)", n, err)
		}
		if n, err := db.RemoveOldVersions(ctx, tbl.UUID, later); err != nil || n != 2 {
			t.Fatalf("removed %d versions (%v), want 2 (1 and 4)", n, err)
		}
		vs, _, err := db.ListVersions(ctx, id, "", false, store.Page{})
		if err != nil {
			t.Fatal(err)
		}
		var left []int64
		for _, v := range vs {
			left = append(left, v.Version)
		}
		if !slices.Equal(left, []int64{2, 3, 6}) {
			t.Fatalf("versions left %v, want the tagged 2, the forked 3 and the latest 6", left)
		}
		if _, err := db.RemoveOldVersions(ctx, "no-such-uuid", later); store.ErrorCode(err) != store.CodeTableNotFound {
			t.Fatalf("a missing table: %v", err)
		}
	})
}
