package server_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/lancens/lancens/auth"
	"github.com/lancens/lancens/internal/arrowtest"
	"github.com/lancens/lancens/server"
)

// remoteDo sends a LanceDB remote-dialect request for database db (none
// when empty) with key, and returns the status, the code of an error
// answer (-1 for none) and the body.
func remoteDo(t *testing.T, e *accessEnv, method, path, db, key string, body []byte) (int, int, []byte) {
	t.Helper()
	h := http.Header{"User-Agent": {"LanceDB-Node-Client/0.39.0"}, "X-Api-Key": {key}}
	if db != "" {
		h.Set("X-Lancedb-Database", db)
	}
	if body != nil {
		h.Set("Content-Type", "application/json")
		if body[0] != '{' {
			h.Set("Content-Type", "application/vnd.apache.arrow.stream")
		}
	}
	status, out, _ := e.s.Do(t, method, path, h, body)
	code := -1
	if status >= 300 {
		code = apitestCode(out)
	}
	return status, code, out
}

// tableNames lists the tables of database db the way the SDK's
// tableNames() does.
func tableNames(t *testing.T, e *accessEnv, db, key string) (int, []string) {
	t.Helper()
	status, _, body := remoteDo(t, e, http.MethodGet, "/v1/table/", db, key, nil)
	var resp struct{ Tables []string }
	if status == http.StatusOK {
		if err := json.Unmarshal(body, &resp); err != nil {
			t.Fatal(err)
		}
	}
	return status, resp.Tables
}

// TestDatabases: with RouteDatabases, a remote-dialect request for
// database NAME is served inside top-level namespace NAME: each database
// has its own tables under the same names, a key scoped to one database
// cannot reach another, identifiers in answers are relative to the
// database, and a missing database is 404 code 1.
func TestDatabases(t *testing.T) {
	e := startAccessEnv(t, func(c *server.Config) {
		c.RouteDatabases = true
		c.Auth.Keys = append(c.Auth.Keys, auth.KeyConfig{Name: "beta-writer", Key: "key-write-beta", Role: "write", Namespaces: []string{"beta"}})
	})
	rows := arrowBody(t)
	for _, db := range []struct{ name, key string }{{"alpha", "key-write-alpha"}, {"beta", "key-write-beta"}} {
		if status, code, body := remoteDo(t, e, http.MethodPost, "/v1/table/docs/create/", db.name, db.key, rows); status != 200 {
			t.Fatalf("create in %s: %d code %d %s", db.name, status, code, body)
		}
	}
	if status, code, body := remoteDo(t, e, http.MethodPost, "/v1/table/only_alpha/create/", "alpha", "key-write-alpha", rows); status != 200 {
		t.Fatalf("create: %d code %d %s", status, code, body)
	}
	// The catalog holds the tables inside the databases' namespaces.
	if _, all, _ := listNames(t, e, "/v1/table", "key-read"); !slices.Equal(all, []string{"alpha$docs", "alpha$only_alpha", "beta$docs"}) {
		t.Fatalf("all tables: %q", all)
	}
	for _, tc := range []struct {
		name, db, key string
		status, code  int
		want          []string
	}{
		{"Alpha", "alpha", "key-write-alpha", 200, -1, []string{"docs", "only_alpha"}},
		{"Beta", "beta", "key-write-beta", 200, -1, []string{"docs"}},
		{"UnscopedKey", "beta", "key-read", 200, -1, []string{"docs"}},
		{"OtherDatabase", "beta", "key-write-alpha", 403, 15, nil},
		{"MissingDatabase", "gamma", "key-admin", 404, 1, nil},
		{"MissingDatabaseOutOfScope", "gamma", "key-write-alpha", 403, 15, nil},
		{"DelimiterInName", "al$pha", "key-admin", 400, 13, nil},
		{"NoCredentials", "alpha", "", 401, 16, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, names := tableNames(t, e, tc.db, tc.key)
			if status != tc.status {
				t.Fatalf("status %d, want %d", status, tc.status)
			}
			if status == 200 && !slices.Equal(names, tc.want) {
				t.Fatalf("got %q, want %q", names, tc.want)
			}
		})
	}
	// tableNames({limit, startAfter}) pages by name inside the database.
	status, code, body := remoteDo(t, e, http.MethodGet, "/v1/table/?limit=1&page_token=docs", "alpha", "key-write-alpha", nil)
	var page struct{ Tables []string }
	if status != 200 || json.Unmarshal(body, &page) != nil || !slices.Equal(page.Tables, []string{"only_alpha"}) {
		t.Fatalf("page after docs: %d code %d %s", status, code, body)
	}
	// Each database answers for its own table of the same name.
	for _, db := range []struct {
		name, key string
		rows      float64
	}{{"alpha", "key-write-alpha", 2}, {"beta", "key-write-beta", 1}} {
		if db.name == "alpha" {
			if status, code, body := remoteDo(t, e, http.MethodPost, "/v1/table/docs/insert/", "alpha", db.key, rows); status != 200 {
				t.Fatalf("insert: %d code %d %s", status, code, body)
			}
		}
		status, code, body := remoteDo(t, e, http.MethodPost, "/v1/table/docs/count_rows/", db.name, db.key, []byte(`{}`))
		var n float64
		if status != 200 || json.Unmarshal(body, &n) != nil || n != db.rows {
			t.Fatalf("count in %s: %d code %d %s, want %v", db.name, status, code, body, db.rows)
		}
	}
	// Answers name objects relative to the database.
	status, _, body = remoteDo(t, e, http.MethodPost, "/v1/table/docs/describe/", "alpha", "key-write-alpha", []byte(`{}`))
	var desc struct{ Namespace []string }
	if status != 200 || json.Unmarshal(body, &desc) != nil || len(desc.Namespace) != 0 {
		t.Fatalf("describe: %d %s", status, body)
	}
	status, _, body = remoteDo(t, e, http.MethodPost, "/v1/table", "alpha", "key-read-alpha", []byte(`{}`))
	var all struct{ Tables []string }
	if status != 200 || json.Unmarshal(body, &all) != nil || !slices.Equal(all.Tables, []string{"docs", "only_alpha"}) {
		t.Fatalf("list all tables in alpha: %d %s", status, body)
	}
	// Namespaces and batch commits inside a database.
	if status, code, body := remoteDo(t, e, http.MethodPost, "/v1/namespace/team/create/", "alpha", "key-write-alpha", []byte(`{}`)); status != 200 {
		t.Fatalf("create namespace: %d code %d %s", status, code, body)
	}
	status, _, body = remoteDo(t, e, http.MethodGet, "/v1/namespace/$/list", "alpha", "key-write-alpha", nil)
	var nss struct{ Namespaces []string }
	if status != 200 || json.Unmarshal(body, &nss) != nil || !slices.Equal(nss.Namespaces, []string{"team"}) {
		t.Fatalf("namespaces of alpha: %d %s", status, body)
	}
	batch := []byte(`{"operations":[{"declare_table":{"id":["team","declared"],"location":"s3://lancens-access/alpha/team/declared"}}]}`)
	if status, code, body := remoteDo(t, e, http.MethodPost, "/v1/table/batch-commit", "alpha", "key-write-alpha", batch); status != 200 {
		t.Fatalf("batch commit: %d code %d %s", status, code, body)
	}
	status, _, body = remoteDo(t, e, http.MethodPost, "/v1/table/team$declared/drop/", "alpha", "key-write-alpha", nil)
	var dropped struct{ ID []string }
	if status != 200 || json.Unmarshal(body, &dropped) != nil || !slices.Equal(dropped.ID, []string{"team", "declared"}) {
		t.Fatalf("drop: %d %s", status, body)
	}
	// A read-only key in its database reads and cannot write.
	if status, code, _ := remoteDo(t, e, http.MethodPost, "/v1/table/docs/drop/", "alpha", "key-read-alpha", nil); status != 403 || code != 15 {
		t.Fatalf("read-only drop: %d code %d", status, code)
	}
}

// TestDatabasesNotRouted: without RouteDatabases the database header only
// marks the dialect: tables live in the root namespace, whatever database
// the SDK names.
func TestDatabasesNotRouted(t *testing.T) {
	e := startAccessEnv(t, nil)
	if status, code, body := remoteDo(t, e, http.MethodPost, "/v1/table/docs/create/", "alpha", "key-write", arrowBody(t)); status != 200 {
		t.Fatalf("create: %d code %d %s", status, code, body)
	}
	for _, db := range []string{"alpha", "beta"} {
		if status, names := tableNames(t, e, db, "key-read"); status != 200 || !slices.Equal(names, []string{"docs"}) {
			t.Fatalf("%s: %d %q", db, status, names)
		}
	}
	if _, all, _ := listNames(t, e, "/v1/table", "key-read"); !slices.Equal(all, []string{"docs"}) {
		t.Fatalf("all tables: %q", all)
	}
}

// TestDatabaseMaterializedView checks that inside a routed database a
// materialized view reads a table of the same database: the source table
// its source_query names is placed in the database like every other
// identifier (before, the view was refused: its source was looked up in
// the root).
func TestDatabaseMaterializedView(t *testing.T) {
	e := startAccessEnv(t, func(c *server.Config) { c.RouteDatabases = true })
	if status, code, body := remoteDo(t, e, http.MethodPost, "/v1/table/docs/create/", "alpha", "key-write-alpha", arrowBody(t)); status != 200 {
		t.Fatalf("create: %d code %d %s", status, code, body)
	}
	var schema bytes.Buffer
	w := ipc.NewWriter(&schema, ipc.WithSchema(arrowtest.Schema("id", arrow.PrimitiveTypes.Int64)))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	body, err := json.Marshal(map[string]any{
		"kind":          "query",
		"source_query":  `{"id": ["docs"], "columns": {"column_names": ["id"]}, "k": 0}`,
		"output_schema": base64.StdEncoding.EncodeToString(schema.Bytes()),
	})
	if err != nil {
		t.Fatal(err)
	}
	status, code, out := remoteDo(t, e, http.MethodPost, "/v1/materialized_view/ids/create", "alpha", "key-write-alpha", body)
	if status/100 != 2 {
		t.Fatalf("create view: %d code %d %s", status, code, out)
	}
	// The view lies in the database, next to its source.
	if status, code, out := remoteDo(t, e, http.MethodPost, "/v1/table/ids/describe/", "alpha", "key-write-alpha", []byte(`{}`)); status != 200 {
		t.Fatalf("describe the view: %d code %d %s", status, code, out)
	}
	if _, all, _ := listNames(t, e, "/v1/table", "key-read"); !slices.Equal(all, []string{"alpha$docs", "alpha$ids"}) {
		t.Fatalf("all tables: %q", all)
	}
}
