package objstore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/lancens/lancens/internal/testkit/s3test"
	"github.com/lancens/lancens/objstore"
)

// fixture is a Bucket with a way to write objects behind its back.
type fixture struct {
	b   objstore.Bucket
	put func(t *testing.T, key string, data []byte)
	// keys lists what is really stored under a prefix.
	keys func(t *testing.T, prefix string) []string
	// marks says whether the store keeps Info.PublishedFrom.
	marks bool
}

// dirFixture is a local directory reached through the Dir newDir makes.
func dirFixture(newDir func(dir string) *objstore.Dir) func(t *testing.T) fixture {
	return func(t *testing.T) fixture {
		dir := t.TempDir()
		return fixture{
			b: newDir(dir),
			put: func(t *testing.T, key string, data []byte) {
				p := filepath.Join(dir, filepath.FromSlash(key))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, data, 0o644); err != nil {
					t.Fatal(err)
				}
			},
			keys: func(t *testing.T, prefix string) []string {
				var out []string
				_ = filepath.WalkDir(filepath.Join(dir, prefix), func(p string, d os.DirEntry, err error) error {
					if err == nil && !d.IsDir() {
						rel, _ := filepath.Rel(dir, p)
						out = append(out, filepath.ToSlash(rel))
					}
					return nil
				})
				return out
			},
		}
	}
}

// fixtures returns the same cases for every implementation: a local
// directory (synced or not) and a bucket of a real S3-compatible gateway.
func fixtures(t *testing.T) map[string]func(t *testing.T) fixture {
	return map[string]func(t *testing.T) fixture{
		"dir":        dirFixture(objstore.NewDir),
		"dir-nosync": dirFixture(objstore.NewDirNoSync),
		"s3": func(t *testing.T) fixture {
			g := s3test.Start(t)
			g.CreateBucket(t, "lance")
			c, err := objstore.NewS3(t.Context(), g.Options())
			if err != nil {
				t.Fatal(err)
			}
			return fixture{
				b:     c.Bucket("lance"),
				put:   func(t *testing.T, key string, data []byte) { g.Put(t, "lance", key, data) },
				keys:  func(t *testing.T, prefix string) []string { return g.Keys(t, "lance", prefix) },
				marks: true,
			}
		},
	}
}

// TestBucket checks the semantics every implementation shares.
func TestBucket(t *testing.T) {
	for name, mk := range fixtures(t) {
		t.Run(name, func(t *testing.T) {
			f := mk(t)
			ctx := t.Context()
			const limit = 1 << 20
			f.put(t, "t/_versions/1.manifest-a", []byte("first"))
			f.put(t, "t/_versions/1.manifest-b", []byte("second!"))

			// Missing objects.
			if _, err := f.b.Stat(ctx, "t/none"); !errors.Is(err, objstore.ErrNotFound) {
				t.Fatalf("Stat(missing) = %v, want ErrNotFound", err)
			}
			if _, _, err := f.b.Get(ctx, "t/none", limit); !errors.Is(err, objstore.ErrNotFound) {
				t.Fatalf("Get(missing) = %v, want ErrNotFound", err)
			}
			if _, err := f.b.Publish(ctx, "t/none", "t/x", "", limit); !errors.Is(err, objstore.ErrNotFound) {
				t.Fatalf("Publish(missing) = %v, want ErrNotFound", err)
			}

			// Put-if-absent: the first publication wins, the second changes nothing.
			info, err := f.b.Publish(ctx, "t/_versions/1.manifest-a", "t/_versions/1.manifest", "", limit)
			if err != nil || info.Size != 5 || info.ETag == "" {
				t.Fatalf("Publish = %+v, %v", info, err)
			}
			if _, err := f.b.Publish(ctx, "t/_versions/1.manifest-b", "t/_versions/1.manifest", "", limit); !errors.Is(err, objstore.ErrPrecondition) {
				t.Fatalf("second Publish = %v, want ErrPrecondition", err)
			}
			data, got, err := f.b.Get(ctx, "t/_versions/1.manifest", limit)
			if err != nil || string(data) != "first" || got.ETag != info.ETag {
				t.Fatalf("Get = %q %+v, %v; want the first publication, tag %q", data, got, err, info.ETag)
			}
			if st, err := f.b.Stat(ctx, "t/_versions/1.manifest"); err != nil || st != info {
				t.Fatalf("Stat = %+v, %v; want %+v", st, err, info)
			}
			// Where the store keeps it, a published object says where it
			// came from; one written otherwise says nothing.
			wantFrom := ""
			if f.marks {
				wantFrom = "t/_versions/1.manifest-a"
			}
			if info.PublishedFrom != wantFrom || got.PublishedFrom != wantFrom {
				t.Fatalf("published from %q (Publish), %q (Get); want %q", info.PublishedFrom, got.PublishedFrom, wantFrom)
			}
			if st, err := f.b.Stat(ctx, "t/_versions/1.manifest-a"); err != nil || st.PublishedFrom != "" {
				t.Fatalf("Stat of an object put directly = %+v, %v; want no mark", st, err)
			}
			// The source stays.
			if data, _, err := f.b.Get(ctx, "t/_versions/1.manifest-a", limit); err != nil || string(data) != "first" {
				t.Fatalf("source after Publish = %q, %v", data, err)
			}
			if _, _, err := f.b.Get(ctx, "t/_versions/1.manifest-b", 3); !errors.Is(err, objstore.ErrTooLarge) {
				t.Fatalf("Get over the limit = %v, want ErrTooLarge", err)
			}

			// Replacing needs the current tag.
			if _, err := f.b.Publish(ctx, "t/_versions/1.manifest-b", "t/_versions/1.manifest", "wrong", limit); !errors.Is(err, objstore.ErrPrecondition) {
				t.Fatalf("Publish with a wrong tag = %v, want ErrPrecondition", err)
			}
			if _, err := f.b.Publish(ctx, "t/_versions/1.manifest-b", "t/_versions/2.manifest", info.ETag, limit); !errors.Is(err, objstore.ErrPrecondition) {
				t.Fatalf("Publish with a tag over nothing = %v, want ErrPrecondition", err)
			}
			replaced, err := f.b.Publish(ctx, "t/_versions/1.manifest-b", "t/_versions/1.manifest", info.ETag, limit)
			if err != nil || replaced.ETag == info.ETag {
				t.Fatalf("Publish with the tag = %+v, %v", replaced, err)
			}
			if data, got, _ := f.b.Get(ctx, "t/_versions/1.manifest", limit); string(data) != "second!" || (f.marks && got.PublishedFrom != "t/_versions/1.manifest-b") {
				t.Fatalf("after replacing: %q %+v", data, got)
			}

			// Conditional delete.
			if err := f.b.Delete(ctx, "t/_versions/1.manifest", info.ETag); !errors.Is(err, objstore.ErrPrecondition) {
				t.Fatalf("Delete with a stale tag = %v, want ErrPrecondition", err)
			}
			if err := f.b.Delete(ctx, "t/_versions/1.manifest", replaced.ETag); err != nil {
				t.Fatal(err)
			}
			if _, err := f.b.Stat(ctx, "t/_versions/1.manifest"); !errors.Is(err, objstore.ErrNotFound) {
				t.Fatalf("after Delete: %v", err)
			}
			if err := f.b.Delete(ctx, "t/_versions/1.manifest", ""); err != nil {
				t.Fatalf("Delete(missing) = %v", err)
			}

			// Prefix delete takes everything below the prefix, nothing beside it.
			f.put(t, "t2/data/x.lance", []byte("x"))
			f.put(t, "t/data/a/b.lance", []byte("b"))
			if err := f.b.DeletePrefix(ctx, "t/"); err != nil {
				t.Fatal(err)
			}
			if keys := f.keys(t, "t/"); len(keys) != 0 {
				t.Fatalf("after DeletePrefix: %v", keys)
			}
			if keys := f.keys(t, "t2/"); len(keys) != 1 {
				t.Fatalf("DeletePrefix(t/) touched t2/: %v", keys)
			}
			if err := f.b.DeletePrefix(ctx, "t/"); err != nil {
				t.Fatalf("DeletePrefix of nothing = %v", err)
			}
			for _, bad := range []string{"", "t", "/t/"} {
				if err := f.b.DeletePrefix(ctx, bad); err == nil {
					t.Fatalf("DeletePrefix(%q) accepted", bad)
				}
			}
		})
	}
}

// TestPublishRace publishes 16 different sources at one key at once:
// exactly one wins, and the key holds its content.
func TestPublishRace(t *testing.T) {
	for name, mk := range fixtures(t) {
		t.Run(name, func(t *testing.T) {
			f := mk(t)
			const n = 16
			for i := range n {
				f.put(t, fmt.Sprintf("t/_versions/1.manifest-%02d", i), fmt.Appendf(nil, "writer %02d", i))
			}
			var wg sync.WaitGroup
			results := make([]error, n)
			for i := range n {
				wg.Go(func() {
					_, results[i] = f.b.Publish(context.Background(), fmt.Sprintf("t/_versions/1.manifest-%02d", i), "t/_versions/1.manifest", "", 1<<20)
				})
			}
			wg.Wait()
			winner := -1
			for i, err := range results {
				switch {
				case err == nil && winner >= 0:
					t.Fatalf("writers %d and %d both published", winner, i)
				case err == nil:
					winner = i
				case !errors.Is(err, objstore.ErrPrecondition):
					t.Fatalf("writer %d: %v, want ErrPrecondition", i, err)
				}
			}
			if winner < 0 {
				t.Fatal("no writer published")
			}
			data, _, err := f.b.Get(t.Context(), "t/_versions/1.manifest", 1<<20)
			if err != nil || string(data) != fmt.Sprintf("writer %02d", winner) {
				t.Fatalf("published content %q, %v; want writer %02d's", data, err, winner)
			}
		})
	}
}

// TestS3Check checks the start-up probe of a bucket and the reading of the
// options: every misconfiguration is refused, and the message names the
// option at fault.
func TestS3Check(t *testing.T) {
	g := s3test.Start(t)
	g.CreateBucket(t, "lance")
	with := func(changes map[string]string) objstore.Options {
		o := objstore.Options(g.Options())
		for k, v := range changes {
			if v == "" {
				delete(o, k)
			} else {
				o[k] = v
			}
		}
		return o
	}
	for _, tc := range []struct {
		name    string
		opts    objstore.Options
		bucket  string
		newErr  string // in the error of NewS3
		checkOK bool
	}{
		{name: "good", opts: with(nil), bucket: "lance", checkOK: true},
		{name: "aliases", opts: with(map[string]string{"aws_endpoint": "", "endpoint": g.Endpoint, "allow_http": "", "aws_allow_http": "true"}), bucket: "lance", checkOK: true},
		{name: "no bucket", opts: with(nil), bucket: "missing"},
		{name: "wrong secret", opts: with(map[string]string{"aws_secret_access_key": "wrong"}), bucket: "lance"},
		{name: "unreachable", opts: with(map[string]string{"aws_endpoint": "http://127.0.0.1:1"}), bucket: "lance"},
		{name: "plain http refused", opts: with(map[string]string{"allow_http": ""}), newErr: "allow_http"},
		{name: "bad flag", opts: with(map[string]string{"allow_http": "maybe"}), newErr: "allow_http"},
		{name: "bad endpoint", opts: with(map[string]string{"aws_endpoint": "localhost:9000"}), newErr: "aws_endpoint"},
		{name: "key without secret", opts: with(map[string]string{"aws_secret_access_key": ""}), newErr: "aws_secret_access_key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := objstore.NewS3(t.Context(), tc.opts)
			if tc.newErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.newErr) {
					t.Fatalf("NewS3 = %v, want an error naming %s", err, tc.newErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			err = c.Bucket(tc.bucket).Check(t.Context(), "wh")
			if (err == nil) != tc.checkOK {
				t.Fatalf("Check = %v, want ok=%v", err, tc.checkOK)
			}
			if keys := g.Keys(t, "lance", ""); len(keys) != 0 {
				t.Fatalf("Check left %v behind", keys)
			}
		})
	}
}

// TestDirPublishLeavesNoTemporaryLinks: on local disk a publication goes
// through a temporary link beside its destination; whether it wins, loses
// or is refused, none is left behind.
func TestDirPublishLeavesNoTemporaryLinks(t *testing.T) {
	dir := t.TempDir()
	b := objstore.NewDir(dir)
	ctx := t.Context()
	if err := os.MkdirAll(filepath.Join(dir, "t", "_versions"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{"a": "first", "b": "second"} {
		if err := os.WriteFile(filepath.Join(dir, "t", "_versions", "1.manifest-"+name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	info, err := b.Publish(ctx, "t/_versions/1.manifest-a", "t/_versions/1.manifest", "", 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Publish(ctx, "t/_versions/1.manifest-b", "t/_versions/1.manifest", "", 1<<20); !errors.Is(err, objstore.ErrPrecondition) {
		t.Fatalf("second Publish = %v, want ErrPrecondition", err)
	}
	if _, err := b.Publish(ctx, "t/_versions/1.manifest-b", "t/_versions/1.manifest", "not-the-tag", 1<<20); !errors.Is(err, objstore.ErrPrecondition) {
		t.Fatalf("Publish over another tag = %v, want ErrPrecondition", err)
	}
	if _, err := b.Publish(ctx, "t/_versions/1.manifest-b", "t/_versions/1.manifest", info.ETag, 1<<20); err != nil {
		t.Fatalf("Publish over the current tag = %v", err)
	}
	entries, err := os.ReadDir(filepath.Join(dir, "t", "_versions"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("left behind: %s", e.Name())
		}
	}
	if data, err := os.ReadFile(filepath.Join(dir, "t", "_versions", "1.manifest")); err != nil || string(data) != "second" {
		t.Fatalf("final manifest = %q, %v; want the replacement", data, err)
	}
}

// TestDirPublishSyncs counts the syncs of a publication on local disk: a
// Dir syncs the file it links (and the directory of a replacement), a Dir
// made by NewDirNoSync syncs nothing.
func TestDirPublishSyncs(t *testing.T) {
	for _, tc := range []struct {
		name                string
		newDir              func(string) *objstore.Dir
		linkSyncs, replaced int64
	}{
		{"synced", objstore.NewDir, 1, 2},
		{"not synced", objstore.NewDirNoSync, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.MkdirAll(filepath.Join(dir, "t", "_versions"), 0o755); err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{"a", "b"} {
				if err := os.WriteFile(filepath.Join(dir, "t", "_versions", "1.manifest-"+name), []byte(name), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			b := tc.newDir(dir)
			syncs := objstore.CountSyncs(t)
			info, err := b.Publish(t.Context(), "t/_versions/1.manifest-a", "t/_versions/1.manifest", "", 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			if n := syncs.Swap(0); n != tc.linkSyncs {
				t.Errorf("a new manifest: %d syncs, want %d", n, tc.linkSyncs)
			}
			if _, err := b.Publish(t.Context(), "t/_versions/1.manifest-b", "t/_versions/1.manifest", info.ETag, 1<<20); err != nil {
				t.Fatal(err)
			}
			if n := syncs.Load(); n != tc.replaced {
				t.Errorf("a replaced manifest: %d syncs, want %d", n, tc.replaced)
			}
			if data, err := os.ReadFile(filepath.Join(dir, "t", "_versions", "1.manifest")); err != nil || string(data) != "b" {
				t.Fatalf("final manifest = %q, %v; want the replacement", data, err)
			}
		})
	}
}
