package server_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/lancens/lancens/auth"
	"github.com/lancens/lancens/client"
	"github.com/lancens/lancens/gen"
	"github.com/lancens/lancens/internal/apitest"
	"github.com/lancens/lancens/internal/contract"
	"github.com/lancens/lancens/server"
	"github.com/lancens/lancens/store"
)

// The access-control tests run a server whose keys cover every role, with
// and without a scope, and build each operation's valid request with the
// conformance kit (internal/contract), inside namespace "alpha" (in the
// scoped keys' scope) or "beta" (outside it).

// setupKey is the admin key the tests build their objects with.
const setupKey = "setup-admin"

// accessPrincipal is one key of the test server.
type accessPrincipal struct {
	name   string // also its key's name
	key    string
	role   auth.Role
	scoped bool // scoped to namespace "alpha"
}

var accessPrincipals = []accessPrincipal{
	{"read", "key-read", auth.RoleRead, false},
	{"write", "key-write", auth.RoleWrite, false},
	{"admin", "key-admin", auth.RoleAdmin, false},
	{"read-alpha", "key-read-alpha", auth.RoleRead, true},
	{"write-alpha", "key-write-alpha", auth.RoleWrite, true},
	{"admin-alpha", "key-admin-alpha", auth.RoleAdmin, true},
}

// readOperations are the operations the read role may call, as the issue
// lists them: describe, list, exists, query, count, version and tag reads.
// Every other operation needs the write role. Written out here, apart
// from the server's own rules, so that the tests check those rules.
var readOperations = map[string]bool{
	"ListNamespaces": true, "DescribeNamespace": true, "NamespaceExists": true, "ListTables": true, "ListAllTables": true,
	"DescribeTable": true, "TableExists": true, "GetTableStats": true,
	"ListTableVersions": true, "DescribeTableVersion": true,
	"QueryTable": true, "CountTableRows": true, "ExplainTableQueryPlan": true, "AnalyzeTableQueryPlan": true,
	"ListTableIndices": true, "DescribeTableIndexStats": true,
	"ListTableTags": true, "GetTableTagVersion": true, "ListTableBranches": true,
	"DescribeTransaction": true,
}

// accessEnv is a test server with access control, and the means to build
// requests and to see whether anything changed.
type accessEnv struct {
	s      *apitest.Server
	whPath string
	kit    contract.Config
	// conn reads the database file on one connection, so that PRAGMA
	// data_version tells whether anyone committed in between.
	conn *sql.Conn
}

func accessConfig() *auth.Config {
	cfg := &auth.Config{}
	for _, p := range accessPrincipals {
		// The external root's prefix of each key's namespaces is granted
		// to it (see placement.go).
		k := auth.KeyConfig{Name: p.name, Key: p.key, Role: p.role.String(), Locations: []string{"s3://lancens-access"}}
		if p.scoped {
			k.Namespaces = []string{"alpha"}
			k.Locations = []string{"s3://lancens-access/alpha"}
		}
		cfg.Keys = append(cfg.Keys, k)
	}
	return cfg
}

// startAccessEnv starts a server with the keys of accessPrincipals (and
// setupKey, an admin key of --api-key), tune adjusting its configuration,
// and makes namespaces alpha and beta.
func startAccessEnv(t *testing.T, tune func(*server.Config)) *accessEnv {
	t.Helper()
	dir := t.TempDir()
	e := &accessEnv{whPath: filepath.Join(dir, "warehouse")}
	e.s = apitest.Start(t, apitest.Options{APIKeys: []string{setupKey}, DBPath: filepath.Join(dir, "lancens.db"), Warehouse: e.whPath,
		ExternalRoots: []string{"s3://lancens-access"}, Tune: func(c *server.Config) {
			c.Auth = accessConfig()
			if tune != nil {
				tune(c)
			}
		}})
	v, err := contract.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	e.kit = contract.Config{URL: e.s.URL, Transport: &contract.Transport{Client: e.s.HTTP, APIKey: setupKey, Validator: v}}
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "lancens.db")+"?mode=ro&_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if e.conn, err = db.Conn(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.conn.Close() })
	for _, ns := range []string{"alpha", "beta"} {
		e.namespace(t, ns)
	}
	return e
}

// namespace creates namespace id (as an admin).
func (e *accessEnv) namespace(t *testing.T, id ...string) {
	t.Helper()
	if _, err := e.s.Client.CreateNamespace(t.Context(), id, nil); err != nil {
		t.Fatal(err)
	}
}

// request builds the valid request of op in a new namespace under
// [top, place] (created if need be).
func (e *accessEnv) request(t *testing.T, op, top, place string) *http.Request {
	t.Helper()
	if _, err := e.s.Client.CreateNamespace(t.Context(), []string{top, place}, &client.CreateNamespaceOptions{Mode: client.ModeExistOK}); err != nil {
		t.Fatal(err)
	}
	kit := e.kit
	kit.Namespace = []string{top, place}
	kit.LocationRoot = "s3://lancens-access/" + top + "/" + place
	req, err := contract.ValidRequest(t, kit, op)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// send sends a copy of req with key (none when empty) and returns the
// status and the Lance code of an error answer (-1 for none).
func (e *accessEnv) send(t *testing.T, req *http.Request, key string) (int, int) {
	t.Helper()
	r := req.Clone(t.Context())
	if req.GetBody != nil {
		var err error
		if r.Body, err = req.GetBody(); err != nil {
			t.Fatal(err)
		}
	}
	if key != "" {
		r.Header.Set("x-api-key", key)
	}
	res, err := e.s.HTTP.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	code := -1
	if res.StatusCode >= 300 {
		code = apitest.ErrorCode(body)
	}
	return res.StatusCode, code
}

// state is a fingerprint of everything lancens keeps: the database's data
// version (which moves with every commit) and the warehouse's files.
type state struct {
	dataVersion int64
	files       string
}

// state waits until no background job is queued or running, then takes
// the fingerprint.
func (e *accessEnv) state(t *testing.T) state {
	t.Helper()
	ctx := t.Context()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var pending int
		if err := e.conn.QueryRowContext(ctx, `SELECT count(*) FROM transactions WHERE status IN ('Queued', 'Running')`).Scan(&pending); err != nil {
			t.Fatal(err)
		}
		if pending == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d background jobs still pending", pending)
		}
		time.Sleep(10 * time.Millisecond)
	}
	var st state
	if err := e.conn.QueryRowContext(ctx, `PRAGMA data_version`).Scan(&st.dataVersion); err != nil {
		t.Fatal(err)
	}
	var files []string
	_ = filepath.WalkDir(e.whPath, func(path string, d fs.DirEntry, err error) error {
		if err == nil {
			info, err := d.Info()
			if err == nil {
				files = append(files, fmt.Sprintf("%s %d %d", path, info.Size(), info.ModTime().UnixNano()))
			}
		}
		return nil
	})
	st.files = strings.Join(files, "\n")
	return st
}

// specOperations returns the operationIds of the embedded spec, sorted.
func specOperations(t *testing.T) []string {
	t.Helper()
	doc, err := gen.GetSpec()
	if err != nil {
		t.Fatal(err)
	}
	var ops []string
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			ops = append(ops, op.OperationID)
		}
	}
	sort.Strings(ops)
	return ops
}

// allowed is the matrix's oracle: whether p may call op on an object in
// top-level namespace top.
func allowed(p accessPrincipal, op, top string) bool {
	need := auth.RoleWrite
	if readOperations[op] {
		need = auth.RoleRead
	}
	if p.role < need {
		return false
	}
	return !p.scoped || top == "alpha" || op == "ListAllTables"
}

// TestAccessMatrix sends the valid request of every operation of the spec
// with every key (each role, unscoped and scoped to "alpha"), without
// credentials and with a wrong key, at an object inside alpha and one in
// beta. Without credentials or with a wrong key the answer is 401 code 16;
// a role too weak or an object outside the key's scope is 403 code 15
// (a transaction outside the scope: 404 code 10, as a missing one), and
// then nothing changed (no commit, no file); otherwise the request
// succeeds. Reads change nothing either. The health checks need no
// credentials and /metrics (when the server has the route) needs a key
// that may read everything.
func TestAccessMatrix(t *testing.T) {
	e := startAccessEnv(t, nil)
	ops := specOperations(t)
	if len(ops) != 54 {
		t.Fatalf("the spec has %d operations; the matrix expects 54", len(ops))
	}
	for _, op := range ops {
		t.Run(op, func(t *testing.T) {
			for _, top := range []string{"alpha", "beta"} {
				shared := e.request(t, op, top, "shared")
				for _, bad := range []struct{ name, key string }{{"NoCredentials", ""}, {"WrongKey", "key-nobody"}} {
					t.Run(bad.name+"/"+top, func(t *testing.T) {
						before := e.state(t)
						if status, code := e.send(t, shared, bad.key); status != http.StatusUnauthorized || code != int(store.CodeUnauthenticated) {
							t.Fatalf("want 401 code 16, got %d code %d", status, code)
						}
						if after := e.state(t); after != before {
							t.Fatal("an unauthenticated request changed the state")
						}
					})
				}
				for _, p := range accessPrincipals {
					t.Run(p.name+"/"+top, func(t *testing.T) {
						if !allowed(p, op, top) {
							// A transaction outside the scope is not
							// found, as a missing one; a weak role is
							// refused.
							wantStatus, wantCode := http.StatusForbidden, store.CodePermissionDenied
							if strings.HasSuffix(op, "Transaction") && allowed(accessPrincipal{role: p.role}, op, top) {
								wantStatus, wantCode = http.StatusNotFound, store.CodeTransactionNotFound
							}
							before := e.state(t)
							if status, code := e.send(t, shared, p.key); status != wantStatus || code != int(wantCode) {
								t.Fatalf("want %d code %d, got %d code %d", wantStatus, wantCode, status, code)
							}
							if after := e.state(t); after != before {
								t.Fatal("a refused request changed the state")
							}
							return
						}
						req := shared
						if !readOperations[op] {
							req = e.request(t, op, top, p.name)
						}
						before := e.state(t)
						status, code := e.send(t, req, p.key)
						if status >= 300 {
							t.Fatalf("want success, got %d code %d", status, code)
						}
						// Reads change nothing; every write commits (which
						// shows that the fingerprint sees commits).
						changed := e.state(t) != before
						switch {
						case readOperations[op] && changed:
							t.Fatal("a read changed the state")
						case !readOperations[op] && !changed:
							t.Fatal("a write changed nothing")
						}
					})
				}
			}
		})
	}
	t.Run("Operations", func(t *testing.T) {
		get := func(path string) *http.Request {
			req, err := http.NewRequest(http.MethodGet, e.s.URL+path, nil)
			if err != nil {
				t.Fatal(err)
			}
			return req
		}
		// The health checks need no credentials and are refused to no
		// one.
		for _, path := range []string{"/healthz", "/readyz"} {
			for _, key := range append([]string{"", "key-nobody"}, keysOf(accessPrincipals)...) {
				if status, code := e.send(t, get(path), key); status == http.StatusUnauthorized || status == http.StatusForbidden {
					t.Errorf("%s with key %q: got %d code %d", path, key, status, code)
				}
			}
		}
		// /metrics needs credentials, and a key without a scope.
		served := slices.Contains(e.s.API.Routes(), "GET /metrics")
		if status, code := e.send(t, get("/metrics"), ""); status != http.StatusUnauthorized || code != int(store.CodeUnauthenticated) {
			t.Errorf("/metrics without credentials: got %d code %d", status, code)
		}
		for _, p := range accessPrincipals {
			status, code := e.send(t, get("/metrics"), p.key)
			switch {
			case !served:
				if status != http.StatusNotFound {
					t.Errorf("/metrics is no route, yet %s got %d code %d", p.name, status, code)
				}
			case p.scoped:
				if status != http.StatusForbidden || code != int(store.CodePermissionDenied) {
					t.Errorf("/metrics with %s: want 403 code 15, got %d code %d", p.name, status, code)
				}
			case status != http.StatusOK:
				t.Errorf("/metrics with %s: want 200, got %d code %d", p.name, status, code)
			}
		}
	})
}

func keysOf(ps []accessPrincipal) []string {
	var keys []string
	for _, p := range ps {
		keys = append(keys, p.key)
	}
	return keys
}

// TestTopLevelNamespacesNeedAdmin: creating or dropping a top-level
// namespace (or the root) needs the admin role, and a scoped admin only
// inside its scope; deeper namespaces need the write role.
func TestTopLevelNamespacesNeedAdmin(t *testing.T) {
	e := startAccessEnv(t, nil)
	do := func(t *testing.T, verb, id, key string) (int, int) {
		req, err := http.NewRequest(http.MethodPost, e.s.URL+"/v1/namespace/"+id+"/"+verb, strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		return e.send(t, req, key)
	}
	for _, tc := range []struct {
		name, verb, id, key string
		status, code        int
	}{
		{"WriterCreatesTopLevel", "create", "gamma", "key-write", 403, 15},
		{"ScopedAdminCreatesTopLevelElsewhere", "create", "gamma", "key-admin-alpha", 403, 15},
		{"AdminCreatesTopLevel", "create", "gamma", "key-admin", 200, -1},
		{"WriterCreatesNested", "create", "gamma$team", "key-write", 200, -1},
		{"ScopedWriterCreatesNested", "create", "alpha$team", "key-write-alpha", 200, -1},
		{"ScopedWriterCreatesNestedElsewhere", "create", "gamma$other", "key-write-alpha", 403, 15},
		{"WriterDropsNested", "drop", "gamma$team", "key-write", 200, -1},
		{"WriterDropsTopLevel", "drop", "gamma", "key-write", 403, 15},
		{"ScopedAdminDropsTopLevelElsewhere", "drop", "gamma", "key-admin-alpha", 403, 15},
		{"WriterDropsRoot", "drop", "%24", "key-write", 403, 15},
		{"AdminDropsTopLevel", "drop", "gamma", "key-admin", 200, -1},
		{"ScopedAdminCreatesItsOwn", "create", "alpha", "key-admin-alpha", 409, int(store.CodeNamespaceAlreadyExists)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if status, code := do(t, tc.verb, tc.id, tc.key); status != tc.status || code != tc.code {
				t.Fatalf("want %d code %d, got %d code %d", tc.status, tc.code, status, code)
			}
		})
	}
}

// listNames lists path with key and returns the names of the answer's
// field ("namespaces" or "tables").
func listNames(t *testing.T, e *accessEnv, path, key string) (int, []string, string) {
	t.Helper()
	status, body, _ := e.s.Do(t, http.MethodGet, path, http.Header{"X-Api-Key": {key}}, nil)
	if status != http.StatusOK {
		return status, nil, ""
	}
	var resp struct {
		Namespaces []string `json:"namespaces"`
		Tables     []string `json:"tables"`
		PageToken  *string  `json:"page_token"`
	}
	if err := json.Unmarshal(body, &resp); err != nil {
		t.Fatal(err)
	}
	next := ""
	if resp.PageToken != nil {
		next = *resp.PageToken
	}
	return status, append(resp.Namespaces, resp.Tables...), next
}

// TestListingsFiltered: listings show a scoped principal only what it may
// see: the way to its scopes, and what lies inside them.
func TestListingsFiltered(t *testing.T) {
	e := startAccessEnv(t, func(c *server.Config) {
		c.Auth.Keys = append(c.Auth.Keys, auth.KeyConfig{Name: "team", Key: "key-team", Role: "read", Namespaces: []string{"beta$team", "delta"}})
	})
	for _, ns := range [][]string{{"beta", "team"}, {"beta", "other"}, {"gamma"}, {"delta"}, {"alpha", "sub"}} {
		e.namespace(t, ns...)
	}
	for _, id := range [][]string{{"alpha", "t1"}, {"alpha", "sub", "t2"}, {"beta", "t3"}, {"beta", "team", "t4"}, {"gamma", "t5"}, {"t6"}} {
		if _, _, err := e.s.DB.DeclareTable(t.Context(), id, store.TableDeclaration{Location: "s3://lancens-access/" + strings.Join(id, "/")}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name, path, key string
		status          int
		want            []string
	}{
		{"RootUnscoped", "/v1/namespace/%24/list", "key-read", 200, []string{"alpha", "beta", "delta", "gamma"}},
		{"RootScoped", "/v1/namespace/%24/list", "key-read-alpha", 200, []string{"alpha"}},
		{"RootDeepScope", "/v1/namespace/%24/list", "key-team", 200, []string{"beta", "delta"}},
		{"OnTheWay", "/v1/namespace/beta/list", "key-team", 200, []string{"team"}},
		{"InsideScope", "/v1/namespace/alpha/list", "key-read-alpha", 200, []string{"sub"}},
		{"OutsideScope", "/v1/namespace/beta/list", "key-read-alpha", 403, nil},
		{"TablesInsideScope", "/v1/namespace/alpha/table/list", "key-read-alpha", 200, []string{"t1"}},
		{"TablesOnTheWay", "/v1/namespace/beta/table/list", "key-team", 200, []string{}},
		{"TablesOfRootOnTheWay", "/v1/namespace/%24/table/list", "key-team", 200, []string{}},
		{"TablesOutsideScope", "/v1/namespace/gamma/table/list", "key-team", 403, nil},
		{"AllTablesUnscoped", "/v1/table", "key-read", 200, []string{"alpha$sub$t2", "alpha$t1", "beta$t3", "beta$team$t4", "gamma$t5", "t6"}},
		{"AllTablesScoped", "/v1/table", "key-read-alpha", 200, []string{"alpha$sub$t2", "alpha$t1"}},
		{"AllTablesDeepScope", "/v1/table", "key-team", 200, []string{"beta$team$t4"}},
		{"AllTablesPagedSkipsTheInvisible", "/v1/table?limit=1", "key-team", 200, []string{"beta$team$t4"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, names, _ := listNames(t, e, tc.path, tc.key)
			if status != tc.status {
				t.Fatalf("status %d, want %d", status, tc.status)
			}
			if tc.status == 200 && !slices.Equal(append([]string{}, names...), tc.want) {
				t.Fatalf("got %q, want %q", names, tc.want)
			}
		})
	}
	// Paging through the root with a limit of 1 gives the visible names,
	// one a page.
	var all []string
	path := "/v1/namespace/%24/list?limit=1"
	for range 10 {
		_, names, next := listNames(t, e, path, "key-team")
		all = append(all, names...)
		if next == "" {
			break
		}
		path = "/v1/namespace/%24/list?limit=1&page_token=" + next
	}
	if !slices.Equal(all, []string{"beta", "delta"}) {
		t.Fatalf("paged: got %q", all)
	}
}
