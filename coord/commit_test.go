package coord_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/lancens/lancens/coord"
	"github.com/lancens/lancens/engine"
	"github.com/lancens/lancens/lance/manifestname"
	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/store/sqlite"
	"github.com/lancens/lancens/warehouse"
)

// env is a commit coordinator over a SQLite store and a warehouse in
// t.TempDir().
type env struct {
	db *sqlite.DB
	wh *warehouse.Warehouse
	c  *coord.Committer
}

func newEnv(t testing.TB, opts sqlite.Options) *env {
	t.Helper()
	db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "lancens.db"), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	wh, err := warehouse.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return &env{db: db, wh: wh, c: coord.NewCommitter(db, wh, slog.New(slog.DiscardHandler))}
}

// withEngine returns the store with the Lance engine serving the rows of
// its tables from the warehouse, committing through e's committer.
func (e *env) withEngine(t testing.TB) store.ManagedBackend {
	t.Helper()
	eng, err := engine.New(engine.Options{Catalog: e.db, Warehouse: e.wh, Commits: e.c})
	if err != nil {
		t.Fatal(err)
	}
	return engine.WithBackend(e.db, eng)
}

// declare declares table name at a new location in the warehouse and
// returns the location.
func (e *env) declare(t testing.TB, name string) string {
	t.Helper()
	loc, err := e.wh.Allocate(nil, name)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.db.DeclareTable(t.Context(), []string{name}, store.TableDeclaration{Location: loc, Owned: true}); err != nil {
		t.Fatal(err)
	}
	return loc
}

// stage writes a manifest as a Lance client stages one and returns the
// path the client would commit.
func stage(t testing.TB, location string, v int64, content string) string {
	t.Helper()
	dir := filepath.Join(location, "_versions")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, fmt.Sprintf("%s-%s", manifestname.V2.FileName(v), content))
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return warehouse.ObjectPath(p)
}

// final returns the content of the final manifest of version v, or "" when
// there is none.
func final(t *testing.T, location string, v int64) string {
	t.Helper()
	b, err := os.ReadFile(warehouse.ManifestPath(location, "", v, manifestname.V2))
	if errors.Is(err, os.ErrNotExist) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func commit(v int64, staged string) store.VersionCommit {
	return store.VersionCommit{Version: v, StagedPath: staged}
}

// TestCommit checks that a commit puts the staged manifest at its final
// name and records that name, that a version is committed once
// (put-if-not-exists) whatever else is staged for it later, and that a
// refused commit leaves no final manifest.
func TestCommit(t *testing.T) {
	e := newEnv(t, sqlite.Options{})
	ctx := t.Context()
	loc := e.declare(t, "t")
	id := []string{"t"}

	first := commit(1, stage(t, loc, 1, "one"))
	v, _, err := e.c.Commit(ctx, id, first, manifestname.V2)
	if err != nil {
		t.Fatal(err)
	}
	if want := warehouse.ObjectPath(warehouse.ManifestPath(loc, "", 1, manifestname.V2)); v.ManifestPath != want || *v.ManifestSize != 3 {
		t.Fatalf("recorded %s (%d bytes), want %s (3)", v.ManifestPath, *v.ManifestSize, want)
	}
	if got := final(t, loc, 1); got != "one" {
		t.Fatalf("final manifest of version 1: %q", got)
	}

	// The same commit again (a client retrying) answers the record.
	again, _, err := e.c.Commit(ctx, id, first, manifestname.V2)
	if err != nil || again.ManifestPath != v.ManifestPath {
		t.Fatalf("retried commit: %+v, %v", again, err)
	}

	// Version 1 again: refused, and its manifest stays the first one.
	if _, _, err := e.c.Commit(ctx, id, commit(1, stage(t, loc, 1, "other")), manifestname.V2); store.ErrorCode(err) != store.CodeConcurrentModification {
		t.Fatalf("second commit of version 1: %v", err)
	}
	if got := final(t, loc, 1); got != "one" {
		t.Fatalf("version 1's manifest became %q", got)
	}

	// Version 3 skips version 2: the store refuses it, and the manifest
	// put in place for it goes again.
	if _, _, err := e.c.Commit(ctx, id, commit(3, stage(t, loc, 3, "three")), manifestname.V2); store.ErrorCode(err) != store.CodeConcurrentModification {
		t.Fatalf("version 3 after 1: %v", err)
	}
	if got := final(t, loc, 3); got != "" {
		t.Fatalf("refused version 3 left manifest %q", got)
	}

	// A staged manifest outside the table's location is refused before
	// anything moves.
	other := e.declare(t, "u")
	if _, _, err := e.c.Commit(ctx, id, commit(2, stage(t, other, 2, "elsewhere")), manifestname.V2); store.ErrorCode(err) != store.CodeInvalidInput {
		t.Fatalf("manifest of another table: %v", err)
	}
	if _, _, err := e.c.Commit(ctx, []string{"missing"}, commit(1, stage(t, loc, 1, "x")), manifestname.V2); store.ErrorCode(err) != store.CodeTableNotFound {
		t.Fatalf("missing table: %v", err)
	}
}

// TestCommitRetry commits a version whose final manifest an earlier
// attempt left behind without a record (the process died between the two):
// the new commit replaces it.
func TestCommitRetry(t *testing.T) {
	e := newEnv(t, sqlite.Options{})
	ctx := t.Context()
	loc := e.declare(t, "t")
	if err := os.MkdirAll(filepath.Join(loc, "_versions"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(warehouse.ManifestPath(loc, "", 1, manifestname.V2), []byte("lost"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.c.Commit(ctx, []string{"t"}, commit(1, stage(t, loc, 1, "retry")), manifestname.V2); err != nil {
		t.Fatal(err)
	}
	if got := final(t, loc, 1); got != "retry" {
		t.Fatalf("final manifest: %q, want the retry's", got)
	}
}

// TestCommitAtNotedPlace commits at a location the committer noted (it
// committed version 1 there), where a commit publishes before it reads the
// catalog: a final manifest left without a record is replaced, and a
// refused commit leaves the final manifest as it found it — absent, or
// the recorded version's — never its own content.
func TestCommitAtNotedPlace(t *testing.T) {
	for _, tc := range []struct {
		name    string
		prepare func(t *testing.T, loc string)
		version int64
		want    store.Code // -1: committed
		final   string     // the final manifest of version after the commit
	}{
		{"Next", nil, 2, -1, "new"},
		{"OrphanReplaced", func(t *testing.T, loc string) {
			if err := os.WriteFile(warehouse.ManifestPath(loc, "", 2, manifestname.V2), []byte("lost"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, 2, -1, "new"},
		{"Gap", nil, 3, store.CodeConcurrentModification, ""},
		{"Recorded", nil, 1, store.CodeConcurrentModification, "one"},
		{"RecordedWithoutManifest", func(t *testing.T, loc string) {
			// What a power loss can leave with process durability.
			if err := os.Remove(warehouse.ManifestPath(loc, "", 1, manifestname.V2)); err != nil {
				t.Fatal(err)
			}
		}, 1, store.CodeConcurrentModification, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, sqlite.Options{})
			ctx := t.Context()
			loc := e.declare(t, "t")
			id := []string{"t"}
			if _, _, err := e.c.Commit(ctx, id, commit(1, stage(t, loc, 1, "one")), manifestname.V2); err != nil {
				t.Fatal(err)
			}
			if tc.prepare != nil {
				tc.prepare(t, loc)
			}
			_, _, err := e.c.Commit(ctx, id, commit(tc.version, stage(t, loc, tc.version, "new")), manifestname.V2)
			if got := store.ErrorCode(err); tc.want >= 0 && got != tc.want || tc.want < 0 && err != nil {
				t.Fatalf("commit of version %d: %v, want code %d", tc.version, err, tc.want)
			}
			if got := final(t, loc, tc.version); got != tc.final {
				t.Fatalf("final manifest of version %d: %q, want %q", tc.version, got, tc.final)
			}
		})
	}
}

// TestCommitRace commits version 1 from many goroutines at once, each with
// its own staged manifest: exactly one wins, and the final manifest is the
// winner's.
func TestCommitRace(t *testing.T) {
	e := newEnv(t, sqlite.Options{})
	loc := e.declare(t, "t")
	const n = 16
	staged := make([]string, n)
	for i := range staged {
		staged[i] = stage(t, loc, 1, fmt.Sprintf("writer%d", i))
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			_, _, errs[i] = e.c.Commit(t.Context(), []string{"t"}, commit(1, staged[i]), manifestname.V2)
		})
	}
	wg.Wait()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Fatalf("writers %d and %d both committed version 1", winner, i)
		case err == nil:
			winner = i
		case store.ErrorCode(err) != store.CodeConcurrentModification:
			t.Fatalf("writer %d: %v", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("no writer committed")
	}
	if got, want := final(t, loc, 1), fmt.Sprintf("writer%d", winner); got != want {
		t.Fatalf("final manifest %q, winner %q", got, want)
	}
}

// TestCommitBatchDiscards commits a batch whose last operation the store
// refuses: nothing is recorded, and the manifests put in place for the
// batch's other versions are removed.
func TestCommitBatchDiscards(t *testing.T) {
	e := newEnv(t, sqlite.Options{})
	ctx := t.Context()
	a, b := e.declare(t, "a"), e.declare(t, "b")
	newLoc, err := e.wh.Allocate(nil, "c")
	if err != nil {
		t.Fatal(err)
	}
	ca, cb := commit(1, stage(t, a, 1, "a1")), commit(1, stage(t, b, 1, "b1"))
	cc := commit(1, stage(t, newLoc, 1, "c1"))
	bad := commit(5, stage(t, b, 5, "b5")) // after version 1 of b comes 2
	ops := []store.BatchOperation{
		{ID: []string{"a"}, CommitVersion: &ca},
		{ID: []string{"c"}, Declare: &store.TableDeclaration{Location: newLoc, Owned: true}},
		{ID: []string{"c"}, CommitVersion: &cc},
		{ID: []string{"b"}, CommitVersion: &cb},
		{ID: []string{"b"}, CommitVersion: &bad},
	}
	schemes := make([]manifestname.Scheme, len(ops))
	if _, _, err := e.c.CommitBatch(ctx, ops, schemes); err == nil {
		t.Fatal("the batch committed")
	}
	for _, loc := range []string{a, b, newLoc} {
		if got := final(t, loc, 1); got != "" {
			t.Fatalf("refused batch left a manifest in %s: %q", loc, got)
		}
	}
	if _, err := e.db.DescribeVersion(ctx, []string{"a"}, "", nil); store.ErrorCode(err) != store.CodeTableVersionNotFound {
		t.Fatalf("version of a after a refused batch: %v", err)
	}

	// Without the bad operation the batch commits, every manifest in place.
	ops = ops[:4]
	ca, cb, cc = commit(1, stage(t, a, 1, "a1")), commit(1, stage(t, b, 1, "b1")), commit(1, stage(t, newLoc, 1, "c1"))
	if _, _, err := e.c.CommitBatch(ctx, ops, schemes[:4]); err != nil {
		t.Fatal(err)
	}
	for loc, want := range map[string]string{a: "a1", b: "b1", newLoc: "c1"} {
		if got := final(t, loc, 1); got != want {
			t.Fatalf("manifest in %s: %q, want %q", loc, got, want)
		}
	}
}

// lostAnswer is a store whose version commits land but answer an error,
// as a PostgreSQL commit does when the request is cancelled while the
// database commits.
type lostAnswer struct{ *sqlite.DB }

func (s lostAnswer) CommitVersion(ctx context.Context, id []string, c store.VersionCommit) (*store.TableVersion, string, error) {
	if _, _, err := s.DB.CommitVersion(ctx, id, c); err != nil {
		return nil, "", err
	}
	return nil, "", context.Canceled
}

// TestCommitKeepsManifestOfLandedRecord commits through a store that loses
// the answer of a commit that landed: the version is recorded, so its final
// manifest stays (removing it would lose the version), and a retry gets the
// record.
func TestCommitKeepsManifestOfLandedRecord(t *testing.T) {
	e := newEnv(t, sqlite.Options{})
	ctx := t.Context()
	loc := e.declare(t, "t")
	c := coord.NewCommitter(lostAnswer{e.db}, e.wh, slog.New(slog.DiscardHandler))
	staged := stage(t, loc, 1, "landed")
	if _, _, err := c.Commit(ctx, []string{"t"}, commit(1, staged), manifestname.V2); !errors.Is(err, context.Canceled) {
		t.Fatalf("Commit = %v, want the lost answer", err)
	}
	if got := final(t, loc, 1); got != "landed" {
		t.Fatalf("final manifest of a recorded version: %q, want %q", got, "landed")
	}
	v, _, err := e.c.Commit(ctx, []string{"t"}, commit(1, staged), manifestname.V2)
	if err != nil || v.Version != 1 {
		t.Fatalf("retry = %+v, %v", v, err)
	}
}

var _ coord.CommitStore = (*sqlite.DB)(nil)
var _ coord.Manifests = (*warehouse.Warehouse)(nil)

// unsureStore cannot say whether a version is recorded: its FindVersion
// fails as a busy or unreachable database does.
type unsureStore struct{ *sqlite.DB }

func (s unsureStore) FindVersion(context.Context, []string, string, int64) (*store.Table, *store.TableVersion, error) {
	return nil, nil, store.Errorf(store.CodeServiceUnavailable, "database busy")
}

// TestCommitWhenTheStoreCannotSay: a commit whose version the store cannot
// look up fails whole, recording nothing, rather than recording a final
// manifest path it never published.
func TestCommitWhenTheStoreCannotSay(t *testing.T) {
	e := newEnv(t, sqlite.Options{})
	ctx := t.Context()
	loc := e.declare(t, "t")
	c := coord.NewCommitter(unsureStore{e.db}, e.wh, slog.New(slog.DiscardHandler))
	staged := stage(t, loc, 1, "unsure")
	if _, _, err := c.Commit(ctx, []string{"t"}, commit(1, staged), manifestname.V2); store.ErrorCode(err) != store.CodeServiceUnavailable {
		t.Fatalf("Commit = %v, want code 17", err)
	}
	if _, err := e.db.DescribeVersion(ctx, []string{"t"}, "", nil); !errors.Is(err, store.ErrTableVersionNotFound) {
		t.Fatalf("a version was recorded: %v", err)
	}
}

// countingStore counts the catalog reads of commits.
type countingStore struct {
	*sqlite.DB
	describes, finds int
}

func (s *countingStore) DescribeTable(ctx context.Context, id []string) (*store.Table, error) {
	s.describes++
	return s.DB.DescribeTable(ctx, id)
}

func (s *countingStore) FindVersion(ctx context.Context, id []string, branch string, v int64) (*store.Table, *store.TableVersion, error) {
	s.finds++
	return s.DB.FindVersion(ctx, id, branch, v)
}

// TestCommitFollowsTheTable commits versions of a table through one
// committer: the first commit looks the table up, then reads the catalog
// under the lock; later commits, at the location the first one noted, read
// nothing before the record (which checks the location itself). When the
// table is dropped and declared again elsewhere, the next commit follows
// it to its new location and publishes nothing at the old one; when it is
// gone, the commit says so and leaves no manifest behind.
func TestCommitFollowsTheTable(t *testing.T) {
	e := newEnv(t, sqlite.Options{})
	ctx := t.Context()
	st := &countingStore{DB: e.db}
	c := coord.NewCommitter(st, e.wh, slog.New(slog.DiscardHandler))
	id := []string{"t"}
	old := e.declare(t, "t")
	for v := int64(1); v <= 3; v++ {
		st.describes, st.finds = 0, 0
		if _, _, err := c.Commit(ctx, id, commit(v, stage(t, old, v, fmt.Sprint("old", v))), manifestname.V2); err != nil {
			t.Fatal(err)
		}
		want := 0
		if v == 1 {
			want = 1
		}
		if st.describes != want || st.finds != want {
			t.Fatalf("commit of version %d: %d table lookups and %d version lookups, want %d and %d", v, st.describes, st.finds, want, want)
		}
	}

	if _, _, err := e.db.DropTable(ctx, id); err != nil {
		t.Fatal(err)
	}
	moved := e.declare(t, "t")
	if moved == old {
		t.Fatal("the table was declared again at its old location")
	}
	st.describes, st.finds = 0, 0
	v, _, err := c.Commit(ctx, id, commit(1, stage(t, moved, 1, "new1")), manifestname.V2)
	if err != nil {
		t.Fatalf("commit after the table moved: %v", err)
	}
	if want := warehouse.ObjectPath(warehouse.ManifestPath(moved, "", 1, manifestname.V2)); v.ManifestPath != want {
		t.Fatalf("recorded %s, want %s", v.ManifestPath, want)
	}
	if got := final(t, moved, 1); got != "new1" {
		t.Fatalf("final manifest at the new location: %q", got)
	}
	if got := final(t, old, 1); got != "old1" {
		t.Fatalf("the old location's manifest of version 1 became %q", got)
	}
	if st.finds != 2 {
		t.Fatalf("commit after the table moved: %d version lookups, want 2 (the old location, then the new)", st.finds)
	}

	if _, _, err := e.db.DropTable(ctx, id); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Commit(ctx, id, commit(2, stage(t, moved, 2, "new2")), manifestname.V2); store.ErrorCode(err) != store.CodeTableNotFound {
		t.Fatalf("commit of a dropped table: %v, want code 4", err)
	}
	if got := final(t, moved, 2); got != "" {
		t.Fatalf("a commit of a dropped table published %q", got)
	}
}
