package sqlite_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancens/lancens/internal/arrowtest"
	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/store/sqlite"
)

var cleanupSchema = arrowtest.Schema("id", arrow.PrimitiveTypes.Int64, "val", arrow.PrimitiveTypes.Int64)

// cleanupRows returns rows 0..n-1 with val 0.
func cleanupRows(t *testing.T, n int) store.Data {
	t.Helper()
	var b strings.Builder
	b.WriteString("[")
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"id":%d,"val":0}`, i)
	}
	b.WriteString("]")
	return store.NewData(cleanupSchema, arrowtest.Record(t, cleanupSchema, b.String()))
}

// snapshot returns the rows data shows at version v, ordered by id, as
// JSON.
func snapshot(t *testing.T, data store.ManagedData, id []string, v int64) (string, error) {
	t.Helper()
	res, err := data.Query(t.Context(), id, store.Query{Version: &v, OrderBy: []store.SortKey{{Column: "id"}}})
	if err != nil {
		return "", err
	}
	rec := arrowtest.Concat(t, res.Schema, res.Batches)
	out, err := json.Marshal([]arrow.Array{rec.Column(0), rec.Column(1)})
	if err != nil {
		t.Fatal(err)
	}
	return string(out), nil
}

// TestCleanupKeepsWhatIsRetained makes versions that each update a tenth
// of a table's rows, on main and on a branch, tags one and forks the
// branch from another, then cleans up everything the policy lets go. The
// latest versions, the tagged one and the fork point read exactly as
// before, the others answer TableVersionNotFound (11), and the row
// versions removed are exactly those no kept version shows.
func TestCleanupKeepsWhatIsRetained(t *testing.T) {
	ctx := t.Context()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "c.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	id := []string{"t"}
	const rows, updates = 100, 10
	if _, _, err := db.CreateTable(ctx, id, store.NewTable{Data: cleanupRows(t, rows)}); err != nil {
		t.Fatal(err)
	}
	// changes[i] lists the versions at which row i got a new value.
	changes := make([][]int64, rows)
	for u := 1; u <= updates; u++ {
		res, err := db.Update(ctx, id, []store.ColumnUpdate{{Path: "val", Expr: "val + 1"}}, fmt.Sprintf("id %% 10 = %d", u%10))
		if err != nil || res.Version != int64(u+1) {
			t.Fatalf("update %d: %+v %v", u, res, err)
		}
		for i := u % 10; i < rows; i += 10 {
			changes[i] = append(changes[i], res.Version)
		}
	}
	const latest, tagged, fork = updates + 1, 4, 6
	if _, err := db.CreateTag(ctx, id, "keep", "", tagged); err != nil {
		t.Fatal(err)
	}
	forkAt := int64(fork)
	if _, err := db.CreateBranch(ctx, id, "b", "", &forkAt); err != nil {
		t.Fatal(err)
	}
	branch := db.OnBranch("b")
	const branchUpdated = 50
	if res, err := branch.Update(ctx, id, []store.ColumnUpdate{{Path: "val", Expr: "val + 100"}}, fmt.Sprintf("id < %d", branchUpdated)); err != nil ||
		res.Version != fork+1 || res.Updated != branchUpdated {
		t.Fatalf("update on the branch: %+v %v", res, err)
	}
	before := map[int64]string{}
	for v := int64(1); v <= latest; v++ {
		if before[v], err = snapshot(t, db, id, v); err != nil {
			t.Fatal(err)
		}
	}
	branchLatest, err := snapshot(t, branch, id, fork+1)
	if err != nil {
		t.Fatal(err)
	}

	res, txID, err := db.CleanupVersions(ctx, id, time.Now().Add(time.Hour))
	if err != nil || txID == "" {
		t.Fatalf("cleanup: %v", err)
	}
	kept := map[int64]bool{latest: true, tagged: true, fork: true}
	// Main loses every version but the kept ones; the branch its fork
	// version, which is neither its latest, tagged nor forked from.
	if want := int64(latest - len(kept) + 1); res.Versions != want {
		t.Errorf("removed %d versions, want %d", res.Versions, want)
	}
	// A row version [from, to) of main goes when no kept version lies in
	// it. On the branch, whose only version left is its latest, the
	// copies made at the fork that its update replaced go too.
	wantRows := int64(branchUpdated)
	for i := range rows {
		from := int64(1)
		for _, to := range changes[i] {
			if !keptIn(kept, from, to) {
				wantRows++
			}
			from = to
		}
	}
	if res.Rows != wantRows {
		t.Errorf("removed %d row versions, want %d", res.Rows, wantRows)
	}
	for v := int64(1); v <= latest; v++ {
		got, err := snapshot(t, db, id, v)
		switch {
		case kept[v] && (err != nil || got != before[v]):
			t.Errorf("kept version %d changed: %v\n got %s\nwant %s", v, err, got, before[v])
		case !kept[v] && store.ErrorCode(err) != store.CodeTableVersionNotFound:
			t.Errorf("removed version %d: %v, want code 11", v, err)
		}
	}
	if got, err := snapshot(t, branch, id, fork+1); err != nil || got != branchLatest {
		t.Errorf("the branch's latest version changed: %v", err)
	}
	if _, err := snapshot(t, branch, id, fork); store.ErrorCode(err) != store.CodeTableVersionNotFound {
		t.Errorf("the branch's removed fork version: %v, want code 11", err)
	}
	// Nothing is left to do, and writes go on from the latest version.
	again, _, err := db.CleanupVersions(ctx, id, time.Now().Add(time.Hour))
	if err != nil || again.Versions != 0 || again.Rows != 0 {
		t.Fatalf("second cleanup: %+v %v", again, err)
	}
	if res, err := db.Update(ctx, id, []store.ColumnUpdate{{Path: "val", Expr: "0"}}, "true"); err != nil || res.Version != latest+1 {
		t.Fatalf("write after cleanup: %+v %v", res, err)
	}
	for _, tc := range []struct {
		name string
		id   []string
		want store.Code
	}{{"MissingTable", []string{"nope"}, store.CodeTableNotFound}} {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, err := db.CleanupVersions(ctx, tc.id, time.Now()); store.ErrorCode(err) != tc.want {
				t.Fatalf("got %v, want code %d", err, tc.want)
			}
		})
	}
}

// keptIn reports whether a kept version lies in [from, to).
func keptIn(kept map[int64]bool, from, to int64) bool {
	for v := range kept {
		if from <= v && v < to {
			return true
		}
	}
	return false
}

// TestCleanupGivesSpaceBack checks that a cleanup of a table whose rows
// were rewritten many times returns the space they took to the file
// system.
func TestCleanupGivesSpaceBack(t *testing.T) {
	ctx := t.Context()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "s.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	id := []string{"t"}
	if _, _, err := db.CreateTable(ctx, id, store.NewTable{Data: cleanupRows(t, 2000)}); err != nil {
		t.Fatal(err)
	}
	for range 20 {
		if _, err := db.Update(ctx, id, []store.ColumnUpdate{{Path: "val", Expr: "val + 1"}}, "true"); err != nil {
			t.Fatal(err)
		}
	}
	res, _, err := db.CleanupVersions(ctx, id, time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if res.Versions != 20 || res.Rows != 20*2000 || res.BytesFreed <= 0 {
		t.Fatalf("cleanup removed %+v; want 20 versions, 40000 rows and some bytes", res)
	}
	if n, _, err := db.CountRows(ctx, id, nil, "val = 20"); err != nil || n != 2000 {
		t.Fatalf("latest rows after cleanup: %d %v", n, err)
	}
}

// TestDeleteManagedVersionsQueuesSweep checks that DeleteVersions on a
// managed table removes the version records at once and queues a cleanup
// job that removes exactly the row versions only they showed.
func TestDeleteManagedVersionsQueuesSweep(t *testing.T) {
	ctx := t.Context()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "d.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	id := []string{"t"}
	if _, _, err := db.CreateTable(ctx, id, store.NewTable{Data: cleanupRows(t, 10)}); err != nil {
		t.Fatal(err)
	}
	// Versions 2 and 3 each rewrite every row.
	for range 2 {
		if _, err := db.Update(ctx, id, []store.ColumnUpdate{{Path: "val", Expr: "val + 1"}}, "true"); err != nil {
			t.Fatal(err)
		}
	}
	n, _, err := db.DeleteVersions(ctx, id, "", []store.VersionRange{{Start: 2, End: 3}})
	if err != nil || n != 1 {
		t.Fatalf("delete version 2: %d %v", n, err)
	}
	v := int64(2)
	if _, _, err := db.CountRows(ctx, id, &v, ""); store.ErrorCode(err) != store.CodeTableVersionNotFound {
		t.Fatalf("version 2 after its deletion: %v, want code 11", err)
	}
	job, err := db.ClaimJob(ctx, store.JobCleanupVersions)
	if err != nil || job == nil {
		t.Fatalf("no cleanup queued: %v", err)
	}
	var payload store.CleanupVersions
	if err := json.Unmarshal(job.Payload, &payload); err != nil {
		t.Fatal(err)
	}
	res, err := db.RunCleanup(ctx, payload)
	if err != nil || res.Versions != 0 || res.Rows != 10 {
		t.Fatalf("the queued cleanup removed %+v %v; want the 10 row versions only version 2 showed", res, err)
	}
	for v, want := range map[int64]string{1: "[0,0,0,0,0,0,0,0,0,0]", 3: "[2,2,2,2,2,2,2,2,2,2]"} {
		got, err := snapshot(t, db, id, v)
		if err != nil || !strings.HasSuffix(got, want+"]") {
			t.Errorf("version %d after the sweep: %s %v, want vals %s", v, got, err, want)
		}
	}
}
