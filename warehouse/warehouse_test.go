package warehouse

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lancens/lancens/store"
)

func TestAllocate(t *testing.T) {
	w, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	a := w.Allocate([]string{"prod", "team a"}, "my/table")
	b := w.Allocate([]string{"prod", "team a"}, "my/table")
	if a == b {
		t.Fatal("two allocations gave the same location")
	}
	if !strings.HasPrefix(a, filepath.Join(w.Root(), "prod", "team_a", "my_table-")) || !strings.HasSuffix(a, ".lance") {
		t.Fatalf("location %q", a)
	}
	if got := sanitize("..hidden"); got != "_.hidden" {
		t.Fatalf("sanitize(..hidden) = %q", got)
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
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(p, "f"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	inside := mk(filepath.Join(w.Root(), "ns", "t.lance"))
	outside := mk(filepath.Join(base, "outside"))
	// A symbolic link inside the warehouse to a directory outside it.
	if err := os.Symlink(outside, filepath.Join(w.Root(), "link")); err != nil {
		t.Fatal(err)
	}
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
		{"Remote", "s3://bucket/t", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := w.Remove(tc.location); (err == nil) != tc.ok {
				t.Fatalf("Remove(%q) = %v, want ok %v", tc.location, err, tc.ok)
			}
		})
	}
	if _, err := os.Stat(inside); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("inside not removed")
	}
	if _, err := os.Stat(filepath.Join(outside, "f")); err != nil {
		t.Fatalf("outside touched: %v", err)
	}
}

func TestStagedManifest(t *testing.T) {
	dir := "/wh/t.lance"
	for _, tc := range []struct {
		path, want string
		ok         bool
	}{
		{"wh/t.lance/_versions/1.manifest-abc", "/wh/t.lance/_versions/1.manifest-abc", true},
		{"/wh/t.lance/_versions/1.manifest-abc", "/wh/t.lance/_versions/1.manifest-abc", true},
		{"file:///wh/t.lance/tree/dev/_versions/x", "/wh/t.lance/tree/dev/_versions/x", true},
		{"wh/other.lance/_versions/1.manifest", "", false},
		{"wh/t.lance/../other/_versions/1", "", false},
		{"wh/t.lance", "", false},
	} {
		got, err := StagedManifest(dir, tc.path)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("StagedManifest(%q) = %q, %v", tc.path, got, err)
		}
		if err != nil && store.ErrorCode(err) != store.CodeInvalidInput {
			t.Errorf("StagedManifest(%q) error code %v", tc.path, store.ErrorCode(err))
		}
	}
	if got := ManifestPath(dir, "dev", 1, store.NamingV1); got != "/wh/t.lance/tree/dev/_versions/1.manifest" {
		t.Fatalf("ManifestPath = %q", got)
	}
}

func TestFinalize(t *testing.T) {
	dir := t.TempDir()
	staged := filepath.Join(dir, "staged")
	final := filepath.Join(dir, "_versions", "1.manifest")
	write := func(content string) {
		t.Helper()
		if err := os.WriteFile(staged, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("abc")
	m, err := Finalize(staged, final, false)
	if err != nil || m.Size != 3 || m.ObjectPath != strings.TrimPrefix(final, "/") {
		t.Fatalf("Finalize = %+v, %v", m, err)
	}
	if _, err := os.Stat(staged); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("staged file still there")
	}
	write("other")
	if _, err := Finalize(staged, final, false); store.ErrorCode(err) != store.CodeConcurrentModification {
		t.Fatalf("create-only over an existing file: %v", err)
	}
	if b, _ := os.ReadFile(final); string(b) != "abc" {
		t.Fatalf("create-only changed the final file to %q", b)
	}
	if _, err := Finalize(staged, final, true); err != nil {
		t.Fatalf("replace: %v", err)
	}
	if b, _ := os.ReadFile(final); string(b) != "other" {
		t.Fatalf("replace left %q", b)
	}
	if _, err := Finalize(filepath.Join(dir, "missing"), final, true); store.ErrorCode(err) != store.CodeInvalidInput {
		t.Fatalf("missing staged file: %v", err)
	}
}
