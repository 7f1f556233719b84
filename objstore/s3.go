package objstore

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// S3 is a client for an S3 endpoint (AWS, or an S3-compatible store such
// as MinIO, Versity, Ceph or R2); Bucket gives the Bucket of one of its
// buckets.
type S3 struct {
	client   *s3.Client
	endpoint string
}

// NewS3 returns a client configured by opts (see Options). It returns an
// error naming the option at fault when they are malformed; it does not
// contact the store (see Check).
func NewS3(ctx context.Context, opts Options) (*S3, error) {
	s, err := opts.s3Settings()
	if err != nil {
		return nil, err
	}
	cfg, err := s.awsConfig(ctx)
	if err != nil {
		return nil, err
	}
	client := s3.NewFromConfig(cfg, func(o *s3.Options) {
		if s.endpoint != "" {
			o.BaseEndpoint = aws.String(s.endpoint)
		}
		o.UsePathStyle = !s.virtualHosted
		// The client the SDK resolved (with its timeouts), its requests
		// traced.
		o.HTTPClient = tracingClient{next: o.HTTPClient}
	})
	endpoint := s.endpoint
	if endpoint == "" {
		endpoint = "AWS S3 (" + cfg.Region + ")"
	}
	return &S3{client: client, endpoint: endpoint}, nil
}

// Endpoint returns the endpoint the client talks to, for messages.
func (c *S3) Endpoint() string { return c.endpoint }

// Bucket returns the Bucket of the bucket named name.
func (c *S3) Bucket(name string) *S3Bucket { return &S3Bucket{c: c, name: name} }

// S3Bucket is one bucket of an S3 endpoint.
type S3Bucket struct {
	c    *S3
	name string
}

var _ Bucket = (*S3Bucket)(nil)

// status returns the HTTP status of a failed request, or 0.
func status(err error) int {
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}

// classify maps the store's answers to this package's errors: 404 is
// ErrNotFound, 412 (and 409, a conditional write racing another) is
// ErrPrecondition.
func classify(err error) error {
	switch status(err) {
	case http.StatusNotFound:
		return fmt.Errorf("%w (%v)", ErrNotFound, err)
	case http.StatusPreconditionFailed, http.StatusConflict:
		return fmt.Errorf("%w (%v)", ErrPrecondition, err)
	}
	return err
}

// Check makes sure the bucket can be used for lancens' commits: it exists,
// the credentials may read and write it, and the store honours the
// conditional requests manifest publishing relies on: put-if-absent
// (If-None-Match), and If-Match on puts and deletes (replacing a leftover,
// discarding a refused commit's manifest). It writes and removes one
// probe object under prefix. Returns an error saying which of these
// failed.
func (b *S3Bucket) Check(ctx context.Context, prefix string) error {
	if err := b.Reachable(ctx); err != nil {
		return err
	}
	var r [8]byte
	_, _ = rand.Read(r[:])
	key := strings.TrimPrefix(prefix+"/.lancens-probe-"+hex.EncodeToString(r[:]), "/")
	if _, err := b.put(ctx, key, []byte("probe"), "", ""); err != nil {
		return fmt.Errorf("cannot write to bucket %q at %s: %w", b.name, b.c.endpoint, err)
	}
	defer func() { _ = b.Delete(context.WithoutCancel(ctx), key, "") }()
	// Each conditional request must be refused: a second put-if-absent,
	// a put and a delete over a tag the object does not have.
	const otherTag = `"lancens-probe-not-this-tag"`
	for _, probe := range []struct {
		header string
		do     func() error
	}{
		{"If-None-Match on PutObject", func() error { _, err := b.put(ctx, key, []byte("probe"), "", ""); return err }},
		{"If-Match on PutObject", func() error { _, err := b.put(ctx, key, []byte("probe"), otherTag, ""); return err }},
		{"If-Match on DeleteObject", func() error { return b.Delete(ctx, key, otherTag) }},
	} {
		err := probe.do()
		if err == nil {
			return fmt.Errorf("the store at %s ignores %s: lancens cannot publish manifests there safely", b.c.endpoint, probe.header)
		}
		if !errors.Is(err, ErrPrecondition) {
			return fmt.Errorf("probing %s in bucket %q at %s: %w", probe.header, b.name, b.c.endpoint, err)
		}
	}
	return nil
}

// Reachable returns nil when the store answers and the bucket exists and
// admits the credentials (one HeadBucket request, nothing written: cheap
// enough for a readiness probe), and otherwise an error saying which of
// these failed.
func (b *S3Bucket) Reachable(ctx context.Context) error {
	_, err := b.c.client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(b.name)})
	if err == nil {
		return nil
	}
	switch status(err) {
	case http.StatusNotFound:
		return fmt.Errorf("bucket %q does not exist at %s", b.name, b.c.endpoint)
	case http.StatusForbidden, http.StatusUnauthorized:
		return fmt.Errorf("access to bucket %q at %s denied: check the credentials (%s, %s): %w", b.name, b.c.endpoint, KeyAccessKeyID, KeySecretAccessKey, err)
	case 0:
		return fmt.Errorf("cannot reach %s: check %s: %w", b.c.endpoint, KeyEndpoint, err)
	}
	return fmt.Errorf("bucket %q at %s: %w", b.name, b.c.endpoint, err)
}

// Stat implements Bucket.
func (b *S3Bucket) Stat(ctx context.Context, key string) (Info, error) {
	out, err := b.c.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(b.name), Key: aws.String(key)})
	if err != nil {
		return Info{}, opError("stat", key, classify(err))
	}
	return Info{Size: aws.ToInt64(out.ContentLength), ETag: aws.ToString(out.ETag), PublishedFrom: out.Metadata[MetaPublishedFrom]}, nil
}

// Get implements Bucket.
func (b *S3Bucket) Get(ctx context.Context, key string, limit int64) ([]byte, Info, error) {
	out, err := b.c.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(b.name), Key: aws.String(key)})
	if err != nil {
		return nil, Info{}, opError("get", key, classify(err))
	}
	defer out.Body.Close()
	if n := aws.ToInt64(out.ContentLength); n > limit {
		return nil, Info{}, opError("get", key, fmt.Errorf("%w: %d bytes, at most %d", ErrTooLarge, n, limit))
	}
	data, err := io.ReadAll(io.LimitReader(out.Body, limit+1))
	if err != nil {
		return nil, Info{}, opError("get", key, err)
	}
	if int64(len(data)) > limit {
		return nil, Info{}, opError("get", key, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, limit))
	}
	return data, Info{Size: int64(len(data)), ETag: aws.ToString(out.ETag), PublishedFrom: out.Metadata[MetaPublishedFrom]}, nil
}

// put writes data at key: only if absent (ifMatch ""), or only over the
// content ifMatch names; a non-empty from marks it as published from that
// key.
func (b *S3Bucket) put(ctx context.Context, key string, data []byte, ifMatch, from string) (Info, error) {
	in := &s3.PutObjectInput{
		Bucket: aws.String(b.name), Key: aws.String(key),
		Body: bytes.NewReader(data), ContentLength: aws.Int64(int64(len(data))),
	}
	if from != "" {
		in.Metadata = map[string]string{MetaPublishedFrom: from}
	}
	if ifMatch == "" {
		in.IfNoneMatch = aws.String("*")
	} else {
		in.IfMatch = aws.String(ifMatch)
	}
	out, err := b.c.client.PutObject(ctx, in)
	if err != nil {
		err = classify(err)
		if ifMatch != "" && errors.Is(err, ErrNotFound) {
			err = fmt.Errorf("%w (%v)", ErrPrecondition, err)
		}
		return Info{}, err
	}
	return Info{Size: int64(len(data)), ETag: aws.ToString(out.ETag), PublishedFrom: from}, nil
}

// Publish implements Bucket: it reads src and writes it at dst with a
// conditional put (If-None-Match: *, or If-Match), which the store decides
// atomically, marked with src (MetaPublishedFrom).
func (b *S3Bucket) Publish(ctx context.Context, src, dst, ifMatch string, limit int64) (Info, error) {
	data, _, err := b.Get(ctx, src, limit)
	if err != nil {
		return Info{}, err
	}
	info, err := b.put(ctx, dst, data, ifMatch, src)
	return info, opError("publish", dst, err)
}

// Delete implements Bucket.
func (b *S3Bucket) Delete(ctx context.Context, key, ifMatch string) error {
	in := &s3.DeleteObjectInput{Bucket: aws.String(b.name), Key: aws.String(key)}
	if ifMatch != "" {
		in.IfMatch = aws.String(ifMatch)
	}
	_, err := b.c.client.DeleteObject(ctx, in)
	if err = classify(err); err != nil && !errors.Is(err, ErrNotFound) {
		return opError("delete", key, err)
	}
	return nil
}

// DeletePrefix implements Bucket: it lists the keys under prefix and
// deletes them a thousand at a time.
func (b *S3Bucket) DeletePrefix(ctx context.Context, prefix string) error {
	if prefix == "" || !strings.HasSuffix(prefix, "/") || strings.HasPrefix(prefix, "/") {
		return opError("delete prefix", prefix, errors.New("a prefix is a relative key ending in /"))
	}
	pages := s3.NewListObjectsV2Paginator(b.c.client, &s3.ListObjectsV2Input{Bucket: aws.String(b.name), Prefix: aws.String(prefix)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return opError("list", prefix, classify(err))
		}
		if len(page.Contents) == 0 {
			continue
		}
		ids := make([]types.ObjectIdentifier, len(page.Contents))
		for i, o := range page.Contents {
			ids[i] = types.ObjectIdentifier{Key: o.Key}
		}
		out, err := b.c.client.DeleteObjects(ctx, &s3.DeleteObjectsInput{
			Bucket: aws.String(b.name), Delete: &types.Delete{Objects: ids, Quiet: aws.Bool(true)},
		})
		if err != nil {
			return opError("delete prefix", prefix, classify(err))
		}
		if len(out.Errors) > 0 {
			e := out.Errors[0]
			return opError("delete", aws.ToString(e.Key), fmt.Errorf("%s: %s (and %d more)", aws.ToString(e.Code), aws.ToString(e.Message), len(out.Errors)-1))
		}
	}
	return nil
}
