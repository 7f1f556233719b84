package server_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/lancens/lancens/auth"
	"github.com/lancens/lancens/client"
	"github.com/lancens/lancens/internal/testkit/apitest"
	"github.com/lancens/lancens/internal/testkit/s3test"
	"github.com/lancens/lancens/internal/testkit/ststest"
	"github.com/lancens/lancens/lance/manifestname"
	"github.com/lancens/lancens/objstore"
	"github.com/lancens/lancens/server"
	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/vend"
)

// s3Env is a server whose warehouse is s3://lance/wh on a real
// S3-compatible gateway, handing out the static storage options.
type s3Env struct {
	s *apitest.Server
	g *s3test.Gateway
}

func startS3(t *testing.T, mode vend.Mode) s3Env {
	t.Helper()
	g := s3test.Start(t)
	g.CreateBucket(t, "lance")
	v, err := vend.New(t.Context(), vend.Config{Mode: mode, Options: g.Options()})
	if err != nil {
		t.Fatal(err)
	}
	s := apitest.Start(t, apitest.Options{Warehouse: "s3://lance/wh", StorageOptions: g.Options(),
		Tune: func(c *server.Config) { c.Vendor = v }})
	return s3Env{s: s, g: g}
}

// key returns the key in the bucket of a path under an s3://lance/ location.
func key(location, rel string) string {
	return strings.TrimPrefix(location, "s3://lance/") + "/" + rel
}

// stageS3 puts a manifest where a Lance client stages one and returns the
// object-store path Lance sends: the key in the bucket.
func (e s3Env) stageS3(t *testing.T, location string, v int64, content string) string {
	t.Helper()
	k := key(location, fmt.Sprintf("_versions/%s-%x", manifestname.V2.FileName(v), len(content)^int(v)<<8^len(e.g.Keys(t, "lance", ""))))
	e.g.Put(t, "lance", k, []byte(content))
	return k
}

// TestObjectStoreCommits commits versions of a table on S3 the way a
// Lance client in namespace mode does: the location is in the bucket, the
// staged manifest is published to its final key before the record, the
// staged object goes after it, and refused commits leave the final key as
// it was.
func TestObjectStoreCommits(t *testing.T) {
	e := startS3(t, vend.Static)
	c, ctx := e.s.Client, t.Context()
	info, err := c.DeclareTable(ctx, []string{"t"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(info.Location, "s3://lance/wh/t-") || !info.ManagedVersioning {
		t.Fatalf("declared %+v", info)
	}
	if !maps.Equal(info.StorageOptions, e.g.Options()) {
		t.Fatalf("declare handed out %v, want the static options %v", info.StorageOptions, e.g.Options())
	}

	staged := e.stageS3(t, info.Location, 1, "manifest one")
	v1, _, err := c.CreateTableVersion(ctx, []string{"t"}, client.VersionCommit{Version: 1, ManifestPath: staged, NamingScheme: "V2"})
	if err != nil {
		t.Fatal(err)
	}
	final := key(info.Location, "_versions/"+manifestname.V2.FileName(1))
	if v1.ManifestPath != final || v1.ManifestSize == nil || *v1.ManifestSize != 12 || v1.ETag == nil || *v1.ETag == "" {
		t.Fatalf("version 1 = %+v, want the final manifest %s", v1, final)
	}
	if b, ok := e.g.Get(t, "lance", final); !ok || string(b) != "manifest one" {
		t.Fatalf("final manifest %q (there: %v)", b, ok)
	}
	if _, ok := e.g.Get(t, "lance", staged); ok {
		t.Fatal("staged manifest still there after the commit")
	}
	// A retry of the same commit gets the stored record.
	if again, _, err := c.CreateTableVersion(ctx, []string{"t"}, client.VersionCommit{Version: 1, ManifestPath: staged}); err != nil || again.ManifestPath != final {
		t.Fatalf("retry: %+v %v", again, err)
	}
	// A full s3:// URI of the staged manifest works too, on a branch-less
	// V1 table path; the final manifest's path is answered as a URI too.
	uri := "s3://lance/" + e.stageS3(t, info.Location, 2, "two")
	if v, _, err := c.CreateTableVersion(ctx, []string{"t"}, client.VersionCommit{Version: 2, ManifestPath: uri, NamingScheme: "V1"}); err != nil || v.ManifestPath != "s3://lance/"+key(info.Location, "_versions/2.manifest") {
		t.Fatalf("commit by URI: %+v %v", v, err)
	}

	for _, tc := range []struct {
		name     string
		path     string
		version  int64
		wantCode store.Code
	}{
		{"StagedMissing", key(info.Location, "_versions/gone.manifest-x"), 3, store.CodeInvalidInput},
		{"OutsideTable", "wh/elsewhere.manifest", 3, store.CodeInvalidInput},
		{"OtherBucket", "s3://other/" + key(info.Location, "_versions/3.manifest-x"), 3, store.CodeInvalidInput},
		{"DotDot", key(info.Location, "../x/_versions/3.manifest"), 3, store.CodeInvalidInput},
		{"ConflictingContent", e.stageS3(t, info.Location, 2, "someone else's two"), 2, store.CodeConcurrentModification},
		{"NotNext", e.stageS3(t, info.Location, 5, "five"), 5, store.CodeConcurrentModification},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := c.CreateTableVersion(ctx, []string{"t"}, client.VersionCommit{Version: tc.version, ManifestPath: tc.path})
			if store.ErrorCode(err) != tc.wantCode {
				t.Fatalf("got %v, want code %d", err, tc.wantCode)
			}
		})
	}
	// Refused commits leave no final manifest behind and keep version 2's.
	if _, ok := e.g.Get(t, "lance", key(info.Location, "_versions/"+manifestname.V2.FileName(5))); ok {
		t.Fatal("refused commit left a final manifest")
	}
	if b, _ := e.g.Get(t, "lance", key(info.Location, "_versions/2.manifest")); string(b) != "two" {
		t.Fatalf("conflicting commit changed version 2's manifest to %q", b)
	}
	// A final manifest of a version with no record that another writer
	// put straight into the bucket is never replaced.
	orphan := key(info.Location, "_versions/"+manifestname.V2.FileName(3))
	e.g.Put(t, "lance", orphan, []byte("foreign"))
	if _, _, err := c.CreateTableVersion(ctx, []string{"t"}, client.VersionCommit{Version: 3, ManifestPath: e.stageS3(t, info.Location, 3, "three")}); store.ErrorCode(err) != store.CodeConcurrentModification {
		t.Fatalf("commit over another writer's manifest: %v, want code 14", err)
	}
	if b, _ := e.g.Get(t, "lance", orphan); string(b) != "foreign" {
		t.Fatalf("version 3's manifest %q, want the other writer's", b)
	}
	// A leftover lancens published for a commit that failed before its
	// record is replaced by the next commit of that version.
	e.g.PutWithMetadata(t, "lance", orphan, []byte("orphan"), map[string]string{objstore.MetaPublishedFrom: orphan + "-failed"})
	if _, _, err := c.CreateTableVersion(ctx, []string{"t"}, client.VersionCommit{Version: 3, ManifestPath: e.stageS3(t, info.Location, 3, "three")}); err != nil {
		t.Fatal(err)
	}
	if b, _ := e.g.Get(t, "lance", orphan); string(b) != "three" {
		t.Fatalf("version 3's manifest %q", b)
	}
	// One holding the very content being committed (lancens stopped between
	// publishing and recording, the client retries) is kept.
	e.g.Put(t, "lance", key(info.Location, "_versions/"+manifestname.V2.FileName(4)), []byte("four"))
	if v, _, err := c.CreateTableVersion(ctx, []string{"t"}, client.VersionCommit{Version: 4, ManifestPath: e.stageS3(t, info.Location, 4, "four")}); err != nil || *v.ManifestSize != 4 {
		t.Fatalf("retry after a publication without record: %+v, %v", v, err)
	}

	// Locations outside the warehouse are refused, declared or registered.
	for _, loc := range []string{"s3://other/t", "s3://lance/elsewhere/t", "s3://lance/wh", "s3://lance/wh/../elsewhere/t", "/tmp/t", "gs://lance/wh/t"} {
		if _, err := c.DeclareTable(ctx, []string{"bad"}, &client.DeclareTableOptions{Location: loc}); store.ErrorCode(err) != store.CodeInvalidInput {
			t.Errorf("declare at %s: %v, want InvalidInput", loc, err)
		}
		if _, err := c.RegisterTable(ctx, []string{"bad"}, loc, nil); store.ErrorCode(err) != store.CodeInvalidInput {
			t.Errorf("register at %s: %v, want InvalidInput", loc, err)
		}
	}
	if _, err := c.DescribeTable(ctx, []string{"bad"}, nil); store.ErrorCode(err) != store.CodeTableNotFound {
		t.Fatalf("a refused location declared or registered a table: %v", err)
	}

	// A drop deletes every object of the table in the background; until
	// it has, the location cannot be declared again.
	d, err := c.DropTable(ctx, []string{"t"})
	if err != nil || d.TransactionID == "" {
		t.Fatalf("drop = %+v, %v", d, err)
	}
	if tx := waitTransaction(t, c, d.TransactionID); tx.Status != "Succeeded" {
		t.Fatalf("deletion %+v", tx)
	}
	if keys := e.g.Keys(t, "lance", strings.TrimPrefix(info.Location, "s3://lance/")+"/"); len(keys) != 0 {
		t.Fatalf("after the drop: %v", keys)
	}
	if _, err := c.DeclareTable(ctx, []string{"again"}, &client.DeclareTableOptions{Location: info.Location}); err != nil {
		t.Fatalf("declare at the freed location: %v", err)
	}
}

// TestCommitRaceObjectStore races 16 clients over HTTP to commit each next
// version of a table on S3: one wins each round, the others get code 14,
// the final manifest is the winner's (never overwritten), and the chain has
// no gap or duplicate.
func TestCommitRaceObjectStore(t *testing.T) {
	e := startS3(t, vend.None)
	ctx := t.Context()
	info, err := e.s.Client.DeclareTable(ctx, []string{"race"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	const racers = 16
	for v := int64(1); v <= 4; v++ {
		errs := make([]error, racers)
		paths := make([]string, racers)
		for i := range racers {
			paths[i] = key(info.Location, fmt.Sprintf("_versions/%d.manifest-racer%02d", v, i))
			e.g.Put(t, "lance", paths[i], fmt.Appendf(nil, "v%d by %d", v, i))
		}
		var wg sync.WaitGroup
		for i := range racers {
			wg.Go(func() {
				_, _, errs[i] = e.s.Client.CreateTableVersion(ctx, []string{"race"}, client.VersionCommit{Version: v, ManifestPath: paths[i]})
			})
		}
		wg.Wait()
		winner := -1
		for i, err := range errs {
			switch {
			case err == nil && winner >= 0:
				t.Fatalf("version %d: racers %d and %d both won", v, winner, i)
			case err == nil:
				winner = i
			case !errors.Is(err, client.ErrConcurrentModification):
				t.Fatalf("racer %d: %v", i, err)
			}
		}
		if winner < 0 {
			t.Fatalf("version %d: nobody won", v)
		}
		b, ok := e.g.Get(t, "lance", key(info.Location, "_versions/"+manifestname.V2.FileName(v)))
		if !ok || string(b) != fmt.Sprintf("v%d by %d", v, winner) {
			t.Fatalf("version %d manifest %q, want the winner's (%d)", v, b, winner)
		}
		// The losers' staged manifests stay for them; the winner's went.
		for i, p := range paths {
			if _, there := e.g.Get(t, "lance", p); there == (i == winner) {
				t.Fatalf("version %d: racer %d's staged manifest there=%v", v, i, there)
			}
		}
	}
	var got []int64
	for v, err := range e.s.Client.ListTableVersions(ctx, []string{"race"}, "") {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, v.Version)
	}
	if !slices.Equal(got, []int64{1, 2, 3, 4}) {
		t.Fatalf("chain %v", got)
	}
}

// TestObjectStoreDown commits while the object store is unreachable: the
// answer is code 17 and no version is recorded.
func TestObjectStoreDown(t *testing.T) {
	e := startS3(t, vend.None)
	ctx := t.Context()
	info, err := e.s.Client.DeclareTable(ctx, []string{"t"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	staged := e.stageS3(t, info.Location, 1, "one")
	e.g.Stop()
	_, _, err = e.s.Client.CreateTableVersion(ctx, []string{"t"}, client.VersionCommit{Version: 1, ManifestPath: staged})
	if store.ErrorCode(err) != store.CodeServiceUnavailable {
		t.Fatalf("commit with the store down: %v, want ServiceUnavailable", err)
	}
	if v, err := e.s.Client.LatestTableVersion(ctx, []string{"t"}, ""); v != nil || err != nil {
		t.Fatalf("after the failed commit the latest version is %+v, %v", v, err)
	}
}

// TestVendingModes checks what declare and describe hand out for a table on
// object storage in each mode, and that vend_credentials=false withholds
// credentials.
func TestVendingModes(t *testing.T) {
	for _, mode := range []vend.Mode{vend.None, vend.Static} {
		t.Run(string(mode), func(t *testing.T) {
			e := startS3(t, mode)
			public := map[string]string{"aws_endpoint": e.g.Endpoint, "aws_region": e.g.Region, "allow_http": "true"}
			want := public
			if mode == vend.Static {
				want = e.g.Options()
			}
			for _, tc := range []struct {
				path string
				body map[string]any
				want map[string]string
			}{
				{"/v1/table/t/declare", map[string]any{}, want},
				{"/v1/table/t/describe", map[string]any{}, want},
				{"/v1/table/t/describe", map[string]any{"vend_credentials": true}, want},
				{"/v1/table/t/describe", map[string]any{"vend_credentials": false}, public},
			} {
				got := postJSON(t, e.s, tc.path, tc.body)
				var r struct {
					StorageOptions map[string]string `json:"storage_options"`
				}
				if err := json.Unmarshal(got, &r); err != nil || !maps.Equal(r.StorageOptions, tc.want) {
					t.Fatalf("%s %v: storage_options %v, want %v", tc.path, tc.body, r.StorageOptions, tc.want)
				}
			}
		})
	}
}

// postJSON posts body to the server and returns the answer's body, failing
// the test unless it is 200.
func postJSON(t *testing.T, s *apitest.Server, path string, body any) []byte {
	t.Helper()
	b, _ := json.Marshal(body)
	res, err := s.HTTP.Post(s.URL+path, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %d %s", path, res.StatusCode, out)
	}
	return out
}

// TestVendedCredentialsFollowTheRole: with STS vending and access control,
// a principal that may not write gets credentials whose session policy
// only reads the table's files; one that may write gets read-write ones.
func TestVendedCredentialsFollowTheRole(t *testing.T) {
	g := s3test.Start(t)
	g.CreateBucket(t, "lance")
	sts := ststest.Start(t, g.AccessKey, g.SecretKey, g.Region, ststest.Issued{AccessKeyID: "ASIATEMP", SecretAccessKey: "temp-secret", SessionToken: "temp-token"})
	v, err := vend.New(t.Context(), vend.Config{Mode: vend.STS, Options: g.Options(), RoleARN: "arn:aws:iam::123456789012:role/lance", STSEndpoint: sts.URL})
	if err != nil {
		t.Fatal(err)
	}
	s := apitest.Start(t, apitest.Options{APIKeys: []string{"admin-key"}, Warehouse: "s3://lance/wh", StorageOptions: g.Options(),
		Tune: func(c *server.Config) {
			c.Vendor = v
			c.Auth = &auth.Config{Keys: []auth.KeyConfig{
				{Name: "reader", Key: "read-key", Role: "read"},
				{Name: "writer", Key: "write-key", Role: "write"},
			}}
		}})
	for _, tc := range []struct {
		name, path, key string
		writes          bool
	}{
		{"WriterDeclares", "/v1/table/t/declare", "write-key", true},
		{"ReaderDescribes", "/v1/table/t/describe", "read-key", false},
		{"WriterDescribes", "/v1/table/t/describe", "write-key", true},
		{"AdminDescribes", "/v1/table/t/describe", "admin-key", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(sts.Requests())
			status, body, _ := s.Do(t, http.MethodPost, tc.path, http.Header{"X-Api-Key": {tc.key}, "Content-Type": {"application/json"}}, []byte(`{"vend_credentials":true}`))
			if status != http.StatusOK {
				t.Fatalf("%d %s", status, body)
			}
			var r struct {
				StorageOptions map[string]string `json:"storage_options"`
			}
			if err := json.Unmarshal(body, &r); err != nil || r.StorageOptions[objstore.KeySessionToken] != "temp-token" {
				t.Fatalf("storage_options %v (%v)", r.StorageOptions, err)
			}
			reqs := sts.Requests()
			if len(reqs) > before {
				// A new session: its policy is the one these credentials carry.
				writes := strings.Contains(reqs[len(reqs)-1].Policy, "s3:PutObject")
				if writes != tc.writes {
					t.Fatalf("the credentials write: %v, want %v; policy %s", writes, tc.writes, reqs[len(reqs)-1].Policy)
				}
			}
		})
	}
	// One session for the writers (reused), one read-only for the reader.
	var readOnly, readWrite int
	for _, r := range sts.Requests() {
		if strings.Contains(r.Policy, "s3:PutObject") {
			readWrite++
		} else {
			readOnly++
		}
	}
	if readOnly != 1 || readWrite != 1 {
		t.Fatalf("%d read-only and %d read-write sessions, want 1 and 1", readOnly, readWrite)
	}
}
