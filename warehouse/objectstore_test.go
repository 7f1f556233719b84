package warehouse

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/lancens/lancens/internal/testkit/s3test"
	"github.com/lancens/lancens/lance/manifestname"
	"github.com/lancens/lancens/store"
)

// TestObjectStoreWarehouse checks locations and deletion in a warehouse on
// a real S3-compatible gateway.
func TestObjectStoreWarehouse(t *testing.T) {
	g := s3test.Start(t)
	g.CreateBucket(t, "lance")
	ctx := t.Context()
	w, err := OpenStore(ctx, "s3://lance/wh/", g.Options(), "s3://lake/shared")
	if err != nil {
		t.Fatal(err)
	}
	if w.Root() != "s3://lance/wh" {
		t.Fatalf("root %q", w.Root())
	}
	loc, err := w.Allocate([]string{"prod", "team a"}, "t")
	if err != nil || !strings.HasPrefix(loc, "s3://lance/wh/prod/team_a/t-") || !strings.HasSuffix(loc, ".lance") {
		t.Fatalf("Allocate = %q, %v", loc, err)
	}
	for _, tc := range []struct {
		location, want string
		owned          bool
		code           store.Code
	}{
		{"rel/t.lance", "s3://lance/wh/rel/t.lance", true, 0},
		{"s3://lance/wh/x.lance", "s3://lance/wh/x.lance", false, 0},
		{"s3://lake/shared/y", "s3://lake/shared/y", false, 0},
		{"s3://lance/other/x", "", false, store.CodeInvalidInput},
		{"s3://lance/wh", "", false, store.CodeInvalidInput},
		{"s3://lance/wh/../x", "", false, store.CodeInvalidInput},
		{"s3://lance/wh/*", "", false, store.CodeInvalidInput},
		{"s3://lance/wh/t%2A", "", false, store.CodeInvalidInput},
		{"s3://lance/wh/t?x=1", "", false, store.CodeInvalidInput},
		{"s3://lance/wh/t#x", "", false, store.CodeInvalidInput},
		{"s3://lance/wh/${aws:username}", "", false, store.CodeInvalidInput},
		{"*", "", false, store.CodeInvalidInput},
		{"a?b", "", false, store.CodeInvalidInput},
		{"../x", "", false, store.CodeInvalidInput},
		{".", "", false, store.CodeInvalidInput},
	} {
		got, owned, err := w.Resolve(tc.location)
		if got != tc.want || owned != tc.owned || (tc.code == 0) != (err == nil) || (err != nil && store.ErrorCode(err) != tc.code) {
			t.Errorf("Resolve(%q) = %q, %v, %v; want %q, %v, code %d", tc.location, got, owned, err, tc.want, tc.owned, tc.code)
		}
	}
	if !w.OnObjectStore(loc) || w.OnObjectStore("/tmp/x") {
		t.Fatal("OnObjectStore")
	}

	for _, k := range []string{"wh/t.lance/_versions/1.manifest", "wh/t.lance/data/a.lance", "wh/t.lance2/data/b.lance", "other/t.lance/x"} {
		g.Put(t, "lance", k, []byte("x"))
	}
	for _, bad := range []string{"s3://lance/wh", "s3://lance/wh/", "s3://lance/other/t.lance", "s3://lake/shared/y", "s3://lance/wh/../other/t.lance", "/tmp/t"} {
		if err := w.Remove(ctx, bad); err == nil {
			t.Errorf("Remove(%q) accepted", bad)
		}
	}
	if err := w.Remove(ctx, "s3://lance/wh/t.lance"); err != nil {
		t.Fatal(err)
	}
	if got := g.Keys(t, "lance", ""); !slices.Equal(got, []string{"other/t.lance/x", "wh/t.lance2/data/b.lance"}) {
		t.Fatalf("after Remove: %v", got)
	}
}

// TestPublishOnObjectStore checks which final manifest a publication on S3
// may replace when the version has no record: a leftover that lancens
// published for a commit that was never recorded, never a manifest another
// writer put there.
func TestPublishOnObjectStore(t *testing.T) {
	g := s3test.Start(t)
	g.CreateBucket(t, "lance")
	ctx := t.Context()
	w, err := OpenStore(ctx, "s3://lance/wh", g.Options())
	if err != nil {
		t.Fatal(err)
	}
	const loc, final = "s3://lance/wh/t.lance", "wh/t.lance/_versions/1.manifest"
	publish := func(name, content string, replaceOrphan bool) (*Publication, error) {
		t.Helper()
		staged := "wh/t.lance/_versions/" + name
		g.Put(t, "lance", staged, []byte(content))
		p, err := w.Prepare(loc, staged, "", 1, manifestname.V1)
		if err != nil || p == nil {
			t.Fatalf("Prepare = %+v, %v", p, err)
		}
		return p, w.Publish(ctx, p, replaceOrphan)
	}
	finalIs := func(want string) {
		t.Helper()
		if b, ok := g.Get(t, "lance", final); !ok || string(b) != want {
			t.Fatalf("final manifest %q (there: %v), want %q", b, ok, want)
		}
	}

	// Another writer's manifest stays, even where a leftover would go.
	g.Put(t, "lance", final, []byte("foreign"))
	for _, replaceOrphan := range []bool{false, true} {
		if _, err := publish("1.manifest-a", "mine", replaceOrphan); store.ErrorCode(err) != store.CodeConcurrentModification {
			t.Fatalf("publishing over another writer's manifest (replaceOrphan=%v): %v, want code 14", replaceOrphan, err)
		}
		finalIs("foreign")
	}
	// The very content being committed is kept, whoever wrote it.
	if p, err := publish("1.manifest-b", "foreign", true); err != nil || p.Size != 7 {
		t.Fatalf("publishing the content already there: %+v, %v", p, err)
	}
	g.Delete(t, "lance", final)

	// lancens' own leftover is replaced, and only with replaceOrphan.
	left, err := publish("1.manifest-c", "leftover", false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := publish("1.manifest-d", "retry", false); store.ErrorCode(err) != store.CodeConcurrentModification {
		t.Fatalf("create-only over a leftover: %v, want code 14", err)
	}
	finalIs("leftover")
	if _, err := publish("1.manifest-d", "retry", true); err != nil {
		t.Fatalf("replacing a leftover: %v", err)
	}
	finalIs("retry")
	// Discarding the leftover's publication leaves its replacement.
	if err := w.Discard(ctx, left); err != nil {
		t.Fatal(err)
	}
	finalIs("retry")
}

// TestPublishRaceOnObjectStore races 16 first publications of one version
// on S3 with no commit lock: the conditional put lets exactly one win, the
// others get code 14 and, discarding, leave the winner's manifest alone.
func TestPublishRaceOnObjectStore(t *testing.T) {
	g := s3test.Start(t)
	g.CreateBucket(t, "lance")
	ctx := t.Context()
	w, err := OpenStore(ctx, "s3://lance/wh", g.Options())
	if err != nil {
		t.Fatal(err)
	}
	const racers = 16
	pubs := make([]*Publication, racers)
	for i := range racers {
		staged := fmt.Sprintf("wh/t.lance/_versions/1.manifest-%02d", i)
		g.Put(t, "lance", staged, fmt.Appendf(nil, "racer %02d", i))
		if pubs[i], err = w.Prepare("s3://lance/wh/t.lance", staged, "", 1, manifestname.V1); err != nil {
			t.Fatal(err)
		}
	}
	errs := make([]error, racers)
	var wg sync.WaitGroup
	for i := range racers {
		wg.Go(func() { errs[i] = w.Publish(ctx, pubs[i], false) })
	}
	wg.Wait()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Fatalf("racers %d and %d both published", winner, i)
		case err == nil:
			winner = i
		case store.ErrorCode(err) != store.CodeConcurrentModification:
			t.Fatalf("racer %d: %v, want code 14", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("nobody published")
	}
	for i, p := range pubs {
		if i != winner {
			if err := w.Discard(ctx, p); err != nil {
				t.Fatal(err)
			}
		}
	}
	if b, ok := g.Get(t, "lance", "wh/t.lance/_versions/1.manifest"); !ok || string(b) != fmt.Sprintf("racer %02d", winner) {
		t.Fatalf("final manifest %q (there: %v), want racer %02d's", b, ok, winner)
	}
}
