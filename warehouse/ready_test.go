package warehouse

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/lancens/lancens/internal/testkit/s3test"
)

// TestReady checks readiness of a local warehouse (its directory must be
// there) and of one on S3 (the gateway must answer with its bucket).
func TestReady(t *testing.T) {
	ctx := t.Context()
	dir := filepath.Join(t.TempDir(), "wh")
	local, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := local.Ready(ctx); err != nil {
		t.Fatalf("local warehouse: %v", err)
	}
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	if err := local.Ready(ctx); err == nil {
		t.Fatal("ready without its directory")
	}

	g := s3test.Start(t)
	g.CreateBucket(t, "lance")
	onS3, err := OpenStore(ctx, "s3://lance/wh", g.Options())
	if err != nil {
		t.Fatal(err)
	}
	if err := onS3.Ready(ctx); err != nil {
		t.Fatalf("warehouse on S3: %v", err)
	}
	g.Stop()
	if err := onS3.Ready(ctx); err == nil {
		t.Fatal("ready with the object store down")
	}
}
