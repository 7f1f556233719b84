package server_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/lancens/lancens/client"
	"github.com/lancens/lancens/internal/testkit/apitest"
	"github.com/lancens/lancens/lance/manifestname"
	"github.com/lancens/lancens/store"
)

// locationEnv is a server with an external root, a directory outside both
// holding a file, and links from the warehouse to both.
type locationEnv struct {
	s        *apitest.Server
	ext      string // an external root
	outside  string // a directory outside every root
	secret   string // a file in it
	linkOut  string // a link in the warehouse to outside
	linkExt  string // a link in the warehouse to ext
	s3Inside string // an object-store location inside an external root
}

func newLocationEnv(t *testing.T) *locationEnv {
	t.Helper()
	base := t.TempDir()
	e := &locationEnv{ext: filepath.Join(base, "datasets"), outside: filepath.Join(base, "outside")}
	for _, d := range []string{e.ext, e.outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	e.secret = filepath.Join(e.outside, "secret")
	if err := os.WriteFile(e.secret, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.s = apitest.Start(t, apitest.Options{ExternalRoots: []string{e.ext, "s3://lake/tables"}})
	e.linkOut = filepath.Join(e.s.Warehouse.Root(), "out")
	e.linkExt = filepath.Join(e.s.Warehouse.Root(), "ext")
	if err := os.Symlink(e.outside, e.linkOut); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(e.ext, e.linkExt); err != nil {
		t.Fatal(err)
	}
	e.s3Inside = "s3://lake/tables/t.lance"
	return e
}

// locate creates a table at location through one of the operations that
// take a location, and returns the location recorded.
type locate func(t *testing.T, c *client.Client, id []string, location string) (string, error)

func locateOps() map[string]locate {
	return map[string]locate{
		"Declare": func(t *testing.T, c *client.Client, id []string, location string) (string, error) {
			info, err := c.DeclareTable(t.Context(), id, &client.DeclareTableOptions{Location: location})
			if err != nil {
				return "", err
			}
			return info.Location, nil
		},
		"Register": func(t *testing.T, c *client.Client, id []string, location string) (string, error) {
			info, err := c.RegisterTable(t.Context(), id, location, nil)
			if err != nil {
				return "", err
			}
			return info.Location, nil
		},
		"BatchDeclare": func(t *testing.T, c *client.Client, id []string, location string) (string, error) {
			res, _, err := c.BatchCommit(t.Context(), client.BatchOp{ID: id, Declare: &client.DeclareTableOptions{Location: location}})
			if err != nil {
				return "", err
			}
			return res[0].Declared.Location, nil
		},
	}
}

// TestTableLocations checks that every operation that records a location
// accepts only places inside the warehouse or an external root, compared
// after resolving symbolic links, and records nothing otherwise.
func TestTableLocations(t *testing.T) {
	e := newLocationEnv(t)
	root := e.s.Warehouse.Root()
	for opName, op := range locateOps() {
		t.Run(opName, func(t *testing.T) {
			for i, tc := range []struct {
				name, location string
				want           string // "" when refused with code 13
			}{
				{"Relative", "sub/t.lance", filepath.Join(root, "sub", "t.lance")},
				{"AbsoluteInside", filepath.Join(root, "abs.lance"), filepath.Join(root, "abs.lance")},
				{"FileURIInside", "file://" + filepath.Join(root, "uri.lance"), filepath.Join(root, "uri.lance")},
				{"ExternalRoot", filepath.Join(e.ext, "ds.lance"), filepath.Join(e.ext, "ds.lance")},
				{"ThroughLinkToExternalRoot", "ext/linked.lance", filepath.Join(e.ext, "linked.lance")},
				{"ObjectStoreInExternalRoot", e.s3Inside, e.s3Inside},
				{"Etc", "/etc", ""},
				{"FileSystemRoot", "/", ""},
				{"FileURIEtc", "file:///etc", ""},
				{"FileURIOutside", "file://" + e.outside + "/t.lance", ""},
				{"Outside", filepath.Join(e.outside, "t.lance"), ""},
				{"ThroughLinkOut", "out/t.lance", ""},
				{"AbsoluteThroughLinkOut", filepath.Join(e.linkOut, "t.lance"), ""},
				{"DotDot", "../t.lance", ""},
				{"DotDotInside", "a/../../t.lance", ""},
				{"WarehouseRoot", root, ""},
				{"ExternalRootItself", e.ext, ""},
				{"ObjectStoreOutside", "s3://bucket/t.lance", ""},
				{"ObjectStoreRoot", "s3://lake/tables", ""},
				{"RelativeFileURI", "file://relative/path", ""},
				{"NUL", "t\x00.lance", ""},
				{"Blank", "  ", ""},
			} {
				t.Run(tc.name, func(t *testing.T) {
					id := []string{fmt.Sprintf("%s_%d", opName, i)}
					got, err := op(t, e.s.Client, id, tc.location)
					if tc.want != "" {
						if err != nil || got != tc.want {
							t.Fatalf("location %q recorded as %q (%v), want %q", tc.location, got, err, tc.want)
						}
						// Free the location for the next operation.
						if _, err := e.s.Client.DeregisterTable(t.Context(), id); err != nil {
							t.Fatal(err)
						}
						return
					}
					if store.ErrorCode(err) != store.CodeInvalidInput {
						t.Fatalf("location %q: got %q, %v; want code 13", tc.location, got, err)
					}
					if ok, err := e.s.Client.TableExists(t.Context(), id, nil); ok || err != nil {
						t.Fatalf("refused table exists: %v %v", ok, err)
					}
				})
			}
		})
	}
}

// TestLocationsNeverShared checks that no two tables share a location or
// nest one inside the other, however the location is spelled, and that a
// location is free again once its table is gone.
func TestLocationsNeverShared(t *testing.T) {
	e := newLocationEnv(t)
	c := e.s.Client
	ctx := t.Context()
	root := e.s.Warehouse.Root()
	first, err := c.DeclareTable(ctx, []string{"first"}, &client.DeclareTableOptions{Location: "p/shared.lance"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.RegisterTable(ctx, []string{"ext"}, filepath.Join(e.ext, "ds.lance"), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.RegisterTable(ctx, []string{"remote"}, e.s3Inside, nil); err != nil {
		t.Fatal(err)
	}
	ops := locateOps()
	for i, tc := range []struct{ name, location string }{
		{"Same", "p/shared.lance"},
		{"SameAbsolute", first.Location},
		{"SameFileURI", "file://" + first.Location},
		{"SameTrailingSlash", first.Location + "/"},
		{"SameDotSegments", "p/./shared.lance"},
		{"SameThroughLink", "alias/shared.lance"},
		{"Inside", "p/shared.lance/inner"},
		{"InsideVersions", "p/shared.lance/_versions"},
		{"Contains", "p"},
		{"ContainsThroughLink", "alias"},
		{"SameExternal", filepath.Join(e.ext, "ds.lance")},
		{"InsideExternal", "ext/ds.lance/sub"},
		{"SameObjectStore", e.s3Inside},
		{"SameObjectStoreSlash", e.s3Inside + "/"},
		{"InsideObjectStore", e.s3Inside + "/x"},
	} {
		if i == 0 {
			if err := os.Symlink(filepath.Join(root, "p"), filepath.Join(root, "alias")); err != nil {
				t.Fatal(err)
			}
		}
		for opName, op := range ops {
			t.Run(tc.name+"/"+opName, func(t *testing.T) {
				id := []string{fmt.Sprintf("t%d_%s", i, opName)}
				if _, err := op(t, c, id, tc.location); store.ErrorCode(err) != store.CodeInvalidInput {
					t.Fatalf("location %q: %v, want code 13", tc.location, err)
				}
				if ok, _ := c.TableExists(ctx, id, nil); ok {
					t.Fatal("refused table exists")
				}
			})
		}
	}
	// Declaring the same table twice is still "already exists" (5).
	if _, err := c.DeclareTable(ctx, []string{"first"}, &client.DeclareTableOptions{Location: "p/shared.lance"}); !errors.Is(err, client.ErrTableAlreadyExists) {
		t.Fatalf("second declaration of a table: %v", err)
	}
	// One batch cannot declare two tables at one place; nothing applies.
	_, _, err = c.BatchCommit(ctx,
		client.BatchOp{ID: []string{"b1"}, Declare: &client.DeclareTableOptions{Location: "b.lance"}},
		client.BatchOp{ID: []string{"b2"}, Declare: &client.DeclareTableOptions{Location: "b.lance/x"}})
	if store.ErrorCode(err) != store.CodeInvalidInput {
		t.Fatalf("batch declaring nested locations: %v", err)
	}
	if ok, _ := c.TableExists(ctx, []string{"b1"}, nil); ok {
		t.Fatal("failed batch declared b1")
	}
	// Registering over the same name keeps its location usable.
	if _, err := c.RegisterTable(ctx, []string{"ext"}, filepath.Join(e.ext, "ds.lance"), &client.RegisterTableOptions{Mode: "Overwrite"}); err != nil {
		t.Fatalf("overwrite at the same location: %v", err)
	}
	// Once the table is gone, its location is free again.
	if _, err := c.DeregisterTable(ctx, []string{"first"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DeclareTable(ctx, []string{"second"}, &client.DeclareTableOptions{Location: first.Location}); err != nil {
		t.Fatalf("declare at a freed location: %v", err)
	}
}

// TestLocationRace declares tables at one location from many clients at
// once: exactly one wins.
func TestLocationRace(t *testing.T) {
	s := apitest.Start(t, apitest.Options{})
	const racers = 12
	errs := make([]error, racers)
	var wg sync.WaitGroup
	for i := range racers {
		wg.Go(func() {
			loc := "race.lance"
			if i%2 == 1 {
				loc = "race.lance/inner" // nested inside the other
			}
			_, errs[i] = s.Client.DeclareTable(t.Context(), []string{fmt.Sprintf("r%d", i)}, &client.DeclareTableOptions{Location: loc})
		})
	}
	wg.Wait()
	won := 0
	for i, err := range errs {
		switch {
		case err == nil:
			won++
		case store.ErrorCode(err) != store.CodeInvalidInput:
			t.Fatalf("racer %d: %v", i, err)
		}
	}
	if won != 1 {
		t.Fatalf("%d racers got the location, want 1", won)
	}
}

// TestCommitRefusesLinks checks that a version commit never moves a file
// from outside its table's location, nor writes outside it, whatever links
// a client planted in the table's directory.
func TestCommitRefusesLinks(t *testing.T) {
	e := newLocationEnv(t)
	c := e.s.Client
	ctx := t.Context()
	declare := func(name string) string {
		t.Helper()
		info, err := c.DeclareTable(ctx, []string{name}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(info.Location, 0o755); err != nil {
			t.Fatal(err)
		}
		return info.Location
	}
	link := func(target, name string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, name); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name string
		// setup prepares table directory dir and returns the manifest
		// path to commit.
		setup func(dir string) string
	}{
		{"StagedIsLinkToOutsideFile", func(dir string) string {
			link(e.secret, filepath.Join(dir, "_versions", "1.manifest-staged"))
			return filepath.Join(dir, "_versions", "1.manifest-staged")
		}},
		{"StagedThroughLinkedDirectory", func(dir string) string {
			link(e.outside, filepath.Join(dir, "sub"))
			return filepath.Join(dir, "sub", "secret")
		}},
		{"VersionsDirectoryLinkedOutside", func(dir string) string {
			link(e.outside, filepath.Join(dir, "_versions"))
			p := filepath.Join(dir, "staged")
			if err := os.WriteFile(p, []byte("m"), 0o644); err != nil {
				t.Fatal(err)
			}
			return p
		}},
		{"StagedIsFinalLinkedOutside", func(dir string) string {
			p := filepath.Join(dir, "_versions", manifestname.V2.FileName(1))
			link(e.secret, p)
			return p
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := declare(tc.name)
			manifest := tc.setup(dir)
			_, _, err := c.CreateTableVersion(ctx, []string{tc.name}, client.VersionCommit{Version: 1, ManifestPath: manifest[1:]})
			if store.ErrorCode(err) != store.CodeInvalidInput {
				t.Fatalf("commit: %v, want code 13", err)
			}
			if b, err := os.ReadFile(e.secret); err != nil || string(b) != "secret" {
				t.Fatalf("file outside changed: %q %v", b, err)
			}
			if entries, _ := os.ReadDir(e.outside); len(entries) != 1 {
				t.Fatalf("files written outside: %v", entries)
			}
			if _, err := c.DescribeTableVersion(ctx, []string{tc.name}, "", nil); !errors.Is(err, client.ErrTableVersionNotFound) {
				t.Fatalf("a version was recorded: %v", err)
			}
		})
	}
}

// TestCommitOutsideRecordedLocation checks that a table recorded at a
// location outside every root (by a lancens before these checks) cannot
// have a file moved by a commit.
func TestCommitOutsideRecordedLocation(t *testing.T) {
	e := newLocationEnv(t)
	ctx := t.Context()
	// The store does not check roots: that is the server's job, which a
	// catalog from before it did not do.
	if _, _, err := e.s.DB.DeclareTable(ctx, []string{"legacy"}, store.TableDeclaration{Location: e.outside}); err != nil {
		t.Fatal(err)
	}
	_, _, err := e.s.Client.CreateTableVersion(ctx, []string{"legacy"}, client.VersionCommit{Version: 1, ManifestPath: e.secret[1:]})
	if store.ErrorCode(err) != store.CodeInvalidInput {
		t.Fatalf("commit: %v, want code 13", err)
	}
	if b, err := os.ReadFile(e.secret); err != nil || string(b) != "secret" {
		t.Fatalf("file outside moved: %q %v", b, err)
	}
}

// TestManifestPathText checks that a manifest path with a NUL or another
// control character is invalid input (13), on every commit route.
func TestManifestPathText(t *testing.T) {
	e := newLocationEnv(t)
	c := e.s.Client
	ctx := t.Context()
	local, err := c.DeclareTable(ctx, []string{"local"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.DeclareTable(ctx, []string{"remote"}, &client.DeclareTableOptions{Location: e.s3Inside}); err != nil {
		t.Fatal(err)
	}
	staged := stage(t, local.Location, 1, "m")
	for _, bad := range []string{staged + "\x00", staged[:5] + "\x00" + staged[5:], staged + "\n", e.s3Inside[5:] + "/_versions/1\x00"} {
		for _, tc := range []struct {
			name, path string
			body       any
		}{
			{"Create", "/v1/table/local/version/create", map[string]any{"version": 1, "manifest_path": bad}},
			{"CreateRemote", "/v1/table/remote/version/create", map[string]any{"version": 1, "manifest_path": bad}},
			{"BatchCreate", "/v1/table/version/batch-create", map[string]any{"entries": []any{
				map[string]any{"id": []string{"local"}, "version": 1, "manifest_path": bad}}}},
			{"BatchCommit", "/v1/table/batch-commit", map[string]any{"operations": []any{
				map[string]any{"create_table_version": map[string]any{"id": []string{"local"}, "version": 1, "manifest_path": bad}}}}},
		} {
			t.Run(fmt.Sprintf("%s/%q", tc.name, bad), func(t *testing.T) {
				body, err := json.Marshal(tc.body)
				if err != nil {
					t.Fatal(err)
				}
				status, out, _ := e.s.Do(t, "POST", tc.path, jsonHeader, body)
				if status != 400 || apitest.ErrorCode(out) != int(store.CodeInvalidInput) {
					t.Fatalf("got %d %s, want 400 code 13", status, out)
				}
			})
		}
	}
	// The staged file is still there and commits normally.
	if _, _, err := c.CreateTableVersion(ctx, []string{"local"}, client.VersionCommit{Version: 1, ManifestPath: staged}); err != nil {
		t.Fatal(err)
	}
}

// TestManifestPathForm checks that version/create answers, and records,
// the final manifest's path in the form the client gave the staged one:
// an absolute path keeps its leading "/", Lance's object-store path (no
// leading "/") and a file URI stay so.
func TestManifestPathForm(t *testing.T) {
	e := newLocationEnv(t)
	c := e.s.Client
	ctx := t.Context()
	for _, tc := range []struct {
		name string
		form func(path string) string
	}{
		{"Absolute", func(p string) string { return p }},
		{"ObjectStorePath", func(p string) string { return p[1:] }},
		{"FileURI", func(p string) string { return "file://" + p }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			info, err := c.DeclareTable(ctx, []string{tc.name}, nil)
			if err != nil {
				t.Fatal(err)
			}
			staged := filepath.Join(info.Location, "_versions", "1.manifest-staged")
			if err := os.MkdirAll(filepath.Dir(staged), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(staged, []byte("manifest"), 0o644); err != nil {
				t.Fatal(err)
			}
			final := filepath.Join(info.Location, "_versions", manifestname.V2.FileName(1))
			v, _, err := c.CreateTableVersion(ctx, []string{tc.name}, client.VersionCommit{Version: 1, ManifestPath: tc.form(staged)})
			if err != nil {
				t.Fatal(err)
			}
			if v.ManifestPath != tc.form(final) {
				t.Fatalf("version/create answered manifest_path %q, want %q", v.ManifestPath, tc.form(final))
			}
			d, err := c.DescribeTableVersion(ctx, []string{tc.name}, "", nil)
			if err != nil || d.ManifestPath != tc.form(final) {
				t.Fatalf("version/describe: %+v, %v; want manifest_path %q", d, err, tc.form(final))
			}
		})
	}
}
