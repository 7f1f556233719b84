package server_test

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lancens/lancens/client"
	"github.com/lancens/lancens/internal/testkit/apitest"
	"github.com/lancens/lancens/lance/manifestname"
	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/warehouse"
)

// stage writes a manifest file the way a Lance client stages one before
// committing it, and returns the object-store path Lance would send.
func stage(t *testing.T, location string, v int64, content string) string {
	t.Helper()
	dir := filepath.Join(location, "_versions")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, fmt.Sprintf("%s-%d-%d", manifestname.V2.FileName(v), time.Now().UnixNano(), len(content)))
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return warehouse.ObjectPath(p)
}

func localPath(objectPath string) string { return "/" + objectPath }

// TestManagedVersioningFiles commits versions of a declared table the way a
// Lance client does: stage a manifest in the table's location, then commit
// it; lancens writes the final manifest and records it.
func TestManagedVersioningFiles(t *testing.T) {
	s := apitest.Start(t, apitest.Options{})
	c := s.Client
	ctx := t.Context()
	info, err := c.DeclareTable(ctx, []string{"t"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !info.ManagedVersioning || !strings.HasPrefix(info.Location, s.Warehouse.Root()+string(filepath.Separator)) {
		t.Fatalf("declare: %+v (warehouse %s)", info, s.Warehouse.Root())
	}

	staged := stage(t, info.Location, 1, "manifest one")
	size := int64(len("manifest one"))
	v1, _, err := c.CreateTableVersion(ctx, []string{"t"}, client.VersionCommit{Version: 1, ManifestPath: staged, ManifestSize: &size, NamingScheme: "V2"})
	if err != nil {
		t.Fatal(err)
	}
	final := filepath.Join(info.Location, "_versions", "18446744073709551614.manifest")
	if v1.ManifestPath != warehouse.ObjectPath(final) || v1.ManifestSize == nil || *v1.ManifestSize != size {
		t.Fatalf("version 1 = %+v, want the final manifest %s", v1, final)
	}
	if b, err := os.ReadFile(final); err != nil || string(b) != "manifest one" {
		t.Fatalf("final manifest: %q %v", b, err)
	}
	if _, err := os.Stat(localPath(staged)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("staged manifest not removed: %v", err)
	}
	// A retry of the same commit (the client never saw the answer) gets
	// the stored record even though the staged file is gone.
	again, _, err := c.CreateTableVersion(ctx, []string{"t"}, client.VersionCommit{Version: 1, ManifestPath: staged, ManifestSize: &size})
	if err != nil || again.ManifestPath != v1.ManifestPath {
		t.Fatalf("retry: %+v %v", again, err)
	}

	t.Run("V1Naming", func(t *testing.T) {
		v, _, err := c.CreateTableVersion(ctx, []string{"t"}, client.VersionCommit{Version: 2, ManifestPath: stage(t, info.Location, 2, "two"), NamingScheme: "V1"})
		if err != nil {
			t.Fatal(err)
		}
		if want := warehouse.ObjectPath(filepath.Join(info.Location, "_versions", "2.manifest")); v.ManifestPath != want {
			t.Fatalf("V1 path %q, want %q", v.ManifestPath, want)
		}
	})

	for _, tc := range []struct {
		name     string
		path     string
		version  int64
		wantCode store.Code
	}{
		{"StagedMissing", warehouse.ObjectPath(filepath.Join(info.Location, "_versions", "gone.manifest-x")), 3, store.CodeInvalidInput},
		{"OutsideTable", warehouse.ObjectPath(filepath.Join(s.Warehouse.Root(), "elsewhere.manifest")), 3, store.CodeInvalidInput},
		{"DotDot", warehouse.ObjectPath(info.Location) + "/../x/_versions/3.manifest", 3, store.CodeInvalidInput},
		{"ConflictingContent", stage(t, info.Location, 2, "someone else's two"), 2, store.CodeConcurrentModification},
		{"NotNext", stage(t, info.Location, 5, "five"), 5, store.CodeConcurrentModification},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := c.CreateTableVersion(ctx, []string{"t"}, client.VersionCommit{Version: tc.version, ManifestPath: tc.path})
			if store.ErrorCode(err) != tc.wantCode {
				t.Fatalf("got %v, want code %d", err, tc.wantCode)
			}
		})
	}
	// Refused commits leave no final manifest behind and keep the chain.
	if _, err := os.Stat(filepath.Join(info.Location, "_versions", manifestname.V2.FileName(5))); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("refused commit left a final manifest: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(info.Location, "_versions", "2.manifest")); string(b) != "two" {
		t.Fatalf("conflicting commit changed version 2's manifest to %q", b)
	}
	latest, err := c.LatestTableVersion(ctx, []string{"t"}, "")
	if err != nil || latest.Version != 2 {
		t.Fatalf("latest %+v %v", latest, err)
	}
}

// TestBatchFiles covers atomic batches on local tables: a declaration and
// commits in one batch; a failed batch leaves no manifest behind.
func TestBatchFiles(t *testing.T) {
	s := apitest.Start(t, apitest.Options{})
	c := s.Client
	ctx := t.Context()
	a, err := c.DeclareTable(ctx, []string{"a"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	loc := filepath.Join(s.Warehouse.Root(), "b-explicit.lance")
	results, _, err := c.BatchCommit(ctx,
		client.BatchOp{ID: []string{"b"}, Declare: &client.DeclareTableOptions{Location: "b-explicit.lance"}},
		client.BatchOp{ID: []string{"b"}, CommitVersion: &client.VersionCommit{Version: 1, ManifestPath: stage(t, loc, 1, "b1")}},
		client.BatchOp{ID: []string{"a"}, CommitVersion: &client.VersionCommit{Version: 1, ManifestPath: stage(t, a.Location, 1, "a1")}},
	)
	if err != nil {
		t.Fatal(err)
	}
	if results[0].Declared.Location != loc || results[1].Version.Version != 1 || results[2].Version.Version != 1 {
		t.Fatalf("results %+v", results)
	}
	for _, dir := range []string{loc, a.Location} {
		if _, err := os.Stat(filepath.Join(dir, "_versions", manifestname.V2.FileName(1))); err != nil {
			t.Fatalf("final manifest missing in %s: %v", dir, err)
		}
	}

	// One conflicting entry: nothing applies, no file is left.
	_, _, err = c.CommitVersions(ctx,
		client.TableCommit{ID: []string{"a"}, VersionCommit: client.VersionCommit{Version: 2, ManifestPath: stage(t, a.Location, 2, "a2")}},
		client.TableCommit{ID: []string{"b"}, VersionCommit: client.VersionCommit{Version: 1, ManifestPath: stage(t, loc, 1, "other b1")}},
	)
	if !errors.Is(err, client.ErrConcurrentModification) {
		t.Fatalf("conflicting batch: %v", err)
	}
	if _, err := os.Stat(filepath.Join(a.Location, "_versions", manifestname.V2.FileName(2))); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("failed batch left a's version 2 manifest: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(loc, "_versions", manifestname.V2.FileName(1))); string(b) != "b1" {
		t.Fatalf("failed batch changed b's manifest to %q", b)
	}
	latest, err := c.LatestTableVersion(ctx, []string{"a"}, "")
	if err != nil || latest.Version != 1 {
		t.Fatalf("a's latest %+v %v", latest, err)
	}
}

// TestCommitRaceFiles races 16 clients over HTTP to commit each next
// version of a table on local disk: one wins each round, the others get
// code 14, and the chain has no gap or duplicate.
func TestCommitRaceFiles(t *testing.T) {
	s := apitest.Start(t, apitest.Options{})
	ctx := t.Context()
	info, err := s.Client.DeclareTable(ctx, []string{"race"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	const racers = 16
	for v := int64(1); v <= 5; v++ {
		errs := make([]error, racers)
		var wg sync.WaitGroup
		for i := range racers {
			path := stage(t, info.Location, v, fmt.Sprintf("v%d by %d", v, i))
			wg.Go(func() {
				_, _, errs[i] = s.Client.CreateTableVersion(ctx, []string{"race"}, client.VersionCommit{Version: v, ManifestPath: path})
			})
		}
		wg.Wait()
		winner := -1
		for i, err := range errs {
			switch {
			case err == nil && winner >= 0:
				t.Fatalf("version %d: racers %d and %d both won", v, winner, i)
			case err == nil:
				winner = i
			case !errors.Is(err, client.ErrConcurrentModification):
				t.Fatalf("racer %d: %v", i, err)
			}
		}
		if winner < 0 {
			t.Fatalf("version %d: nobody won", v)
		}
		b, err := os.ReadFile(filepath.Join(info.Location, "_versions", manifestname.V2.FileName(v)))
		if err != nil || string(b) != fmt.Sprintf("v%d by %d", v, winner) {
			t.Fatalf("version %d manifest %q (%v), want the winner's (%d)", v, b, err, winner)
		}
	}
	var got []int64
	for v, err := range s.Client.ListTableVersions(ctx, []string{"race"}, "") {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, v.Version)
	}
	if !slices.Equal(got, []int64{1, 2, 3, 4, 5}) {
		t.Fatalf("chain %v", got)
	}
}

// TestRestart checks that versions, tags and branches survive closing and
// reopening the database.
func TestRestart(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "lancens.db")
	wh := t.TempDir()
	s := apitest.Start(t, apitest.Options{DBPath: dbPath, Warehouse: wh, ExternalRoots: []string{"s3://b"}})
	ctx := t.Context()
	c := s.Client
	if _, err := c.DeclareTable(ctx, []string{"t"}, &client.DeclareTableOptions{Location: "s3://b/t"}); err != nil {
		t.Fatal(err)
	}
	for v := int64(1); v <= 3; v++ {
		if _, _, err := c.CreateTableVersion(ctx, []string{"t"}, client.VersionCommit{Version: v, ManifestPath: fmt.Sprintf("b/t/%d", v)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.CreateTableTag(ctx, []string{"t"}, "keep", 2, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateTableBranch(ctx, []string{"t"}, "dev", "", nil); err != nil {
		t.Fatal(err)
	}
	s.Stop()

	s = apitest.Start(t, apitest.Options{DBPath: dbPath, Warehouse: wh, ExternalRoots: []string{"s3://b"}})
	c = s.Client
	latest, err := c.LatestTableVersion(ctx, []string{"t"}, "")
	if err != nil || latest.Version != 3 || latest.ManifestPath != "b/t/3" {
		t.Fatalf("latest after restart: %+v %v", latest, err)
	}
	tag, err := c.GetTableTag(ctx, []string{"t"}, "keep")
	if err != nil || tag.Version != 2 {
		t.Fatalf("tag after restart: %+v %v", tag, err)
	}
	branches, _, err := c.ListTableBranchesPage(ctx, []string{"t"}, "", 0)
	if err != nil || len(branches) != 1 || branches[0].Name != "dev" || branches[0].ParentVersion != 3 {
		t.Fatalf("branches after restart: %+v %v", branches, err)
	}
	// The chain goes on where it stopped.
	if _, _, err := c.CreateTableVersion(ctx, []string{"t"}, client.VersionCommit{Version: 4, ManifestPath: "b/t/4"}); err != nil {
		t.Fatal(err)
	}
}

// waitTransaction polls a transaction until it leaves Queued/Running.
func waitTransaction(t testing.TB, c *client.Client, txID string) *client.Transaction {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		tx, err := c.DescribeTransaction(t.Context(), []string{txID})
		if err != nil {
			t.Fatal(err)
		}
		if tx.Status != "Queued" && tx.Status != "Running" {
			return tx
		}
		if time.Now().After(deadline) {
			t.Fatalf("transaction %s still %s", txID, tx.Status)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestDropDeletesOwnedData checks that dropping a table deletes the data
// lancens owns (in the background, tracked by a transaction) and never data
// outside the warehouse; deregistering keeps data.
func TestDropDeletesOwnedData(t *testing.T) {
	ext := t.TempDir()
	s := apitest.Start(t, apitest.Options{ExternalRoots: []string{ext}})
	ctx := t.Context()
	c := s.Client
	mkdata := func(dir string) {
		t.Helper()
		stage(t, dir, 1, "data")
	}
	owned, err := c.DeclareTable(ctx, []string{"owned"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	mkdata(owned.Location)
	outside := filepath.Join(ext, "outside.lance")
	mkdata(outside)
	if _, err := c.DeclareTable(ctx, []string{"outside"}, &client.DeclareTableOptions{Location: outside}); err != nil {
		t.Fatal(err)
	}
	kept, err := c.DeclareTable(ctx, []string{"kept"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	mkdata(kept.Location)

	d, err := c.DropTable(ctx, []string{"owned"})
	if err != nil {
		t.Fatal(err)
	}
	if tx := waitTransaction(t, c, d.TransactionID); tx.Status != "Succeeded" {
		t.Fatalf("deletion transaction %+v", tx)
	}
	if _, err := os.Stat(owned.Location); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("owned data still there: %v", err)
	}
	d, err = c.DropTable(ctx, []string{"outside"})
	if err != nil {
		t.Fatal(err)
	}
	waitTransaction(t, c, d.TransactionID)
	if _, err := os.Stat(outside); err != nil {
		t.Fatalf("data outside the warehouse was deleted: %v", err)
	}
	if _, err := c.DeregisterTable(ctx, []string{"kept"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(kept.Location); err != nil {
		t.Fatalf("deregistered data was deleted: %v", err)
	}

	// A cascading namespace drop deletes its tables' data too.
	if _, err := c.CreateNamespace(ctx, []string{"ns"}, nil); err != nil {
		t.Fatal(err)
	}
	inNS, err := c.DeclareTable(ctx, []string{"ns", "t"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	mkdata(inNS.Location)
	dropped, err := c.DropNamespace(ctx, []string{"ns"}, &client.DropNamespaceOptions{Behavior: "Cascade"})
	if err != nil {
		t.Fatal(err)
	}
	if len(dropped.TransactionIDs) != 1 {
		t.Fatalf("cascade drop transactions %q", dropped.TransactionIDs)
	}
	waitTransaction(t, c, dropped.TransactionIDs[0])
	if _, err := os.Stat(inNS.Location); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("cascaded table data still there: %v", err)
	}
}

// TestDescribeTableOptions covers describe's flags, as body fields and as
// query parameters, and version selection by number, tag and branch.
func TestDescribeTableOptions(t *testing.T) {
	s := apitest.Start(t, apitest.Options{})
	ctx := t.Context()
	c := s.Client
	if _, err := c.CreateNamespace(ctx, []string{"ns"}, nil); err != nil {
		t.Fatal(err)
	}
	info, err := c.DeclareTable(ctx, []string{"ns", "t"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	d, err := c.DescribeTable(ctx, []string{"ns", "t"}, &client.DescribeTableOptions{WithTableURI: true, LoadDetailedMetadata: true})
	if err != nil {
		t.Fatal(err)
	}
	if d.TableURI != "file://"+info.Location || d.IsOnlyDeclared == nil || !*d.IsOnlyDeclared || d.Table != "t" ||
		!slices.Equal(d.Namespace, []string{"ns"}) || d.Version != nil {
		t.Fatalf("detailed describe of a declared table: %+v", d)
	}
	plain, err := c.DescribeTable(ctx, []string{"ns", "t"}, nil)
	if err != nil || plain.IsOnlyDeclared != nil || plain.TableURI != "" || plain.Table != "" {
		t.Fatalf("plain describe: %+v %v", plain, err)
	}
	for v := int64(1); v <= 2; v++ {
		if _, _, err := c.CreateTableVersion(ctx, []string{"ns", "t"}, client.VersionCommit{Version: v, ManifestPath: stage(t, info.Location, v, "m")}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.CreateTableTag(ctx, []string{"ns", "t"}, "first", 1, ""); err != nil {
		t.Fatal(err)
	}
	one := int64(1)
	for _, tc := range []struct {
		name     string
		opts     client.DescribeTableOptions
		wantCode store.Code
		version  int64
	}{
		{"Latest", client.DescribeTableOptions{LoadDetailedMetadata: true}, -1, 2},
		{"ByVersion", client.DescribeTableOptions{LoadDetailedMetadata: true, Version: &one}, -1, 1},
		{"ByTag", client.DescribeTableOptions{LoadDetailedMetadata: true, Tag: "first"}, -1, 1},
		{"MissingVersion", client.DescribeTableOptions{Version: ptr(int64(7))}, store.CodeTableVersionNotFound, 0},
		{"MissingTag", client.DescribeTableOptions{Tag: "nope"}, store.CodeTableTagNotFound, 0},
		{"TagAndVersion", client.DescribeTableOptions{Tag: "first", Version: &one}, store.CodeInvalidInput, 0},
		{"MissingBranch", client.DescribeTableOptions{Branch: "nope"}, store.CodeTableBranchNotFound, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := c.DescribeTable(ctx, []string{"ns", "t"}, &tc.opts)
			if tc.wantCode >= 0 {
				if store.ErrorCode(err) != tc.wantCode {
					t.Fatalf("got %v, want code %d", err, tc.wantCode)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d.Version == nil || *d.Version != tc.version || d.IsOnlyDeclared == nil || *d.IsOnlyDeclared {
				t.Fatalf("describe %+v", d)
			}
		})
	}
	// Query parameters work as the body fields do.
	status, body, _ := s.Do(t, "POST", "/v1/table/ns$t/describe?with_table_uri=true&check_declared=true", nil, nil)
	if status != http.StatusOK || !bytes.Contains(body, []byte(`"table_uri"`)) || !bytes.Contains(body, []byte(`"is_only_declared":false`)) {
		t.Fatalf("describe with query flags: %d %s", status, body)
	}
	// Exists, with and without a version.
	for _, tc := range []struct {
		version *int64
		want    bool
	}{{nil, true}, {&one, true}, {ptr(int64(9)), false}} {
		if ok, err := c.TableExists(ctx, []string{"ns", "t"}, tc.version); err != nil || ok != tc.want {
			t.Fatalf("exists(version %v) = %v %v", tc.version, ok, err)
		}
	}
	if ok, err := c.TableExists(ctx, []string{"ns", "nope"}, nil); err != nil || ok {
		t.Fatalf("exists(nope) = %v %v", ok, err)
	}
}

func ptr[T any](v T) *T { return &v }
