package server

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/labstack/echo/v4"

	"github.com/lancens/lancens/auth"
	"github.com/lancens/lancens/coord"
	"github.com/lancens/lancens/engine"
	"github.com/lancens/lancens/gen"
	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/store/sqlite"
	"github.com/lancens/lancens/warehouse"
)

// TestEveryOperationHasARule walks the operations of the embedded spec:
// each must have an access rule, and each rule an operation; a spec with
// an operation more is refused.
func TestEveryOperationHasARule(t *testing.T) {
	doc, err := gen.GetSpec()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			n++
			r, ok := operationRules[op.OperationID]
			if !ok {
				t.Errorf("%s %s (%s) has no access rule", method, path, op.OperationID)
				continue
			}
			if r.role < auth.RoleRead || r.role > auth.RoleAdmin {
				t.Errorf("%s: role %v", op.OperationID, r.role)
			}
		}
	}
	if n != len(operationRules) {
		t.Errorf("%d operations in the spec, %d rules", n, len(operationRules))
	}
	if err := checkRules(doc); err != nil {
		t.Fatal(err)
	}
	more := *doc
	more.Paths = openapi3.NewPaths()
	for path, item := range doc.Paths.Map() {
		more.Paths.Set(path, item)
	}
	more.Paths.Set("/v1/table/{id}/new_thing", &openapi3.PathItem{Post: &openapi3.Operation{OperationID: "NewThing"}})
	if err := checkRules(&more); err == nil {
		t.Fatal("a spec with an unclassified operation passed")
	}
}

// TestHandlersUseOnlyApprovedIDs: resolveID refuses an identifier the
// decision point did not approve.
func TestHandlersUseOnlyApprovedIDs(t *testing.T) {
	c := echo.New().NewContext(httptest.NewRequest("POST", "/", nil), httptest.NewRecorder())
	c.Set(contextPrincipal, auth.Principal{Name: "p", Role: auth.RoleWrite})
	if err := checkApproved(c, []string{"b"}); err != nil {
		t.Fatalf("before a decision: %v", err)
	}
	c.Set(contextApproved, [][]string{{"a"}, {"a", "t"}})
	for _, tc := range []struct {
		id   []string
		code store.Code
	}{
		{[]string{"a"}, -1},
		{[]string{"a", "t"}, -1},
		{[]string{"b"}, store.CodePermissionDenied},
		{[]string{}, store.CodePermissionDenied},
	} {
		if got := store.ErrorCode(checkApproved(c, tc.id)); got != tc.code {
			t.Errorf("%q: code %d, want %d", tc.id, got, tc.code)
		}
	}
}

// TestNewNeedsServices: the services are built by whoever runs the server
// (cmd/lancens), never by New: a configuration without them is refused.
func TestNewNeedsServices(t *testing.T) {
	db, wh := testStore(t)
	if _, err := New(Config{Store: db, Warehouse: wh}); err == nil || !strings.Contains(err.Error(), "services") {
		t.Fatalf("New without services = %v, want an error naming them", err)
	}
}

// testStore returns a database, with the Lance engine serving its tables,
// and a warehouse in a temporary directory.
func testStore(t *testing.T) (store.ManagedBackend, *warehouse.Warehouse) {
	t.Helper()
	dir := t.TempDir()
	db, err := sqlite.Open(t.Context(), filepath.Join(dir, "lancens.db"), sqlite.Options{Synchronous: "NORMAL"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	wh, err := warehouse.Open(filepath.Join(dir, "warehouse"))
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(engine.Options{Catalog: db, Warehouse: wh})
	if err != nil {
		t.Fatal(err)
	}
	return engine.WithBackend(db, e), wh
}

// newTestServer returns a server with admin key "admin", on a database
// and a warehouse in a temporary directory.
func newTestServer(t *testing.T) *Server {
	t.Helper()
	db, wh := testStore(t)
	s, err := New(Config{Store: db, Warehouse: wh, Services: coord.NewServices(coord.ServicesConfig{Store: db, Warehouse: wh}), APIKeys: []string{"admin"}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestEveryRouteHasARule enumerates the routes registered on the Echo
// instance of a running server: each must be an operation of the spec
// with a rule, or a route of routeRules, and every operation of the spec
// must be served. A route without a rule fails checkRoutes (New refuses
// to start), and the decision point never runs its handler.
func TestEveryRouteHasARule(t *testing.T) {
	s := newTestServer(t)
	ops := 0
	for _, r := range s.echo.Routes() {
		key := r.Method + " " + r.Path
		if op := s.ops[key]; op != nil {
			rl, ok := operationRules[op.id]
			if !ok {
				t.Errorf("%s (%s) has no access rule", key, op.id)
			} else if rl.role < auth.RoleRead || rl.role > auth.RoleAdmin {
				t.Errorf("%s (%s): role %v", key, op.id, rl.role)
			}
			ops++
			continue
		}
		if rr, ok := routeRules[key]; !ok || rr.op == "" || rr.role < auth.RoleRead || rr.role > auth.RoleAdmin {
			t.Errorf("%s: no access rule (%+v)", key, rr)
		}
	}
	if ops != len(operationRules) {
		t.Errorf("%d routes serve operations of the spec, %d operations have rules", ops, len(operationRules))
	}
	if err := checkRoutes(s.echo.Routes(), s.ops); err != nil {
		t.Fatal(err)
	}

	ran := false
	s.echo.POST("/v1/table/:id/compact", func(c echo.Context) error {
		ran = true
		return c.JSON(http.StatusOK, struct{}{})
	})
	if err := checkRoutes(s.echo.Routes(), s.ops); err == nil {
		t.Fatal("a route without a rule passed")
	}
	req := httptest.NewRequest(http.MethodPost, "/v1/table/t/compact", strings.NewReader("{}"))
	req.Header.Set("x-api-key", "admin")
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	if ran || rec.Code != http.StatusNotFound {
		t.Fatalf("a route without a rule was served: ran=%v, status %d %s", ran, rec.Code, rec.Body)
	}
}

// TestUnroutedRequests: requests no route serves keep Echo's answers under
// access control: 404 for an unknown path, 405 for a known path with
// another method.
func TestUnroutedRequests(t *testing.T) {
	s := newTestServer(t)
	for _, tc := range []struct {
		method, path string
		status       int
	}{
		{http.MethodPost, "/v1/nothing/here", http.StatusNotFound},
		{http.MethodDelete, "/v1/table/t/describe", http.StatusMethodNotAllowed},
	} {
		req := httptest.NewRequest(tc.method, tc.path, nil)
		req.Header.Set("x-api-key", "admin")
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		if rec.Code != tc.status {
			t.Errorf("%s %s: %d, want %d: %s", tc.method, tc.path, rec.Code, tc.status, rec.Body)
		}
	}
}
