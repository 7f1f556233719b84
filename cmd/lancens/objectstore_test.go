package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/lancens/lancens/internal/testkit/s3test"
	"github.com/lancens/lancens/internal/testkit/ststest"
)

func TestStorageOptionFlags(t *testing.T) {
	env := map[string]string{"LANCENS_STORAGE_OPTIONS": "aws_region=eu-west-1, allow_http=true,", "LANCENS_VEND_CREDENTIALS": "static"}
	cfg, err := parseServeFlags([]string{"--storage-option", "aws_endpoint=http://127.0.0.1:9000", "--storage-option", "aws_region=us-east-1"},
		func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"aws_region": "us-east-1", "allow_http": "true", "aws_endpoint": "http://127.0.0.1:9000"}
	if !maps.Equal(cfg.storageOptions, want) || cfg.vending != "static" {
		t.Fatalf("options %v, vending %q", cfg.storageOptions, cfg.vending)
	}
	for _, args := range [][]string{
		{"--storage-option", "no-equals"},
		{"--storage-option", "=x"},
		{"--vend-credentials", "always"},
		{"--sts-duration", "soon"},
	} {
		if _, err := parseServeFlags(args, func(string) string { return "" }, io.Discard); err == nil {
			t.Errorf("accepted %q", args)
		}
	}
	// A mistyped key is refused, with the key it most likely meant; Lance's
	// other S3 keys and the aliases lancens reads pass.
	for _, tc := range []struct {
		args    []string
		env     string
		ok      bool
		suggest string
	}{
		{args: []string{"--storage-option", "aws_endpont=http://127.0.0.1:9000"}, suggest: `"aws_endpoint"`},
		{env: "aws_regoin=us-east-1", suggest: `"aws_region"`},
		{args: []string{"--storage-option", "allow_htp=true"}, suggest: `"allow_http"`},
		{args: []string{"--storage-option", "qqqqqqqq=1"}},
		{args: []string{"--storage-option", "aws_endpoint_url=http://x", "--storage-option", "aws_server_side_encryption=AES256"}, ok: true},
	} {
		var stderr bytes.Buffer
		_, err := parseServeFlags(tc.args, func(k string) string {
			if k == "LANCENS_STORAGE_OPTIONS" {
				return tc.env
			}
			return ""
		}, &stderr)
		msg := stderr.String()
		if err != nil {
			msg += err.Error()
		}
		switch {
		case tc.ok && err != nil:
			t.Errorf("%q refused: %s", tc.args, msg)
		case tc.ok:
		case err == nil:
			t.Errorf("%q %q accepted", tc.args, tc.env)
		case !strings.Contains(msg, "unknown storage option") || !strings.Contains(msg, tc.suggest):
			t.Errorf("%q %q: %s; want a refusal suggesting %s", tc.args, tc.env, msg, tc.suggest)
		}
	}
}

// serveOn starts `lancens serve` with args and returns its base URL, or
// the error it stopped with at start-up.
func serveOn(t *testing.T, args ...string) (string, error) {
	t.Helper()
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	out, w := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, append([]string{"serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(dir, "lancens.db"), "--sync", "NORMAL"}, args...),
			testEnv, w, io.Discard)
		w.Close()
	}()
	line, _ := bufioLine(out)
	if !strings.Contains(line, "listening on ") {
		cancel()
		return "", <-done
	}
	go io.Copy(io.Discard, out)
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return strings.Fields(line[strings.Index(line, "http://"):])[0], nil
}

func bufioLine(r io.Reader) (string, error) {
	var b [1]byte
	var line []byte
	for {
		n, err := r.Read(b[:])
		if n > 0 {
			if b[0] == '\n' {
				return string(line), nil
			}
			line = append(line, b[0])
		}
		if err != nil {
			return string(line), err
		}
	}
}

func gatewayArgs(g *s3test.Gateway, warehouse string) []string {
	args := []string{"--warehouse", warehouse}
	for k, v := range g.Options() {
		args = append(args, "--storage-option", k+"="+v)
	}
	return args
}

// TestServeObjectStoreStartup checks that a store lancens cannot use stops
// it at start-up with a message naming what is wrong.
func TestServeObjectStoreStartup(t *testing.T) {
	g := s3test.Start(t)
	g.CreateBucket(t, "lance")
	if _, err := serveOn(t, gatewayArgs(g, "s3://lance/wh")...); err != nil {
		t.Fatalf("good configuration refused: %v", err)
	}
	without := func(key string) []string {
		o := g.Options()
		delete(o, key)
		args := []string{"--warehouse", "s3://lance/wh"}
		for k, v := range o {
			args = append(args, "--storage-option", k+"="+v)
		}
		return args
	}
	for _, tc := range []struct {
		name string
		args []string
		says string
	}{
		{"MissingBucket", gatewayArgs(g, "s3://nobucket/wh"), "nobucket"},
		{"PlainHTTP", without("allow_http"), "allow_http"},
		{"NoSecret", without("aws_secret_access_key"), "aws_secret_access_key"},
		{"Unreachable", append(gatewayArgs(g, "s3://lance/wh"), "--storage-option", "aws_endpoint=http://127.0.0.1:1"), "aws_endpoint"},
		{"WrongSecret", append(gatewayArgs(g, "s3://lance/wh"), "--storage-option", "aws_secret_access_key=wrong"), "aws_secret_access_key"},
		{"OtherScheme", gatewayArgs(g, "gs://lance/wh"), "s3://"},
		{"OptionsOnLocal", append(gatewayArgs(g, "s3://lance/wh"), "--warehouse", t.TempDir()), "storage options"},
		{"VendingOnLocal", []string{"--warehouse", t.TempDir(), "--vend-credentials", "static"}, "--vend-credentials"},
		{"STSWithoutRole", append(gatewayArgs(g, "s3://lance/wh"), "--vend-credentials", "sts"), "--sts-role-arn"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := serveOn(t, tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("serve = %v, want a start-up error naming %q", err, tc.says)
			}
		})
	}
}

// TestServeSTSVending runs lancens with --vend-credentials sts against the
// STS stand-in: describe hands out the temporary credentials with their
// expiry, and a client can write the table's files with them.
func TestServeSTSVending(t *testing.T) {
	g := s3test.Start(t)
	g.CreateBucket(t, "lance")
	// The gateway knows one key pair and checks session tokens against its
	// own: the stand-in hands that pair out, without a token, as STS hands
	// out a temporary one.
	sts := ststest.Start(t, g.AccessKey, g.SecretKey, g.Region, ststest.Issued{AccessKeyID: g.AccessKey, SecretAccessKey: g.SecretKey})
	u, err := serveOn(t, append(gatewayArgs(g, "s3://lance/wh"), "--vend-credentials", "sts",
		"--sts-role-arn", "arn:aws:iam::123456789012:role/lance-tables", "--sts-duration", "20m", "--sts-endpoint", sts.URL)...)
	if err != nil {
		t.Fatal(err)
	}
	post := func(path string) map[string]any {
		t.Helper()
		res, err := http.Post(u+path, "application/json", bytes.NewReader([]byte(`{}`)))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(res.Body).Decode(&out); err != nil || res.StatusCode != 200 {
			t.Fatalf("%s: %d %v", path, res.StatusCode, err)
		}
		return out
	}
	declared := post("/v1/table/events/declare")
	described := post("/v1/table/events/describe")
	location := described["location"].(string)
	for _, r := range []map[string]any{declared, described} {
		opts := r["storage_options"].(map[string]any)
		ms, _ := strconv.ParseInt(opts["expires_at_millis"].(string), 10, 64)
		if opts["aws_access_key_id"] != g.AccessKey || opts["aws_endpoint"] != g.Endpoint ||
			time.Until(time.UnixMilli(ms)) < 19*time.Minute || time.Until(time.UnixMilli(ms)) > 21*time.Minute {
			t.Fatalf("vended %v", opts)
		}
	}
	reqs := sts.Requests()
	if len(reqs) != 1 || reqs[0].Duration != 20*time.Minute || !strings.Contains(reqs[0].Policy, "arn:aws:s3:::lance/"+strings.TrimPrefix(location, "s3://lance/")+"/*") {
		t.Fatalf("STS requests %+v (location %s)", reqs, location)
	}
	opts := described["storage_options"].(map[string]any)
	c := s3.New(s3.Options{Region: g.Region, BaseEndpoint: aws.String(opts["aws_endpoint"].(string)), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(opts["aws_access_key_id"].(string), opts["aws_secret_access_key"].(string), opts["aws_session_token"].(string))})
	key := strings.TrimPrefix(location, "s3://lance/") + "/data/x.lance"
	if _, err := c.PutObject(t.Context(), &s3.PutObjectInput{Bucket: aws.String("lance"), Key: aws.String(key), Body: bytes.NewReader([]byte("x"))}); err != nil {
		t.Fatalf("writing with the vended credentials: %v", err)
	}
}
