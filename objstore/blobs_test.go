package objstore_test

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/lancens/lancens/internal/testkit/s3test"
	"github.com/lancens/lancens/lance/blob"
	"github.com/lancens/lancens/lance/blob/blobtest"
	"github.com/lancens/lancens/objstore"
)

// TestS3Blobs runs the blob.Store contract against a bucket of a real
// S3-compatible gateway, each case under a prefix of its own.
func TestS3Blobs(t *testing.T) {
	g := s3test.Start(t)
	g.CreateBucket(t, "lance")
	c, err := objstore.NewS3(t.Context(), g.Options())
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int32
	blobtest.Run(t, func(t *testing.T) blob.Store {
		return c.Bucket("lance").Blobs(fmt.Sprintf("case-%d/t.lance", n.Add(1)))
	})
}

// TestS3BlobsMultipart writes an object larger than a part, which goes up
// as a multipart upload, and one aborted midway, which leaves nothing.
func TestS3BlobsMultipart(t *testing.T) {
	g := s3test.Start(t)
	g.CreateBucket(t, "lance")
	c, err := objstore.NewS3(t.Context(), g.Options())
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	s := c.Bucket("lance").Blobs("ds").WithPartSize(5 << 20)
	data := make([]byte, 11<<20+123)
	_, _ = rand.Read(data)
	w, err := s.Create(ctx, "data/big.lance")
	if err != nil {
		t.Fatal(err)
	}
	for chunk := range slices.Chunk(data, 1<<20+7) {
		if _, err := w.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	if keys := g.Keys(t, "lance", "ds/"); len(keys) != 0 {
		t.Errorf("objects visible before Close: %v", keys)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	info, err := s.Stat(ctx, "data/big.lance")
	if err != nil || info.Size != int64(len(data)) {
		t.Fatalf("Stat = %+v, %v", info, err)
	}
	for _, r := range [][2]int64{{0, 10}, {5<<20 - 3, 6}, {int64(len(data)) - 5, 5}} {
		got, err := s.ReadRange(ctx, "data/big.lance", r[0], r[1])
		if err != nil || !bytes.Equal(got, data[r[0]:r[0]+r[1]]) {
			t.Errorf("ReadRange(%d, %d): %v", r[0], r[1], err)
		}
	}

	w, err = s.Create(ctx, "data/aborted.lance")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}
	if keys := g.Keys(t, "lance", "ds/"); len(keys) != 1 {
		t.Errorf("after an aborted upload: %v", keys)
	}
}
