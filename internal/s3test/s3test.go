// Package s3test starts a real S3-compatible server for tests: the Versity
// S3 Gateway (versitygw) on loopback, serving buckets that are directories
// of a temporary directory. Tests that need it skip when the binary is not
// installed, and fail instead when CI=true: `make versitygw` installs it.
package s3test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// Version is the gateway release the tests run against.
const Version = "v1.8.0"

// Binary returns the path of the versitygw binary: $LANCENS_VERSITYGW,
// else $HOME/.cache/lancens/bin/versitygw (where `make versitygw` puts
// it), else versitygw on $PATH. It returns an error saying how to install
// it when there is none.
func Binary() (string, error) {
	if p := os.Getenv("LANCENS_VERSITYGW"); p != "" {
		return p, nil
	}
	if home, err := os.UserHomeDir(); err == nil {
		p := filepath.Join(home, ".cache", "lancens", "bin", "versitygw")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("versitygw not found: run `make versitygw` (go install github.com/versity/versitygw/cmd/versitygw@%s)", Version)
}

// Gateway is a running gateway.
type Gateway struct {
	// Endpoint is its http:// URL.
	Endpoint string
	// AccessKey and SecretKey are the credentials it accepts.
	AccessKey, SecretKey string
	// Region is the region it signs for.
	Region string
	// Dir holds one directory per bucket.
	Dir string
	// Client is an S3 client for it.
	Client *s3.Client
	stop   func()
}

// Stop stops the gateway before the test ends (to see how its clients
// cope with an object store that is down).
func (g *Gateway) Stop() { g.stop() }

// Start runs a gateway for the test and stops it when the test ends. It
// skips the test when the binary is missing, unless CI is set to true, in
// which case the test fails: CI installs every component tests need.
func Start(t testing.TB) *Gateway {
	t.Helper()
	bin, err := Binary()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("S3 gateway unavailable under CI: %v", err)
		}
		t.Skipf("S3 gateway unavailable: %v", err)
	}
	g, err := Launch(bin, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Stop)
	return g
}

// Launch runs the gateway binary bin on a free loopback port, serving the
// buckets under dir, and returns once it answers. Stop ends it.
func Launch(bin, dir string) (*Gateway, error) {
	return LaunchAs(bin, dir, "lancens-test", "lancens-test-secret")
}

// LaunchAs is Launch with the gateway's root account given: accessKey and
// secretKey, which reach it through its environment (ROOT_ACCESS_KEY_ID,
// ROOT_SECRET_ACCESS_KEY), as deploy/compose gives them.
func LaunchAs(bin, dir, accessKey, secretKey string) (*Gateway, error) {
	g := &Gateway{AccessKey: accessKey, SecretKey: secretKey, Region: "us-east-1", Dir: dir}
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	g.Endpoint = "http://" + addr
	var log bytes.Buffer
	cmd := exec.Command(bin, "--port", addr, "--region", g.Region, "--quiet", "posix", g.Dir)
	cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY_ID="+accessKey, "ROOT_SECRET_ACCESS_KEY="+secretKey)
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	var once sync.Once
	g.stop = func() {
		once.Do(func() {
			_ = cmd.Process.Kill()
			<-exited
		})
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, err := http.Get(g.Endpoint + "/")
		if err == nil {
			res.Body.Close()
			break
		}
		select {
		case <-exited:
			return nil, fmt.Errorf("versitygw exited: %s", log.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			g.stop()
			return nil, fmt.Errorf("versitygw did not answer at %s: %v\n%s", g.Endpoint, err, log.String())
		}
	}
	g.Client = s3.New(s3.Options{
		Region:                     g.Region,
		BaseEndpoint:               aws.String(g.Endpoint),
		UsePathStyle:               true,
		Credentials:                credentials.NewStaticCredentialsProvider(g.AccessKey, g.SecretKey, ""),
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	})
	return g, nil
}

// freeAddr returns a loopback address with a port nobody listens on.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// Options returns the storage options that reach the gateway, in Lance's
// spelling.
func (g *Gateway) Options() map[string]string {
	return map[string]string{
		"aws_endpoint": g.Endpoint, "aws_region": g.Region, "allow_http": "true",
		"aws_access_key_id": g.AccessKey, "aws_secret_access_key": g.SecretKey,
	}
}

// CreateBucket makes a bucket.
func (g *Gateway) CreateBucket(t testing.TB, name string) {
	t.Helper()
	if err := g.MakeBucket(name); err != nil {
		t.Fatal(err)
	}
}

// MakeBucket makes a bucket, or returns why it cannot.
func (g *Gateway) MakeBucket(name string) error {
	if _, err := g.Client.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
		return fmt.Errorf("create bucket %s: %w", name, err)
	}
	return nil
}

// Put writes an object unconditionally.
func (g *Gateway) Put(t testing.TB, bucket, key string, data []byte) {
	t.Helper()
	g.PutWithMetadata(t, bucket, key, data, nil)
}

// PutWithMetadata writes an object with user metadata unconditionally.
func (g *Gateway) PutWithMetadata(t testing.TB, bucket, key string, data []byte, meta map[string]string) {
	t.Helper()
	if _, err := g.Client.PutObject(context.Background(), &s3.PutObjectInput{
		Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(data), Metadata: meta,
	}); err != nil {
		t.Fatalf("put %s/%s: %v", bucket, key, err)
	}
}

// Delete removes an object; a missing one is not an error.
func (g *Gateway) Delete(t testing.TB, bucket, key string) {
	t.Helper()
	if _, err := g.Client.DeleteObject(context.Background(), &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)}); err != nil {
		t.Fatalf("delete %s/%s: %v", bucket, key, err)
	}
}

// Get reads an object; ok is false when there is none.
func (g *Gateway) Get(t testing.TB, bucket, key string) (data []byte, ok bool) {
	t.Helper()
	out, err := g.Client.GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		var nf interface{ ErrorCode() string }
		if errors.As(err, &nf) && (nf.ErrorCode() == "NoSuchKey" || nf.ErrorCode() == "NotFound") {
			return nil, false
		}
		t.Fatalf("get %s/%s: %v", bucket, key, err)
	}
	defer out.Body.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(out.Body); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), true
}

// Keys lists the keys under prefix in bucket, sorted, read from the
// gateway's directory (what is really stored, whatever the S3 API says).
func (g *Gateway) Keys(t testing.TB, bucket, prefix string) []string {
	t.Helper()
	root := filepath.Join(g.Dir, bucket)
	var out []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			// The gateway keeps its own bookkeeping in dot directories.
			if p != root && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if strings.HasPrefix(rel, prefix) {
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}
