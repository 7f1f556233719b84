package objstore_test

import (
	"fmt"
	"testing"

	"github.com/lancens/lancens/internal/testkit/s3test"
	"github.com/lancens/lancens/lance/table/tabletest"
	"github.com/lancens/lancens/objstore"
)

// s3Datasets starts a gateway and returns the places of datasets in its
// bucket, each under a prefix of its own, reached by Go through S3Blobs
// and by the LanceDB SDK through the same storage options lancens hands
// its clients.
func s3Datasets(t *testing.T) tabletest.NewDataset {
	g := s3test.Start(t)
	g.CreateBucket(t, "lance")
	c, err := objstore.NewS3(t.Context(), g.Options())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	return func(t *testing.T) tabletest.Dataset {
		n++
		db := fmt.Sprintf("db-%d", n)
		return tabletest.Dataset{Store: c.Bucket("lance").Blobs(db + "/t.lance"), DB: "s3://lance/" + db, Name: "t", Options: g.Options()}
	}
}

// TestLanceOnS3ReadSDKWritten reads datasets the LanceDB SDK wrote on S3.
func TestLanceOnS3ReadSDKWritten(t *testing.T) { tabletest.ReadSDKWritten(t, s3Datasets(t)) }

// TestLanceOnS3SDKReadsGoWritten has the SDK read, index and write on top
// of a dataset Go wrote on S3.
func TestLanceOnS3SDKReadsGoWritten(t *testing.T) { tabletest.SDKReadsGoWritten(t, s3Datasets(t)) }
