package server

import (
	"net/http/httptest"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/labstack/echo/v4"

	"github.com/lancens/lancens/auth"
	"github.com/lancens/lancens/gen"
	"github.com/lancens/lancens/store"
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

// TestEveryRouteHasARule: a route beyond the spec without a rule in
// routeRules stops the server from starting.
func TestEveryRouteHasARule(t *testing.T) {
	doc, err := gen.GetSpec()
	if err != nil {
		t.Fatal(err)
	}
	ops := newOperationTable(doc)
	e := echo.New()
	gen.RegisterHandlers(e, (*Server)(nil))
	e.POST("/v1/table/:id/index/:index_name/prewarm", func(echo.Context) error { return nil })
	if err := checkRoutes(e.Routes(), ops); err != nil {
		t.Fatal(err)
	}
	e.POST("/v1/table/:id/compact", func(echo.Context) error { return nil })
	if err := checkRoutes(e.Routes(), ops); err == nil {
		t.Fatal("a route without a rule passed")
	}
}
