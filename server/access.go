package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/labstack/echo/v4"

	"github.com/lancens/lancens/auth"
	"github.com/lancens/lancens/gen"
	"github.com/lancens/lancens/store"
)

// Access control has one decision point: authorize, below. authenticate
// finds the principal behind a request's credentials first (401, code 16,
// before the request body is read); authorize then decides, from the
// operation and the identifiers the request names, whether that principal
// may go on (403, code 15). Handlers run only after that decision, and
// resolveID lets them use only identifiers the decision approved.

const (
	contextPrincipal = "lancens.principal"
	// contextApproved holds the identifiers authorize approved.
	contextApproved = "lancens.approved_ids"
)

// target says where an operation's objects are named.
type target int

const (
	// inPathNamespace: {id} names a namespace.
	inPathNamespace target = iota
	// inPathTable: {id} names a table (or a view).
	inPathTable
	// inPathTransaction: {id} names a transaction, which belongs to the
	// table it was about.
	inPathTransaction
	// inBody: the request body names tables (batch operations).
	inBody
	// nowhere: the operation names no object; its answer is filtered.
	nowhere
)

// rule is what an operation needs.
type rule struct {
	role   auth.Role
	target target
	// listing: the operation lists what lies in its namespace. A scoped
	// principal may list a namespace on the way to its scopes, and sees
	// only what leads there.
	listing bool
	// topLevelAdmin: on a top-level namespace (or the root) the operation
	// needs RoleAdmin.
	topLevelAdmin bool
	// unscopedOnly: a scoped principal may not call it at all.
	unscopedOnly bool
}

var (
	readNamespace  = rule{role: auth.RoleRead, target: inPathNamespace}
	listNamespace  = rule{role: auth.RoleRead, target: inPathNamespace, listing: true}
	alterNamespace = rule{role: auth.RoleWrite, target: inPathNamespace, topLevelAdmin: true}
	readTable      = rule{role: auth.RoleRead, target: inPathTable}
	writeTable     = rule{role: auth.RoleWrite, target: inPathTable}
)

// operationRules classifies every operation of the spec. New refuses to
// start when the spec has an operation this table lacks (or the table one
// the spec lacks), so no route is served unclassified.
var operationRules = map[string]rule{
	"CreateNamespace":   alterNamespace,
	"ListNamespaces":    listNamespace,
	"DescribeNamespace": readNamespace,
	"DropNamespace":     alterNamespace,
	"NamespaceExists":   readNamespace,
	"ListTables":        listNamespace,
	"ListAllTables":     {role: auth.RoleRead, target: nowhere},

	"RegisterTable":             writeTable,
	"DescribeTable":             readTable,
	"TableExists":               readTable,
	"DropTable":                 writeTable,
	"DeregisterTable":           writeTable,
	"RestoreTable":              writeTable,
	"RenameTable":               writeTable, // and the new identifier, see targets
	"UpdateTableSchemaMetadata": writeTable,
	"DeclareTable":              writeTable,
	"CreateTable":               writeTable,
	"GetTableStats":             readTable,

	"ListTableVersions":        readTable,
	"CreateTableVersion":       writeTable,
	"DescribeTableVersion":     readTable,
	"BatchDeleteTableVersions": writeTable,
	"BatchCreateTableVersions": {role: auth.RoleWrite, target: inBody},
	"BatchCommitTables":        {role: auth.RoleWrite, target: inBody},

	"AlterTableAlterColumns":    writeTable,
	"UpdateFieldMetadata":       writeTable,
	"AlterTableDropColumns":     writeTable,
	"AlterTableAddColumns":      writeTable,
	"AlterTableBackfillColumns": writeTable,

	"InsertIntoTable":       writeTable,
	"MergeInsertIntoTable":  writeTable,
	"UpdateTable":           writeTable,
	"DeleteFromTable":       writeTable,
	"QueryTable":            readTable,
	"CountTableRows":        readTable,
	"ExplainTableQueryPlan": readTable,
	"AnalyzeTableQueryPlan": readTable,

	"CreateMaterializedView":  writeTable,
	"RefreshMaterializedView": writeTable,

	"CreateTableIndex":        writeTable,
	"CreateTableScalarIndex":  writeTable,
	"ListTableIndices":        readTable,
	"DescribeTableIndexStats": readTable,
	"DropTableIndex":          writeTable,

	"ListTableTags":      readTable,
	"GetTableTagVersion": readTable,
	"CreateTableTag":     writeTable,
	"DeleteTableTag":     writeTable,
	"UpdateTableTag":     writeTable,

	"ListTableBranches": readTable,
	"CreateTableBranch": writeTable,
	"DeleteTableBranch": writeTable,

	"DescribeTransaction": {role: auth.RoleRead, target: inPathTransaction},
	"AlterTransaction":    {role: auth.RoleWrite, target: inPathTransaction},
}

// checkRules returns an error naming the operations of doc that
// operationRules does not classify, and the classified ones doc lacks.
func checkRules(doc *openapi3.T) error {
	seen := map[string]bool{}
	var missing []string
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			seen[op.OperationID] = true
			if _, ok := operationRules[op.OperationID]; !ok {
				missing = append(missing, op.OperationID)
			}
		}
	}
	var extra []string
	for id := range operationRules {
		if !seen[id] {
			extra = append(extra, id)
		}
	}
	if len(missing)+len(extra) > 0 {
		slices.Sort(missing)
		slices.Sort(extra)
		return fmt.Errorf("access rules: operations without a rule %q, rules without an operation %q", missing, extra)
	}
	return nil
}

// routeRule classifies a route the spec does not have.
type routeRule struct {
	op string // names the route in refusals
	rule
}

// routeRules classifies the routes lancens serves beyond the spec, by
// method and Echo path: the remote dialect's, lancens's own extensions
// (optimize removes old versions: a write), /metrics, which needs
// a principal that may read everything (the metrics cover every
// namespace), /auth/principal, which any principal may read, and the MCP
// endpoint, which any principal may call (each of its tools is decided as
// the operation it performs). New refuses to start with a route that is
// neither an operation of the spec nor here.
var routeRules = map[string]routeRule{
	"POST /v1/table/:id/index/:index_name/prewarm": {"PrewarmTableIndex", readTable},
	"POST /v1/table/:id/optimize":                  {"OptimizeTable", writeTable},
	"GET /metrics":                                 {"ReadMetrics", rule{role: auth.RoleRead, target: nowhere, unscopedOnly: true}},
	"GET " + PrincipalPath:                         {routePrincipal, rule{role: auth.RoleRead, target: nowhere}},
	"POST " + MCPPath:                              {routeMCP, rule{role: auth.RoleRead, target: nowhere}},
}

// checkRoutes returns an error naming the routes of routes that are
// neither an operation of the spec (ops) nor in routeRules.
func checkRoutes(routes []*echo.Route, ops operationTable) error {
	var unclassified []string
	for _, r := range routes {
		key := r.Method + " " + r.Path
		if ops[key] == nil && routeRules[key].op == "" {
			unclassified = append(unclassified, key)
		}
	}
	if len(unclassified) > 0 {
		slices.Sort(unclassified)
		return fmt.Errorf("access rules: routes without a rule %q", unclassified)
	}
	return nil
}

// authenticate finds the principal behind the request's credentials (an
// x-api-key header, or an "Authorization: Bearer" API key or JWT) and
// keeps it for authorize. With no credentials configured every request
// is auth.Anonymous. (The health checks never get here: ServeHTTP
// answers them first, without credentials.) Returns
// Unauthenticated (16) for missing or invalid credentials.
func (s *Server) authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		creds := auth.Credentials{APIKey: req.Header.Get("X-Api-Key")}
		if h := req.Header.Get(echo.HeaderAuthorization); len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
			creds.Bearer = strings.TrimSpace(h[7:])
		}
		p, err := s.auth.Authenticate(req.Context(), creds)
		if err != nil {
			if store.ErrorCode(err) == store.CodeUnauthenticated {
				opID := ""
				if op, _, ok := s.ruleOf(c); ok {
					opID = op.id
				}
				s.logRefusal(c, "", opID, err)
			}
			return err
		}
		c.Set(contextPrincipal, p)
		return next(c)
	}
}

// principalOf returns the principal authenticate found (the effective
// one, inside a database, once authorize ran).
func principalOf(c echo.Context) (auth.Principal, bool) {
	p, ok := c.Get(contextPrincipal).(auth.Principal)
	return p, ok
}

// authorize is the decision point of access control. For an operation of
// the spec it checks the principal's role against the operation's rule
// and every identifier the request names against the principal's scopes
// (inside a routed database, the principal is first confined to it). A
// refusal is PermissionDenied (15) whether or not the object exists: the
// decision reads only the request, so it reveals nothing. A transaction is
// the exception: its place is not in its identifier, so one of a table
// outside the principal's scopes answers TransactionNotFound (10), as a
// missing one does. Routes beyond the spec have their rules in
// routeRules.
func (s *Server) authorize(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		p, _ := principalOf(c) // always there after authenticate; none may do nothing
		op, r, ok := s.ruleOf(c)
		if !ok {
			return unrouted(c, next)
		}
		if err := s.decide(c, p, op, r); err != nil {
			if code := store.ErrorCode(err); code == store.CodePermissionDenied || code == store.CodeTransactionNotFound {
				s.logRefusal(c, p.Name, op.id, err)
			}
			return err
		}
		return s.inDatabase(c, next)
	}
}

// ruleOf returns the operation the request's route serves and its access
// rule: an operation of the spec, or a route of routeRules (its op naming
// the route). It returns false for a route without a rule, and for a
// request no route serves.
func (s *Server) ruleOf(c echo.Context) (*operation, rule, bool) {
	if op := s.ops.lookup(c); op != nil {
		return op, operationRules[op.id], true
	}
	if rr, ok := routeRules[c.Request().Method+" "+c.Path()]; ok {
		return &operation{id: rr.op}, rr.rule, true
	}
	return nil, rule{}, false
}

// decide returns nil when principal p may call op (with rule r) on what
// the request names, and keeps the approved identifiers and the effective
// principal for the handler. Returns PermissionDenied (15) or, for a
// transaction outside the scopes, TransactionNotFound (10) when it may
// not, and InvalidInput (13) for a request whose identifiers cannot be
// read.
func (s *Server) decide(c echo.Context, p auth.Principal, op *operation, r rule) error {
	if r.unscopedOnly && p.Scoped {
		return denied(p, fmt.Sprintf("call %s, which covers every namespace", op.id))
	}
	if db, ok := databaseOf(c); ok {
		if err := checkDatabaseName(c, db); err != nil {
			return err
		}
		p = p.Within([]string{db})
		c.Set(contextPrincipal, p)
	}
	var ids [][]string
	if p.Scoped || r.topLevelAdmin {
		// Only then do identifiers matter: requests of other
		// principals need not be read twice.
		var err error
		if ids, err = s.targets(c, op, r); err != nil {
			return err
		}
	}
	role := r.role
	for _, id := range ids {
		if r.topLevelAdmin && len(id) <= 1 {
			role = auth.RoleAdmin
		}
	}
	if !p.May(role) {
		return denied(p, fmt.Sprintf("call %s, which needs role %s", op.id, role))
	}
	if p.Scoped {
		if err := s.checkScopes(c, p, r, ids); err != nil {
			return err
		}
		c.Set(contextApproved, ids)
	}
	return nil
}

// logRefusal writes the audit line of a refused request: who (principal,
// empty when unauthenticated), what (operation, empty for a request no
// route serves),
// the answer's code and why. Credentials are never in it: refusals name
// principals, and authentication errors say what is wrong with a
// credential, not what it is.
func (s *Server) logRefusal(c echo.Context, principal, opID string, err error) {
	reason := err.Error()
	var se *store.Error
	if errors.As(err, &se) {
		reason = se.Message
	}
	s.log.LogAttrs(c.Request().Context(), slog.LevelInfo, "access refused",
		slog.String("request_id", requestID(c)),
		slog.String("principal", principal),
		slog.String("operation", opID),
		slog.String("path", c.Request().URL.Path),
		slog.Int("code", int(store.ErrorCode(err))),
		slog.String("reason", reason))
}

// unrouted answers a request no rule covers as Echo answers one it has no
// route for: 405 when the path has routes for other methods (next is then
// Echo's own handler for that), 404 otherwise. A handler without an access
// rule never runs, even if one was registered after New checked the routes.
func unrouted(c echo.Context, next echo.HandlerFunc) error {
	if c.Get(echo.ContextKeyHeaderAllow) != nil {
		return next(c)
	}
	return echo.ErrNotFound
}

// checkScopes returns PermissionDenied (15) when an identifier lies
// outside the principal's scopes (for a listing: neither inside nor on the
// way to them), and TransactionNotFound (10) for a transaction outside
// them.
func (s *Server) checkScopes(c echo.Context, p auth.Principal, r rule, ids [][]string) error {
	if r.target == inPathTransaction {
		return s.checkTransaction(c, p, ids[0])
	}
	for _, id := range ids {
		if !p.Covers(id) && !(r.listing && p.Leads(id)) {
			return denied(p, fmt.Sprintf("touch %s, which lies outside its namespaces", displayID(id)))
		}
	}
	return nil
}

// inDatabase runs next, after checking that the database the request is
// routed to, if any, exists. Returns NamespaceNotFound (1) for a missing
// database.
func (s *Server) inDatabase(c echo.Context, next echo.HandlerFunc) error {
	if db, ok := databaseOf(c); ok {
		if err := s.store.NamespaceExists(c.Request().Context(), []string{db}); err != nil {
			if store.ErrorCode(err) == store.CodeNamespaceNotFound {
				return store.Errorf(store.CodeNamespaceNotFound, "database %s not found", db)
			}
			return err
		}
	}
	return next(c)
}

func denied(p auth.Principal, what string) error {
	return store.Errorf(store.CodePermissionDenied, "%s (role %s) may not %s", p.Name, p.Role, what)
}

func displayID(id []string) string {
	if len(id) == 0 {
		return "the root namespace"
	}
	return strings.Join(id, DefaultDelimiter)
}

// targets returns the identifiers a request names: the {id} of the path
// as handlers read it (and the body's id, when it names the same object
// under one of the path's readings, see pathReadings);
// for a rename also the new identifier; for a materialized view also its
// source table; for a batch every table of the body. Returns InvalidInput
// (13) for a malformed path or body.
func (s *Server) targets(c echo.Context, op *operation, r rule) ([][]string, error) {
	if r.target == nowhere {
		return nil, nil
	}
	var body []byte
	if op.body == bodyJSON && c.Request().GetBody != nil {
		rd, err := c.Request().GetBody()
		if err != nil {
			return nil, err
		}
		if body, err = io.ReadAll(rd); err != nil {
			return nil, err
		}
	}
	if r.target == inBody {
		return bodyTables(op.id, body)
	}
	d := delimiterOf(optionalQuery(c, "delimiter"))
	readings, err := pathReadings(c, d)
	if err != nil {
		return nil, err
	}
	id := readings[0]
	ids := [][]string{id}
	if len(body) == 0 {
		return ids, nil
	}
	// Each field is read on its own, as the operation's handler reads it
	// (Go's decoding: keys in any case, other fields ignored whatever
	// their type), so a stray field of another operation cannot hide the
	// ones this one acts on. A field the handler would refuse is refused
	// here too.
	var named struct {
		ID *[]string `json:"id"`
	}
	if err := json.Unmarshal(body, &named); err != nil {
		return nil, store.Errorf(store.CodeInvalidInput, "request body: id: %v", err)
	}
	if named.ID != nil && !slices.Equal(*named.ID, id) && slices.ContainsFunc(readings, func(r []string) bool { return slices.Equal(r, *named.ID) }) {
		// The handler reads the body's id, which names the path's object
		// under another reading of the path.
		ids = append(ids, *named.ID)
	}
	switch op.id {
	case "CreateMaterializedView":
		// The view reads its source table, named in source_query as the
		// view's handler reads it (see viewQuery); a source_query that
		// names none is stored, and reads nothing.
		var view struct {
			SourceQuery string `json:"source_query"`
		}
		if err := json.Unmarshal(body, &view); err != nil {
			return nil, store.Errorf(store.CodeInvalidInput, "request body: source_query: %v", err)
		}
		if source := viewSource(view.SourceQuery); len(source) > 0 {
			ids = append(ids, source)
		}
	case "RenameTable":
		var rename struct {
			NewNamespaceID *[]string `json:"new_namespace_id"`
			NewTableName   string    `json:"new_table_name"`
		}
		if err := json.Unmarshal(body, &rename); err != nil {
			return nil, store.Errorf(store.CodeInvalidInput, "request body: %v", err)
		}
		for _, from := range slices.Clone(ids) {
			if len(from) == 0 {
				continue
			}
			ns := from[:len(from)-1]
			if rename.NewNamespaceID != nil {
				ns = *rename.NewNamespaceID
			}
			ids = append(ids, append(slices.Clone(ns), rename.NewTableName))
		}
	}
	return ids, nil
}

// optionalQuery returns query parameter name of the request, nil when
// absent or empty. It reads the URL itself: Echo's c.QueryParam caches the
// query on first use, and middleware rewrites it later (remote page
// tokens, list bodies) for the handlers' parameter binding to see.
func optionalQuery(c echo.Context, name string) *string {
	if v := c.Request().URL.Query().Get(name); v != "" {
		return &v
	}
	return nil
}

// bodyTables returns the tables a batch operation's body names. Entries
// without an id name nothing (the handler refuses them).
func bodyTables(opID string, body []byte) ([][]string, error) {
	var ids [][]string
	add := func(id *[]string) {
		if id != nil && len(*id) > 0 {
			ids = append(ids, *id)
		}
	}
	switch opID {
	case "BatchCreateTableVersions":
		var req gen.BatchCreateTableVersionsRequest
		if err := json.Unmarshal(body, &req); err != nil {
			return nil, invalidInput("request body: %v", err)
		}
		for _, e := range req.Entries {
			if len(e.Id) > 0 {
				ids = append(ids, e.Id)
			}
		}
	case "BatchCommitTables":
		var req gen.BatchCommitTablesRequest
		if err := json.Unmarshal(body, &req); err != nil {
			return nil, invalidInput("request body: %v", err)
		}
		for _, op := range req.Operations {
			if op.DeclareTable != nil {
				add(op.DeclareTable.Id)
			}
			if op.CreateTableVersion != nil {
				add(op.CreateTableVersion.Id)
			}
			if op.DeleteTableVersions != nil {
				add(op.DeleteTableVersions.Id)
			}
			if op.DeregisterTable != nil {
				add(op.DeregisterTable.Id)
			}
		}
	default:
		return nil, fmt.Errorf("access rules: %s has no reader of its body's tables", opID)
	}
	return ids, nil
}

// checkTransaction lets a scoped principal reach a transaction only when
// it was about a table the principal covers: the table's identifier now
// (transactions follow their table through renames), or, for a table that
// is gone, the identifier the transaction recorded. Returns
// TransactionNotFound (10) otherwise, as for a missing transaction (which
// is left to the handler).
func (s *Server) checkTransaction(c echo.Context, p auth.Principal, id []string) error {
	tx, err := s.store.DescribeTransaction(c.Request().Context(), id)
	if err != nil {
		if store.ErrorCode(err) == store.CodeTransactionNotFound {
			return nil
		}
		return err
	}
	table := tx.Table
	if table == nil && tx.Properties["table"] != "" {
		table = strings.Split(tx.Properties["table"], DefaultDelimiter)
	}
	if table == nil || !p.Covers(table) {
		return store.Errorf(store.CodeTransactionNotFound, "transaction %s not found", displayID(id))
	}
	return nil
}

// checkApproved returns PermissionDenied (15) when a handler resolves an
// identifier authorize did not approve (for a scoped principal: an
// unscoped one may touch any identifier). It cannot happen while targets
// reads identifiers as handlers do; it is the guard that keeps it so.
func checkApproved(c echo.Context, id []string) error {
	approved, ok := c.Get(contextApproved).([][]string)
	if !ok {
		return nil // an unscoped principal, or list bodies checking their id before authorize
	}
	for _, a := range approved {
		if slices.Equal(a, id) {
			return nil
		}
	}
	p, _ := principalOf(c)
	return denied(p, "touch "+displayID(id)+", which the request did not name plainly")
}

// visible filters a listing to what the principal may see (keep). It
// lists page after page (list) until a page has something to show or the
// listing ends, so that a scoped principal is not handed empty pages.
func visible[T any](c echo.Context, pg store.Page, list func(store.Page) ([]T, string, error), keep func(auth.Principal, T) bool) ([]T, string, error) {
	p, ok := principalOf(c)
	for {
		items, next, err := list(pg)
		if err != nil || !ok || !p.Scoped {
			return items, next, err
		}
		kept := items[:0]
		for _, it := range items {
			if keep(p, it) {
				kept = append(kept, it)
			}
		}
		if len(kept) > 0 || next == "" {
			return kept, next, nil
		}
		pg.Token = next
	}
}

// logPrincipal names the request's principal in its log line; never its
// credentials.
func logPrincipal(c echo.Context) slog.Attr {
	if p, ok := principalOf(c); ok {
		return slog.String("principal", p.Name)
	}
	return slog.Attr{}
}
