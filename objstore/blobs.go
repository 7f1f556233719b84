package objstore

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/lancens/lancens/lance/blob"
)

// S3Blobs is the blob.Store of the objects under a prefix of an S3 bucket:
// how the Lance packages (lance/file, lance/table) reach datasets on S3.
// Reads are ranged GETs; Create buffers a small object and sends it with
// one PUT, and streams a larger one as a multipart upload, so that the
// object appears whole when Close completes it (and never, after Abort);
// PutIfAbsent is a PUT with If-None-Match: *, which the store decides
// atomically (Check verifies the store honours it); List pages through
// ListObjectsV2.
type S3Blobs struct {
	b      *S3Bucket
	prefix string // "" or ending in "/"
	// partSize is the size of each part of a multipart upload, and the
	// largest object Create sends in one PUT.
	partSize int
}

// DefaultPartSize is the part size of S3Blobs' multipart uploads.
const DefaultPartSize = 8 << 20

// minPartSize is the smallest part S3 accepts (but the last).
const minPartSize = 5 << 20

// Blobs returns the blob.Store of the objects below prefix ("" for the
// whole bucket, else a key prefix such as "warehouse/t.lance").
func (b *S3Bucket) Blobs(prefix string) *S3Blobs {
	prefix = strings.Trim(prefix, "/")
	if prefix != "" {
		prefix += "/"
	}
	return &S3Blobs{b: b, prefix: prefix, partSize: DefaultPartSize}
}

// WithPartSize returns a copy of s whose multipart uploads use parts of n
// bytes (at least S3's minimum of 5 MiB).
func (s *S3Blobs) WithPartSize(n int) *S3Blobs {
	c := *s
	c.partSize = max(n, minPartSize)
	return &c
}

var _ blob.Store = (*S3Blobs)(nil)

// key returns the bucket key of p, or an error when p is not a clean
// relative path.
func (s *S3Blobs) key(p string) (string, error) {
	if _, err := blob.CleanPath(p); err != nil {
		return "", err
	}
	return s.prefix + p, nil
}

// blobError maps the store's answers to blob's errors: 404 is
// blob.ErrNotFound, 412 and 409 (a conditional write that lost) are
// blob.ErrExists.
func blobError(op, p string, err error) error {
	switch status(err) {
	case http.StatusNotFound:
		return fmt.Errorf("%s %s: %w (%v)", op, p, blob.ErrNotFound, err)
	case http.StatusPreconditionFailed, http.StatusConflict:
		return fmt.Errorf("%s %s: %w (%v)", op, p, blob.ErrExists, err)
	}
	var nsk *types.NoSuchKey
	if errors.As(err, &nsk) {
		return fmt.Errorf("%s %s: %w (%v)", op, p, blob.ErrNotFound, err)
	}
	return fmt.Errorf("%s %s: %w", op, p, err)
}

// Stat implements blob.Store.
func (s *S3Blobs) Stat(ctx context.Context, p string) (blob.Info, error) {
	key, err := s.key(p)
	if err != nil {
		return blob.Info{}, err
	}
	out, err := s.b.c.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(s.b.name), Key: aws.String(key)})
	if err != nil {
		return blob.Info{}, blobError("stat", p, err)
	}
	return blob.Info{Path: p, Size: aws.ToInt64(out.ContentLength), ModTime: aws.ToTime(out.LastModified)}, nil
}

// ReadRange implements blob.Store with one ranged GET (a HEAD for an
// empty range, which still reports a missing object or an offset past the
// end).
func (s *S3Blobs) ReadRange(ctx context.Context, p string, off, n int64) ([]byte, error) {
	key, err := s.key(p)
	if err != nil {
		return nil, err
	}
	if off < 0 || n < 0 || off+n < off {
		return nil, fmt.Errorf("read of %s: bad range %d+%d", p, off, n)
	}
	if n == 0 {
		info, err := s.Stat(ctx, p)
		if err != nil {
			return nil, err
		}
		if off > info.Size {
			return nil, fmt.Errorf("read of %s at %d: object has %d bytes: %w", p, off, info.Size, io.ErrUnexpectedEOF)
		}
		return []byte{}, nil
	}
	out, err := s.b.c.client.GetObject(ctx, &s3.GetObjectInput{
		Bucket: aws.String(s.b.name), Key: aws.String(key),
		Range: aws.String(fmt.Sprintf("bytes=%d-%d", off, off+n-1)),
	})
	if err != nil {
		if status(err) == http.StatusRequestedRangeNotSatisfiable {
			return nil, fmt.Errorf("read of %s at %d+%d: %w (%v)", p, off, n, io.ErrUnexpectedEOF, err)
		}
		return nil, blobError("read", p, err)
	}
	defer out.Body.Close()
	buf := make([]byte, n)
	got, err := io.ReadFull(out.Body, buf)
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("read of %s at %d+%d: the object ends after %d bytes: %w", p, off, n, got, io.ErrUnexpectedEOF)
	}
	if err != nil {
		return nil, fmt.Errorf("read of %s: %w", p, err)
	}
	return buf, nil
}

// maxParallelGets bounds how many GETs one ReadRanges has in flight.
const maxParallelGets = 8

var _ blob.RangesReader = (*S3Blobs)(nil)

// ReadRanges implements blob.RangesReader: ranges that overlap or touch
// are fetched as one, and the fetches go out as ranged GETs, up to
// maxParallelGets at once. Empty ranges need no GET but are checked
// against the object's size (a HEAD) unless a fetched range covers them.
// It returns ReadRange's errors (the first of them; the other GETs are
// then cancelled).
func (s *S3Blobs) ReadRanges(ctx context.Context, p string, ranges []blob.Range) ([][]byte, error) {
	if _, err := s.key(p); err != nil {
		return nil, err
	}
	order := make([]int, len(ranges))
	for i, r := range ranges {
		if r.Off < 0 || r.N < 0 || r.Off+r.N < r.Off {
			return nil, fmt.Errorf("read of %s: bad range %d+%d", p, r.Off, r.N)
		}
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(ranges[a].Off, ranges[b].Off) })
	// fetch[k] covers ranges order[group[k]:group[k+1]].
	var fetch []blob.Range
	var group []int
	for i, idx := range order {
		r := ranges[idx]
		if k := len(fetch) - 1; k >= 0 && r.Off <= fetch[k].Off+fetch[k].N {
			fetch[k].N = max(fetch[k].N, r.Off+r.N-fetch[k].Off)
			continue
		}
		fetch, group = append(fetch, r), append(group, i)
	}
	group = append(group, len(order))
	bufs := make([][]byte, len(fetch))
	errs := make([]error, len(fetch))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sem := make(chan struct{}, maxParallelGets)
	var wg sync.WaitGroup
	for k, f := range fetch {
		if f.N == 0 {
			continue
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if bufs[k], errs[k] = s.ReadRange(ctx, p, f.Off, f.N); errs[k] != nil {
				cancel()
			}
		})
	}
	wg.Wait()
	// The first error that is not another's cancellation.
	var first error
	for _, err := range errs {
		if err != nil && (first == nil || errors.Is(first, context.Canceled)) {
			first = err
		}
	}
	if first != nil {
		return nil, first
	}
	out := make([][]byte, len(ranges))
	emptyAt := int64(-1) // the furthest empty range no fetch covers
	for k, f := range fetch {
		for _, idx := range order[group[k]:group[k+1]] {
			r := ranges[idx]
			if f.N == 0 {
				emptyAt, out[idx] = f.Off, []byte{}
				continue
			}
			at := r.Off - f.Off
			out[idx] = bufs[k][at : at+r.N : at+r.N]
		}
	}
	if emptyAt >= 0 {
		// One HEAD says whether the object is there and reaches it.
		if _, err := s.ReadRange(ctx, p, emptyAt, 0); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Create implements blob.Store.
func (s *S3Blobs) Create(ctx context.Context, p string) (blob.Writer, error) {
	key, err := s.key(p)
	if err != nil {
		return nil, err
	}
	return &s3Writer{ctx: ctx, s: s, key: key, path: p}, nil
}

// s3Writer buffers up to one part; the first full part starts a
// multipart upload, and every later one is sent as it fills.
type s3Writer struct {
	ctx      context.Context
	s        *S3Blobs
	key      string
	path     string
	buf      []byte
	uploadID string
	parts    []types.CompletedPart
	err      error
	done     bool
}

func (w *s3Writer) Write(b []byte) (int, error) {
	if w.done {
		return 0, errors.New("objstore: write to a closed object writer")
	}
	if w.err != nil {
		return 0, w.err
	}
	n := len(b)
	for len(b) > 0 {
		room := w.s.partSize - len(w.buf)
		take := min(room, len(b))
		w.buf = append(w.buf, b[:take]...)
		b = b[take:]
		if len(w.buf) == w.s.partSize && len(b) > 0 {
			if w.err = w.sendPart(); w.err != nil {
				return n - len(b), w.err
			}
		}
	}
	return n, nil
}

// sendPart uploads the buffer as the next part, starting the multipart
// upload first if needed.
func (w *s3Writer) sendPart() error {
	c := w.s.b.c.client
	if w.uploadID == "" {
		out, err := c.CreateMultipartUpload(w.ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(w.s.b.name), Key: aws.String(w.key)})
		if err != nil {
			return blobError("create", w.path, err)
		}
		w.uploadID = aws.ToString(out.UploadId)
	}
	num := int32(len(w.parts) + 1)
	out, err := c.UploadPart(w.ctx, &s3.UploadPartInput{
		Bucket: aws.String(w.s.b.name), Key: aws.String(w.key), UploadId: aws.String(w.uploadID),
		PartNumber: aws.Int32(num), Body: bytes.NewReader(w.buf), ContentLength: aws.Int64(int64(len(w.buf))),
	})
	if err != nil {
		return blobError("write", w.path, err)
	}
	w.parts = append(w.parts, types.CompletedPart{ETag: out.ETag, PartNumber: aws.Int32(num)})
	w.buf = w.buf[:0]
	return nil
}

func (w *s3Writer) Close() error {
	if w.done {
		return errors.New("objstore: object writer already closed")
	}
	w.done = true
	if w.err != nil {
		return errors.Join(w.err, w.abort())
	}
	c := w.s.b.c.client
	if w.uploadID == "" {
		_, err := c.PutObject(w.ctx, &s3.PutObjectInput{
			Bucket: aws.String(w.s.b.name), Key: aws.String(w.key),
			Body: bytes.NewReader(w.buf), ContentLength: aws.Int64(int64(len(w.buf))),
		})
		if err != nil {
			return blobError("write", w.path, err)
		}
		return nil
	}
	if err := w.sendPart(); err != nil {
		return errors.Join(err, w.abort())
	}
	_, err := c.CompleteMultipartUpload(w.ctx, &s3.CompleteMultipartUploadInput{
		Bucket: aws.String(w.s.b.name), Key: aws.String(w.key), UploadId: aws.String(w.uploadID),
		MultipartUpload: &types.CompletedMultipartUpload{Parts: w.parts},
	})
	if err != nil {
		return errors.Join(blobError("write", w.path, err), w.abort())
	}
	return nil
}

func (w *s3Writer) Abort() error {
	if w.done {
		return nil
	}
	w.done = true
	return w.abort()
}

// abort drops the multipart upload, if one was started, and its parts.
func (w *s3Writer) abort() error {
	w.buf = nil
	if w.uploadID == "" {
		return nil
	}
	_, err := w.s.b.c.client.AbortMultipartUpload(context.WithoutCancel(w.ctx), &s3.AbortMultipartUploadInput{
		Bucket: aws.String(w.s.b.name), Key: aws.String(w.key), UploadId: aws.String(w.uploadID),
	})
	if err != nil {
		return blobError("abort", w.path, err)
	}
	return nil
}

// PutIfAbsent implements blob.Store with a PUT carrying If-None-Match: *.
func (s *S3Blobs) PutIfAbsent(ctx context.Context, p string, data []byte) error {
	key, err := s.key(p)
	if err != nil {
		return err
	}
	_, err = s.b.c.client.PutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String(s.b.name), Key: aws.String(key), IfNoneMatch: aws.String("*"),
		Body: bytes.NewReader(data), ContentLength: aws.Int64(int64(len(data))),
	})
	if err != nil {
		return blobError("put", p, err)
	}
	return nil
}

// List implements blob.Store.
func (s *S3Blobs) List(ctx context.Context, prefix string) iter.Seq2[blob.Info, error] {
	return func(yield func(blob.Info, error) bool) {
		pages := s3.NewListObjectsV2Paginator(s.b.c.client, &s3.ListObjectsV2Input{
			Bucket: aws.String(s.b.name), Prefix: aws.String(s.prefix + prefix),
		})
		for pages.HasMorePages() {
			page, err := pages.NextPage(ctx)
			if err != nil {
				yield(blob.Info{}, blobError("list", prefix, err))
				return
			}
			for _, o := range page.Contents {
				p := strings.TrimPrefix(aws.ToString(o.Key), s.prefix)
				if !yield(blob.Info{Path: p, Size: aws.ToInt64(o.Size), ModTime: aws.ToTime(o.LastModified)}, nil) {
					return
				}
			}
		}
	}
}

// Delete implements blob.Store.
func (s *S3Blobs) Delete(ctx context.Context, p string) error {
	key, err := s.key(p)
	if err != nil {
		return err
	}
	_, err = s.b.c.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(s.b.name), Key: aws.String(key)})
	if err != nil && status(err) != http.StatusNotFound {
		return blobError("delete", p, err)
	}
	return nil
}
