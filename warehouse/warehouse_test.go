package warehouse

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/lancens/lancens/lance/blob"
	"github.com/lancens/lancens/lance/manifestname"
	"github.com/lancens/lancens/objstore"
	"github.com/lancens/lancens/store"
)

func TestAllocate(t *testing.T) {
	w, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	a, errA := w.Allocate([]string{"prod", "team a"}, "my/table")
	b, errB := w.Allocate([]string{"prod", "team a"}, "my/table")
	if errA != nil || errB != nil {
		t.Fatal(errA, errB)
	}
	if a == b {
		t.Fatal("two allocations gave the same location")
	}
	if !strings.HasPrefix(a, filepath.Join(w.Root(), "prod", "team_a", "my_table-")) || !strings.HasSuffix(a, ".lance") {
		t.Fatalf("location %q", a)
	}
	if got := sanitize("..hidden"); got != "_.hidden" {
		t.Fatalf("sanitize(..hidden) = %q", got)
	}
	// A namespace directory that is a link out of the warehouse is refused.
	if err := os.Symlink(t.TempDir(), filepath.Join(w.Root(), "evil")); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Allocate([]string{"evil"}, "t"); store.ErrorCode(err) != store.CodeInvalidInput {
		t.Fatalf("allocation through a link out: %v", err)
	}
}

// mkdir creates directory p (and its parents) and returns it.
func mkdir(t *testing.T, p string) string {
	t.Helper()
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func symlink(t *testing.T, target, link string) string {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	return link
}

func TestResolve(t *testing.T) {
	base := t.TempDir()
	ext := mkdir(t, filepath.Join(base, "datasets"))
	outside := mkdir(t, filepath.Join(base, "outside"))
	w, err := Open(filepath.Join(base, "wh"), ext, "s3://bucket/prefix")
	if err != nil {
		t.Fatal(err)
	}
	root := w.Root()
	symlink(t, outside, filepath.Join(root, "out"))
	symlink(t, ext, filepath.Join(root, "toext"))
	mkdir(t, filepath.Join(root, "real"))
	symlink(t, filepath.Join(root, "real"), filepath.Join(root, "alias"))
	symlink(t, filepath.Join(base, "missing"), filepath.Join(root, "dangling"))
	for _, tc := range []struct {
		name, location string
		want           string // "" when refused with InvalidInput
		owned          bool
	}{
		{"Relative", "ns/t.lance", filepath.Join(root, "ns", "t.lance"), true},
		{"AbsoluteInside", filepath.Join(root, "t.lance"), filepath.Join(root, "t.lance"), false},
		{"FileURIInside", "file://" + filepath.Join(root, "u.lance"), filepath.Join(root, "u.lance"), false},
		{"External", filepath.Join(ext, "ds.lance"), filepath.Join(ext, "ds.lance"), false},
		{"LinkInsideRecordedAsRealPath", "alias/t.lance", filepath.Join(root, "real", "t.lance"), true},
		{"RelativeThroughLinkToExternal", "toext/t.lance", filepath.Join(ext, "t.lance"), false},
		{"ObjectStoreInsideExternal", "s3://bucket/prefix/t.lance", "s3://bucket/prefix/t.lance", false},
		{"Etc", "/etc", "", false},
		{"FileSystemRoot", "/", "", false},
		{"FileURIEtc", "file:///etc", "", false},
		{"OutsideDir", filepath.Join(outside, "t.lance"), "", false},
		{"WarehouseRoot", root, "", false},
		{"WarehouseRootDot", ".", "", false},
		{"ExternalRoot", ext, "", false},
		{"ParentOfRoot", base, "", false},
		{"DotDot", "../t.lance", "", false},
		{"DotDotInside", "a/../../t.lance", "", false},
		{"AbsoluteDotDot", filepath.Join(root, "a") + "/../../x", "", false},
		{"ThroughLinkOut", "out/t.lance", "", false},
		{"LinkOutItself", "out", "", false},
		{"DanglingLink", "dangling/t.lance", "", false},
		{"NUL", "t\x00.lance", "", false},
		{"ControlChar", "t\n.lance", "", false},
		{"InvalidUTF8", "t\xff.lance", "", false},
		{"Blank", "  ", "", false},
		{"ObjectStoreOtherBucket", "s3://other/t.lance", "", false},
		{"ObjectStoreOtherPrefix", "s3://bucket/prefixed/t.lance", "", false},
		{"ObjectStoreOtherScheme", "gs://bucket/prefix/t.lance", "", false},
		{"ObjectStoreRoot", "s3://bucket/prefix/", "", false},
		{"ObjectStoreDotDot", "s3://bucket/prefix/../x", "", false},
		{"RelativeFileURI", "file://relative/path", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, owned, err := w.Resolve(tc.location)
			if tc.want == "" {
				if store.ErrorCode(err) != store.CodeInvalidInput {
					t.Fatalf("Resolve(%q) = %q, %v; want InvalidInput", tc.location, got, err)
				}
				return
			}
			if err != nil || got != tc.want || owned != tc.owned {
				t.Fatalf("Resolve(%q) = %q, owned %v, %v; want %q, owned %v", tc.location, got, owned, err, tc.want, tc.owned)
			}
		})
	}
}

func TestOpenExternalRoots(t *testing.T) {
	base := t.TempDir()
	file := filepath.Join(base, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, root string
		ok         bool
	}{
		{"Directory", base, true},
		{"FileURI", "file://" + base, true},
		{"Bucket", "s3://bucket", true},
		{"Missing", filepath.Join(base, "missing"), false},
		{"NotADirectory", file, false},
		{"NoBucket", "s3:///prefix", false},
		{"DotDot", "s3://bucket/a/../b", false},
		{"NUL", "s3://bucket/\x00", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Open(filepath.Join(base, "wh"), tc.root); (err == nil) != tc.ok {
				t.Fatalf("Open with external root %q: %v, want ok %v", tc.root, err, tc.ok)
			}
		})
	}
}

func TestRemove(t *testing.T) {
	base := t.TempDir()
	w, err := Open(filepath.Join(base, "wh"))
	if err != nil {
		t.Fatal(err)
	}
	mk := func(p string) string {
		t.Helper()
		mkdir(t, p)
		if err := os.WriteFile(filepath.Join(p, "f"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	inside := mk(filepath.Join(w.Root(), "ns", "t.lance"))
	outside := mk(filepath.Join(base, "outside"))
	// A symbolic link inside the warehouse to a directory outside it, and
	// one to a table inside it.
	symlink(t, outside, filepath.Join(w.Root(), "link"))
	other := mk(filepath.Join(w.Root(), "other.lance"))
	symlink(t, other, filepath.Join(w.Root(), "alias.lance"))
	for _, tc := range []struct {
		name, location string
		ok             bool
	}{
		{"Inside", inside, true},
		{"InsideFileURI", "file://" + mk(filepath.Join(w.Root(), "u.lance")), true},
		{"Missing", filepath.Join(w.Root(), "gone"), true},
		{"Root", w.Root(), false},
		{"Outside", outside, false},
		{"ThroughSymlink", filepath.Join(w.Root(), "link", "sub"), false},
		{"SymlinkItself", filepath.Join(w.Root(), "link"), false},
		{"LinkToAnotherTable", filepath.Join(w.Root(), "alias.lance"), false},
		{"Remote", "s3://bucket/t", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := w.Remove(t.Context(), tc.location); (err == nil) != tc.ok {
				t.Fatalf("Remove(%q) = %v, want ok %v", tc.location, err, tc.ok)
			}
		})
	}
	if _, err := os.Stat(inside); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("inside not removed")
	}
	for _, f := range []string{filepath.Join(outside, "f"), filepath.Join(other, "f")} {
		if _, err := os.Stat(f); err != nil {
			t.Fatalf("%s touched: %v", f, err)
		}
	}
}

func TestStagedKey(t *testing.T) {
	local := tableFiles{dir: "/wh/t.lance", recordPrefix: "wh/t.lance/", location: "/wh/t.lance", local: true}
	remote := tableFiles{prefix: "wh/t.lance/", scheme: objstore.SchemeS3, bucketName: "b", location: "s3://b/wh/t.lance"}
	for _, tc := range []struct {
		files      tableFiles
		path, want string
	}{
		{local, "wh/t.lance/_versions/1.manifest-abc", "_versions/1.manifest-abc"},
		{local, "/wh/t.lance/_versions/1.manifest-abc", "_versions/1.manifest-abc"},
		{local, "file:///wh/t.lance/tree/dev/_versions/x", "tree/dev/_versions/x"},
		{local, "wh/other.lance/_versions/1.manifest", ""},
		{local, "wh/t.lance/../other/_versions/1", ""},
		{local, "wh/t.lance", ""},
		{local, "wh/t.lance2/x", ""},
		{local, "s3://wh/t.lance/x", ""},
		{local, "wh/t.lance/_versions/1\x00.manifest", ""},
		{local, "wh/t.lance/_versions/1\r.manifest", ""},
		{remote, "wh/t.lance/_versions/1.manifest-abc", "wh/t.lance/_versions/1.manifest-abc"},
		{remote, "s3://b/wh/t.lance/_versions/1.manifest-abc", "wh/t.lance/_versions/1.manifest-abc"},
		{remote, "s3://other/wh/t.lance/_versions/1.manifest-abc", ""},
		{remote, "file:///wh/t.lance/_versions/1.manifest-abc", ""},
		{remote, "wh/t.lance/../x/_versions/1", ""},
		{remote, "wh/t.lance", ""},
		{remote, "wh/_versions/1.manifest", ""},
	} {
		got, err := tc.files.stagedKey(tc.path)
		if (err == nil) != (tc.want != "") || got != tc.want {
			t.Errorf("%s: stagedKey(%q) = %q, %v; want %q", tc.files.location, tc.path, got, err, tc.want)
		}
		if err != nil && store.ErrorCode(err) != store.CodeInvalidInput {
			t.Errorf("stagedKey(%q) error code %v", tc.path, store.ErrorCode(err))
		}
	}
	if got := ManifestPath("/wh/t.lance", "dev", 1, manifestname.V1); got != "/wh/t.lance/tree/dev/_versions/1.manifest" {
		t.Fatalf("ManifestPath = %q", got)
	}
}

// TestPublish runs a manifest's publication through every outcome, with
// each commit durability.
func TestPublish(t *testing.T) {
	for _, d := range []store.CommitDurability{store.DurabilityFull, store.DurabilityProcess} {
		t.Run(d.String(), func(t *testing.T) { testPublish(t, d) })
	}
}

// syncedDir returns the bucket of the local table directory dir that
// publishes with durability d.
func syncedDir(dir string, d store.CommitDurability) *objstore.Dir {
	if d == store.DurabilityProcess {
		return objstore.NewDirNoSync(dir)
	}
	return objstore.NewDir(dir)
}

func testPublish(t *testing.T, d store.CommitDurability) {
	w, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w.SetCommitDurability(d)
	ctx := t.Context()
	dir := mkdir(t, filepath.Join(w.Root(), "t.lance"))
	staged := filepath.Join(dir, "staged")
	final := filepath.Join(dir, "_versions", "1.manifest")
	write := func(content string) {
		t.Helper()
		if err := os.WriteFile(staged, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	prepare := func(stagedPath string) *Publication {
		t.Helper()
		p, err := w.Prepare(dir, ObjectPath(stagedPath), "", 1, manifestname.V1)
		if err != nil || p == nil || p.ManifestPath != ObjectPath(final) {
			t.Fatalf("Prepare = %+v, %v", p, err)
		}
		return p
	}
	write("abc")
	p := prepare(staged)
	// The table's files are reached through a Dir that syncs, or not.
	if want := syncedDir(dir, d); !reflect.DeepEqual(p.files.bucket, want) {
		t.Fatalf("publishing through %#v, want %#v", p.files.bucket, want)
	}
	if err := w.Publish(ctx, p, false); err != nil || p.Size != 3 || p.ETag != "" {
		t.Fatalf("Publish = %+v, %v", p, err)
	}
	if b, _ := os.ReadFile(final); string(b) != "abc" {
		t.Fatalf("final manifest %q", b)
	}
	// The staged manifest stays until the version is recorded.
	if err := w.Settle(ctx, p); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(staged); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("staged file still there after Settle")
	}
	// The same content again (a retry) keeps the final manifest.
	write("abc")
	again := prepare(staged)
	if err := w.Publish(ctx, again, false); err != nil {
		t.Fatalf("publishing the same content again: %v", err)
	}
	if err := w.Discard(ctx, again); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(final); string(b) != "abc" {
		t.Fatalf("discarding a publication that found its content in place removed it: %q", b)
	}
	write("other")
	if err := w.Publish(ctx, prepare(staged), false); store.ErrorCode(err) != store.CodeConcurrentModification {
		t.Fatalf("create-only over another manifest: %v", err)
	}
	if b, _ := os.ReadFile(final); string(b) != "abc" {
		t.Fatalf("create-only changed the final file to %q", b)
	}
	replaced := prepare(staged)
	if err := w.Publish(ctx, replaced, true); err != nil {
		t.Fatalf("replace: %v", err)
	}
	if b, _ := os.ReadFile(final); string(b) != "other" {
		t.Fatalf("replace left %q", b)
	}
	if err := w.Publish(ctx, prepare(filepath.Join(dir, "missing")), true); store.ErrorCode(err) != store.CodeInvalidInput {
		t.Fatalf("missing staged file: %v", err)
	}
	// The first publication's manifest was replaced: discarding it leaves
	// the one that replaced it (another commit's).
	if err := w.Discard(ctx, p); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(final); string(b) != "other" {
		t.Fatalf("discarding a replaced manifest removed or changed its replacement: %q", b)
	}
	// A refused record: the final manifest goes, the staged one stays.
	if err := w.Discard(ctx, replaced); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(final); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("discarded manifest still there")
	}
	if b, _ := os.ReadFile(staged); string(b) != "other" {
		t.Fatalf("staged manifest after Discard: %q", b)
	}
	// Tables on object storage the warehouse does not reach record the
	// staged path as given.
	if p, err := w.Prepare("s3://bucket/t", "bucket/t/_versions/x", "", 1, manifestname.V1); p != nil || err != nil {
		t.Fatalf("Prepare on an unreached store = %+v, %v", p, err)
	}
}

// TestPublishRefusesLinks checks that no symbolic link in or to a table's
// location makes a commit move, create or replace a file outside it.
func TestPublishRefusesLinks(t *testing.T) {
	base := t.TempDir()
	w, err := Open(filepath.Join(base, "wh"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	secret := filepath.Join(mkdir(t, filepath.Join(base, "outside")), "secret")
	if err := os.WriteFile(secret, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	outDir := mkdir(t, filepath.Join(base, "outdir"))
	regular := func(dir string) string {
		t.Helper()
		p := filepath.Join(dir, "staged")
		if err := os.WriteFile(p, []byte("m"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name string
		// setup makes table directory dir and returns the staged path.
		setup func(t *testing.T, dir string) string
	}{
		{"StagedLinkToOutsideFile", func(t *testing.T, dir string) string {
			return symlink(t, secret, filepath.Join(mkdir(t, dir), "staged"))
		}},
		{"StagedThroughLinkedDir", func(t *testing.T, dir string) string {
			symlink(t, filepath.Dir(secret), filepath.Join(mkdir(t, dir), "sub"))
			return filepath.Join(dir, "sub", "secret")
		}},
		{"VersionsDirLinkedOut", func(t *testing.T, dir string) string {
			symlink(t, outDir, filepath.Join(mkdir(t, dir), "_versions"))
			return regular(dir)
		}},
		{"FinalManifestLinkedOut", func(t *testing.T, dir string) string {
			symlink(t, secret, filepath.Join(mkdir(t, filepath.Join(dir, "_versions")), "1.manifest"))
			return regular(dir)
		}},
		{"TableDirIsALink", func(t *testing.T, dir string) string {
			symlink(t, outDir, dir)
			return filepath.Join(dir, "staged")
		}},
		{"StagedIsADirectory", func(t *testing.T, dir string) string {
			return mkdir(t, filepath.Join(dir, "staged"))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(w.Root(), tc.name+".lance")
			staged := tc.setup(t, dir)
			for _, replace := range []bool{false, true} {
				p, err := w.Prepare(dir, ObjectPath(staged), "", 1, manifestname.V1)
				if err == nil {
					err = w.Publish(ctx, p, replace)
				}
				if store.ErrorCode(err) != store.CodeInvalidInput {
					t.Fatalf("Prepare and Publish (replace %v) = %v, want InvalidInput", replace, err)
				}
			}
			if b, err := os.ReadFile(secret); err != nil || string(b) != "secret" {
				t.Fatalf("outside file changed: %q %v", b, err)
			}
			if entries, _ := os.ReadDir(outDir); len(entries) != 0 {
				t.Fatalf("files written outside: %v", entries)
			}
		})
	}
	// A table location outside every root, recorded before lancens
	// checked, is refused too.
	outsideTable := mkdir(t, filepath.Join(base, "outside-table"))
	staged := regular(outsideTable)
	if _, err := w.Prepare(outsideTable, ObjectPath(staged), "", 1, manifestname.V1); store.ErrorCode(err) != store.CodeInvalidInput {
		t.Fatalf("Prepare outside the roots = %v, want InvalidInput", err)
	}
	if _, err := os.Stat(staged); err != nil {
		t.Fatalf("staged file outside moved: %v", err)
	}
}

// TestPrepare checks where Prepare sends a staged manifest: a table whose
// files lancens does not reach records the staged path as given, a local
// one its final manifest path (in the form the staged path was given:
// object-store path, absolute path or file URI), published unless the
// manifest is staged there already.
func TestPrepare(t *testing.T) {
	w, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir := mkdir(t, filepath.Join(w.Root(), "t.lance"))
	final := ManifestPath(dir, "", 3, manifestname.V1)
	for _, tc := range []struct {
		name, location, staged string
		path                   string // "": no publication
		inPlace                bool
		code                   store.Code // -1: no error
	}{
		{"Unreached", "s3://bucket/t.lance", "bucket/t.lance/_versions/x", "", false, -1},
		{"Staged", dir, ObjectPath(filepath.Join(dir, "_versions", "3.manifest-abc")), ObjectPath(final), false, -1},
		{"AlreadyFinal", dir, ObjectPath(final), ObjectPath(final), true, -1},
		// The recorded path keeps the form of the staged one.
		{"AbsolutePath", dir, filepath.Join(dir, "_versions", "3.manifest-abc"), final, false, -1},
		{"FileURI", dir, "file://" + filepath.Join(dir, "_versions", "3.manifest-abc"), "file://" + final, false, -1},
		{"OutsideTable", dir, ObjectPath(filepath.Join(w.Root(), "other", "x")), "", false, store.CodeInvalidInput},
		{"OutsideWarehouse", t.TempDir(), "tmp/x", "", false, store.CodeInvalidInput},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := w.Prepare(tc.location, tc.staged, "", 3, manifestname.V1)
			if tc.code >= 0 {
				if store.ErrorCode(err) != tc.code {
					t.Fatalf("error %v, want code %d", err, tc.code)
				}
				return
			}
			if err != nil || (p == nil) != (tc.path == "") {
				t.Fatalf("Prepare = %+v, %v", p, err)
			}
			if p != nil && (p.ManifestPath != tc.path || (p.staged == p.final) != tc.inPlace) {
				t.Fatalf("publication %+v; want path %s, in place %v", p, tc.path, tc.inPlace)
			}
		})
	}
}

// TestBlobs reaches a local table's files below its location only, and no
// table outside the warehouse's roots or on another object store.
func TestBlobs(t *testing.T) {
	w, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	loc, err := w.Allocate(nil, "t")
	if err != nil {
		t.Fatal(err)
	}
	s, ok, err := w.Blobs(loc)
	if err != nil || !ok {
		t.Fatalf("blobs of %s: %v, %v", loc, ok, err)
	}
	if err := blob.Put(t.Context(), s, "data/x.lance", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(loc, "data", "x.lance")); err != nil {
		t.Fatalf("the object is not below the location: %v", err)
	}
	if _, _, err := w.Blobs(t.TempDir()); store.ErrorCode(err) != store.CodeInvalidInput {
		t.Fatalf("a location outside the warehouse: %v, want code 13", err)
	}
	if _, ok, err := w.Blobs("s3://elsewhere/t.lance"); ok || err != nil {
		t.Fatalf("a location on an object store the warehouse is not on: %v, %v", ok, err)
	}
}
