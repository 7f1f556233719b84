package vend_test

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lancens/lancens/internal/testkit/ststest"
	"github.com/lancens/lancens/objstore"
	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/vend"
)

var configured = objstore.Options{
	"aws_endpoint": "http://127.0.0.1:9000", "aws_region": "eu-west-1", "allow_http": "true",
	"aws_access_key_id": "AKIDLANCENS", "aws_secret_access_key": "server-secret", "client_timeout": "30s",
}

func TestModes(t *testing.T) {
	public := map[string]string{"aws_endpoint": "http://127.0.0.1:9000", "aws_region": "eu-west-1", "allow_http": "true"}
	for _, tc := range []struct {
		mode        vend.Mode
		credentials bool
		want        map[string]string
	}{
		{vend.None, true, public},
		{vend.None, false, public},
		{vend.Static, true, configured},
		{vend.Static, false, public},
	} {
		v, err := vend.New(t.Context(), vend.Config{Mode: tc.mode, Options: configured})
		if err != nil {
			t.Fatal(err)
		}
		got, err := v.Options(t.Context(), "s3://lance/wh/t.lance", vend.ReadWrite, tc.credentials)
		if err != nil || !maps.Equal(got, tc.want) {
			t.Errorf("%s (credentials %v) = %v, %v; want %v", tc.mode, tc.credentials, got, err, tc.want)
		}
	}
	for _, s := range []string{"", "NONE", "static", " sts "} {
		if _, err := vend.ParseMode(s); err != nil {
			t.Errorf("ParseMode(%q) = %v", s, err)
		}
	}
	if _, err := vend.ParseMode("always"); err == nil {
		t.Error("ParseMode(always) accepted")
	}
}

func TestNewRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  vend.Config
		flag string
	}{
		{"NoRole", vend.Config{Mode: vend.STS, Options: configured}, "--sts-role-arn"},
		{"RoleWithoutSTS", vend.Config{Mode: vend.Static, Options: configured, RoleARN: "arn:aws:iam::1:role/r"}, "--sts-role-arn"},
		{"ShortDuration", vend.Config{Mode: vend.STS, Options: configured, RoleARN: "arn:aws:iam::1:role/r", Duration: time.Minute}, "--sts-duration"},
		{"LongDuration", vend.Config{Mode: vend.STS, Options: configured, RoleARN: "arn:aws:iam::1:role/r", Duration: 13 * time.Hour}, "--sts-duration"},
		{"BadEndpoint", vend.Config{Mode: vend.STS, Options: configured, RoleARN: "arn:aws:iam::1:role/r", STSEndpoint: "sts.local"}, "--sts-endpoint"},
	} {
		if _, err := vend.New(t.Context(), tc.cfg); err == nil || !strings.Contains(err.Error(), tc.flag) {
			t.Errorf("%s: New = %v, want an error naming %s", tc.name, err, tc.flag)
		}
	}
}

// policy is the part of an IAM policy the tests read.
type policy struct {
	Statement []struct {
		Effect    string
		Action    []string
		Resource  []string
		Condition map[string]map[string][]string
	}
}

// TestSTS vends credentials through the STS stand-in, which checks the
// signature of each request: the policy is scoped to the table's prefix
// (read-only callers get reads only), the duration is the configured one,
// credentials are reused while fresh, and an STS failure is code 17.
func TestSTS(t *testing.T) {
	s := ststest.Start(t, "AKIDLANCENS", "server-secret", "eu-west-1", ststest.Issued{AccessKeyID: "ASIATEMP", SecretAccessKey: "temp-secret", SessionToken: "temp-token"})
	v, err := vend.New(t.Context(), vend.Config{Mode: vend.STS, Options: configured, RoleARN: "arn:aws:iam::123456789012:role/lance", Duration: 30 * time.Minute, STSEndpoint: s.URL})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	got, err := v.Options(t.Context(), "s3://lance/wh/ns/t.lance", vend.ReadWrite, true)
	if err != nil {
		t.Fatal(err)
	}
	if got["aws_access_key_id"] != "ASIATEMP" || got["aws_secret_access_key"] != "temp-secret" || got["aws_session_token"] != "temp-token" ||
		got["aws_endpoint"] != configured["aws_endpoint"] || got["client_timeout"] != "" {
		t.Fatalf("vended %v", got)
	}
	ms, err := strconv.ParseInt(got["expires_at_millis"], 10, 64)
	if err != nil || time.UnixMilli(ms).Before(start.Add(29*time.Minute)) || time.UnixMilli(ms).After(time.Now().Add(31*time.Minute)) {
		t.Fatalf("expires_at_millis %q, want about 30 minutes from now", got["expires_at_millis"])
	}
	// Fresh credentials are reused.
	if _, err := v.Options(t.Context(), "s3://lance/wh/ns/t.lance", vend.ReadWrite, true); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Options(t.Context(), "s3://lance/wh/ns/t.lance", vend.ReadOnly, true); err != nil {
		t.Fatal(err)
	}
	reqs := s.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d STS requests, want 2 (one per access, reused after)", len(reqs))
	}
	for i, access := range []string{"rw", "ro"} {
		r := reqs[i]
		if r.RoleARN != "arn:aws:iam::123456789012:role/lance" || r.Duration != 30*time.Minute || !strings.HasPrefix(r.SessionName, "lancens-") {
			t.Fatalf("request %+v", r)
		}
		var p policy
		if err := json.Unmarshal([]byte(r.Policy), &p); err != nil || len(p.Statement) != 2 {
			t.Fatalf("policy %s: %v", r.Policy, err)
		}
		objects, list := p.Statement[0], p.Statement[1]
		if !slices.Equal(objects.Resource, []string{"arn:aws:s3:::lance/wh/ns/t.lance/*"}) || objects.Effect != "Allow" {
			t.Fatalf("%s object statement %+v", access, objects)
		}
		wantActions := []string{"s3:GetObject", "s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload"}
		if access == "ro" {
			wantActions = []string{"s3:GetObject"}
		}
		if !slices.Equal(objects.Action, wantActions) {
			t.Fatalf("%s actions %v, want %v", access, objects.Action, wantActions)
		}
		if !slices.Equal(list.Action, []string{"s3:ListBucket"}) || !slices.Equal(list.Resource, []string{"arn:aws:s3:::lance"}) ||
			!slices.Equal(list.Condition["StringLike"]["s3:prefix"], []string{"wh/ns/t.lance/*"}) {
			t.Fatalf("%s list statement %+v", access, list)
		}
	}

	s.SetFailing(true)
	if _, err := v.Options(t.Context(), "s3://lance/wh/other.lance", vend.ReadWrite, true); store.ErrorCode(err) != store.CodeServiceUnavailable {
		t.Fatalf("STS down: %v, want ServiceUnavailable", err)
	}
	s.SetFailing(false)
	// A caller STS does not recognise gets nothing either.
	wrong := maps.Clone(configured)
	wrong["aws_secret_access_key"] = "not-the-secret"
	v2, err := vend.New(t.Context(), vend.Config{Mode: vend.STS, Options: wrong, RoleARN: "arn:aws:iam::1:role/r", STSEndpoint: s.URL})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v2.Options(t.Context(), "s3://lance/wh/t.lance", vend.ReadWrite, true); store.ErrorCode(err) != store.CodeServiceUnavailable {
		t.Fatalf("badly signed request: %v, want ServiceUnavailable", err)
	}
	if len(s.Requests()) != 2 {
		t.Fatalf("the stand-in granted a badly signed request")
	}
}

func TestPolicyRefuses(t *testing.T) {
	for _, loc := range []string{"/wh/t.lance", "gs://b/t", "s3://b", "s3://b/", "s3://b/%zz", "s3://b/wh/*", "s3://b/wh/a?b", "s3://b/wh/${aws:username}"} {
		if _, err := vend.Policy(loc, vend.ReadWrite); store.ErrorCode(err) != store.CodeInvalidInput {
			t.Errorf("Policy(%q) = %v, want InvalidInput", loc, err)
		}
	}
}
