package server

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/lancens/lancens/store"
)

// The LanceDB SDK's remote client (connect("db://…", {hostOverride})) speaks
// the LanceDB Cloud dialect of this API. This file is the one place that
// knows it: requests are translated into the spec's form before they are
// validated and handled, and answers back after. Handlers and the store see
// only the spec.
//
// A request is in the remote dialect when it carries the x-lancedb-database
// header (sent whenever hostOverride is set) or the SDK's User-Agent.

// phalanxVersion is the LanceDB Cloud version lancens answers as: 0.3.0
// lets the SDK send structured full-text queries and several query vectors
// in one request, without the multipart uploads of 0.4.0.
const phalanxVersion = "0.3.0"

func isRemote(r *http.Request) bool {
	return r.Header.Get("X-Lancedb-Database") != "" || strings.HasPrefix(r.Header.Get("User-Agent"), "LanceDB-")
}

var remoteTableOp = regexp.MustCompile(`^/v1/table/([^/]+)/`)

// remotePaths rewrites remote-dialect paths before routing: the root table
// listing, and literal "+" in table identifiers (the SDK does not escape
// them, and the spec's clients mean a space by an unescaped "+"). A request
// with an explicit delimiter=$ keeps its "+": the SDK's remote client sends
// a delimiter only when it is not $, while clients generated from the spec,
// which form-encode their paths (the SDK's namespace client among them,
// sometimes configured with the dialect's headers), always send one.
func remotePaths(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		if !isRemote(req) {
			return next(c)
		}
		u := req.URL
		if req.Method == http.MethodGet && (u.Path == "/v1/table/" || u.Path == "/v1/table") {
			// tableNames(): the tables of the root namespace.
			u.Path, u.RawPath = "/v1/namespace/$/table/list", ""
		}
		if p := u.EscapedPath(); strings.Contains(p, "+") && u.Query().Get("delimiter") != DefaultDelimiter {
			// The identifier as sent is kept: a body id may still settle
			// that "+" meant a space (resolveID).
			if m := remoteTableOp.FindStringSubmatchIndex(p); m != nil {
				c.Set(contextSentID, p[m[2]:m[3]])
				p = p[:m[2]] + strings.ReplaceAll(p[m[2]:m[3]], "+", "%2B") + p[m[3]:]
			}
			if strings.HasPrefix(p, "/v1/namespace/") {
				parts := strings.SplitN(p, "/", 5)
				c.Set(contextSentID, parts[3])
				parts[3] = strings.ReplaceAll(parts[3], "+", "%2B")
				p = strings.Join(parts, "/")
			}
			if dec, err := url.PathUnescape(p); err == nil {
				u.Path, u.RawPath = dec, p
			}
		}
		return next(c)
	}
}

// dialectRoutes registers the routes of the remote dialect that the spec
// lacks (see IsDialectRoute). Their errors are ErrorResponses as everywhere;
// there is no spec to validate their requests against.
func (s *Server) dialectRoutes(e *echo.Echo) {
	e.POST(prewarmRoute, s.PrewarmTableIndex)
}

// prewarmRoute is the Echo route of the dialect's prewarm operation, and
// routePrewarm its label in the metrics.
const (
	prewarmRoute = "/v1/table/:id/index/:index_name/prewarm"
	routePrewarm = "PrewarmTableIndex"
)

// prewarmPath matches the escaped paths of the prewarm route, with or
// without the dialect's trailing slash.
var prewarmPath = regexp.MustCompile(`^/v1/table/[^/]+/index/[^/]+/prewarm/?$`)

// IsDialectRoute reports whether a request (its method and escaped path) is
// for one of the routes lancens serves beyond the spec for the LanceDB
// remote dialect: POST /v1/table/{id}/index/{name}/prewarm. They answer an
// empty JSON object on success and an ErrorResponse otherwise.
func IsDialectRoute(method, escapedPath string) bool {
	return method == http.MethodPost && prewarmPath.MatchString(escapedPath)
}

// remoteBodies translates the JSON bodies of remote-dialect requests into
// the spec's shapes, and the answers back. It runs after routing, before
// validation.
func (s *Server) remoteBodies(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		op := s.ops.lookup(c)
		if !isRemote(req) || op == nil {
			return next(c)
		}
		var raw []byte
		if op.body == bodyJSON && req.Body != nil && req.Body != http.NoBody {
			var err error
			if raw, err = readBody(req.Body, s.cfg.MaxJSONBody); err != nil {
				return err
			}
			if out, ok := translateRequest(op.id, raw); ok {
				raw = out
			}
			if db, ok := databaseOf(c); ok {
				raw = intoDatabase(op.id, raw, db)
			}
			req.Body = io.NopCloser(bytes.NewReader(raw))
			req.ContentLength = int64(len(raw))
		}
		switch op.id {
		case "CreateTableIndex", "CreateTableScalarIndex":
			c.Set(contextReplaceIndex, true)
		case "ListTableTags":
			c.Set(contextAllPages, true)
		case "MergeInsertIntoTable":
			if ms := req.Header.Get("X-Request-Timeout-Ms"); ms != "" {
				q := req.URL.Query()
				q.Set("timeout", ms+"ms")
				req.URL.RawQuery = q.Encode()
			}
		}
		w := &capture{ResponseWriter: c.Response().Writer}
		if db, ok := databaseOf(c); ok {
			w.database, w.delimiter = db, delimiterOf(optionalQuery(c, "delimiter"))
		}
		c.Response().Writer = w
		c.Response().Header().Set("Phalanx-Version", phalanxVersion)
		err := next(c)
		if err != nil {
			// Render the error here, so its answer is translated too.
			c.Error(err)
		}
		return w.finish(op.id)
	}
}

// remoteFreshness enforces the freshness headers of a remote-dialect read
// (see checkFreshness). It reads the table, so it runs after access
// control has decided.
func (s *Server) remoteFreshness(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		op := s.ops.lookup(c)
		if op == nil || !isRemote(req) || !freshReads[op.id] {
			return next(c)
		}
		var body []byte
		if op.body == bodyJSON && req.GetBody != nil {
			rd, err := req.GetBody()
			if err != nil {
				return err
			}
			if body, err = io.ReadAll(rd); err != nil {
				return err
			}
		}
		if err := s.checkFreshness(c, op.id, body); err != nil {
			return err
		}
		return next(c)
	}
}

// freshReads are the reads the SDK sends its freshness headers with.
var freshReads = map[string]bool{
	"DescribeTable": true, "QueryTable": true, "CountTableRows": true, "ExplainTableQueryPlan": true,
	"AnalyzeTableQueryPlan": true, "ListTableIndices": true, "DescribeTableIndexStats": true, "GetTableStats": true,
	"ListTableVersions": true, "ListTableTags": true, "GetTableTagVersion": true, "ListTableBranches": true,
}

// checkFreshness enforces the SDK's read-freshness headers on a read of a
// table's latest version: x-lancedb-min-version (the highest version the
// client's writes made) and x-lancedb-min-read-version (the highest its
// reads saw). Every read here starts from the latest committed state, so a
// read begun after those versions were made sees them: no wait is needed,
// and a table whose latest version is older is not the table the client
// knew (it was dropped and created again). x-lancedb-min-timestamp (no
// answer from a cache older than that) holds for the same reason. A read of
// a version the request names is left alone, as the SDK drops the headers
// for time travel. Returns InvalidInput (13) for a header that is not a
// version number and TableVersionNotFound (11) for a table behind it;
// failures to find the table are left to the operation to report.
func (s *Server) checkFreshness(c echo.Context, opID string, body []byte) error {
	if !freshReads[opID] {
		return nil
	}
	var need uint64
	var header string
	for _, name := range []string{"x-lancedb-min-version", "x-lancedb-min-read-version"} {
		v := c.Request().Header.Get(name)
		if v == "" {
			continue
		}
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return invalidInput("%s %q is not a version number", name, v)
		}
		if n > need {
			need, header = n, name
		}
	}
	var req struct {
		Version *int64
		Branch  *string
		Query   struct{ Version *int64 }
	}
	if need == 0 || (json.Unmarshal(body, &req) == nil && (req.Version != nil || req.Query.Version != nil)) {
		return nil
	}
	var delimiter *string
	if d := c.QueryParam("delimiter"); d != "" {
		delimiter = &d
	}
	id, err := resolveID(c, delimiter, nil)
	if err != nil {
		return nil
	}
	latest, err := s.store.DescribeVersion(c.Request().Context(), id, deref(req.Branch), nil)
	if err != nil || uint64(latest.Version) >= need {
		return nil
	}
	return store.Errorf(store.CodeTableVersionNotFound,
		"table %s is at version %d, older than version %d this client has seen of it (%s): it was replaced since",
		strings.Join(id, delimiterOf(delimiter)), latest.Version, need, header)
}

// capture holds back a JSON answer so it can be translated; other answers
// (Arrow) pass straight through.
type capture struct {
	http.ResponseWriter
	status  int
	buf     bytes.Buffer
	passing bool
	// database, when set, is taken out of the answer's identifiers.
	database, delimiter string
}

func (w *capture) WriteHeader(status int) {
	h := w.ResponseWriter.Header()
	if v := h.Get(headerTableVersion); v != "" {
		h.Set("X-Lancedb-Version", v)
	}
	if strings.HasPrefix(h.Get("Content-Type"), "application/json") {
		w.status = status
		return
	}
	w.passing = true
	w.ResponseWriter.WriteHeader(status)
}

func (w *capture) Write(b []byte) (int, error) {
	if w.passing {
		return w.ResponseWriter.Write(b)
	}
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
		if w.passing {
			return w.ResponseWriter.Write(b)
		}
	}
	return w.buf.Write(b)
}

func (w *capture) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok && w.passing {
		f.Flush()
	}
}

// finish translates and writes a held-back answer.
func (w *capture) finish(opID string) error {
	if w.passing || w.status == 0 {
		return nil
	}
	status, body := w.status, w.buf.Bytes()
	if status >= 400 {
		status = remoteErrorStatus(status, body)
	} else {
		if out, ok := translateResponse(opID, body, w.ResponseWriter.Header()); ok {
			body = out
		}
		if w.database != "" {
			body = outOfDatabase(opID, body, w.database, w.delimiter)
		}
	}
	w.ResponseWriter.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.ResponseWriter.WriteHeader(status)
	_, err := w.ResponseWriter.Write(body)
	return err
}

// remoteErrorStatus adapts error statuses to how the SDK reads them. The
// SDK reads every 404 on a table operation as "Table '<name>' was not
// found", dropping the message, so a column a request names that the table
// lacks (code 12) answers 400, the status LanceDB Cloud uses for it and
// the one the SDK passes on with the message ("400 Bad Request: column …
// not found"). It retries 409, so conflicts that retrying cannot fix
// become 400 too; and it knows an existing table on create only as a 400
// mentioning "already exists". Concurrent modification (14) stays 409, to
// be retried.
func remoteErrorStatus(status int, body []byte) int {
	var er struct{ Code int }
	if json.Unmarshal(body, &er) != nil {
		return status
	}
	switch code := store.Code(er.Code); {
	case code == store.CodeTableColumnNotFound:
		return http.StatusBadRequest
	case status != http.StatusConflict, code == store.CodeConcurrentModification:
		return status
	}
	return http.StatusBadRequest
}

// translateRequest rewrites a remote request body into the spec's shape.
func translateRequest(opID string, raw []byte) ([]byte, bool) {
	var body map[string]json.RawMessage
	if json.Unmarshal(raw, &body) != nil || body == nil {
		return nil, false
	}
	dropNulls(body)
	switch opID {
	case "QueryTable", "AnalyzeTableQueryPlan":
		translateQuery(body)
	case "ExplainTableQueryPlan":
		var q map[string]json.RawMessage
		if json.Unmarshal(body["query"], &q) == nil && q != nil {
			dropNulls(q)
			translateQuery(q)
			body["query"] = marshal(q)
		}
	case "CreateTableIndex", "CreateTableScalarIndex":
		if m, ok := body["metric_type"]; ok {
			if _, has := body["distance_type"]; !has {
				body["distance_type"] = m
			}
			delete(body, "metric_type")
		}
	case "RenameTable":
		if ns, ok := body["new_namespace"]; ok {
			body["new_namespace_id"] = ns
			delete(body, "new_namespace")
		}
	case "CreateNamespace", "DropNamespace":
		for _, k := range []string{"mode", "behavior"} {
			var v string
			if json.Unmarshal(body[k], &v) == nil {
				body[k] = marshal(strings.Trim(v, `"`))
			}
		}
	case "AlterTableAlterColumns":
		translateAlterations(body)
	}
	return marshal(body), true
}

func dropNulls(m map[string]json.RawMessage) {
	for k, v := range m {
		if string(bytes.TrimSpace(v)) == "null" {
			delete(m, k)
		}
	}
}

func marshal(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// translateQuery rewrites the bare query forms: vector as an array (empty:
// no vector search), columns as an array or an alias object, and
// full_text_query as {columns, query: string} or {query: FtsQuery}.
func translateQuery(q map[string]json.RawMessage) {
	if raw, ok := q["vector"]; ok {
		var single []float32
		var multi [][]float32
		switch {
		case json.Unmarshal(raw, &single) == nil:
			if len(single) == 0 {
				q["vector"] = json.RawMessage("null")
			} else {
				q["vector"] = marshal(map[string]any{"single_vector": single})
			}
		case json.Unmarshal(raw, &multi) == nil:
			q["vector"] = marshal(map[string]any{"multi_vector": multi})
		}
	} else {
		q["vector"] = json.RawMessage("null")
	}
	if raw, ok := q["columns"]; ok {
		var names []string
		var obj map[string]json.RawMessage
		switch {
		case json.Unmarshal(raw, &names) == nil:
			q["columns"] = marshal(map[string]any{"column_names": names})
		case json.Unmarshal(raw, &obj) == nil && obj != nil && !isSpecColumns(obj):
			// Keep the alias object as it came: its key order is the
			// order of the output columns.
			q["columns"] = json.RawMessage(`{"column_aliases":` + string(bytes.TrimSpace(raw)) + `}`)
		}
	}
	if raw, ok := q["full_text_query"]; ok {
		var fts map[string]json.RawMessage
		if json.Unmarshal(raw, &fts) == nil && fts != nil && fts["string_query"] == nil && fts["structured_query"] == nil {
			var text string
			if json.Unmarshal(fts["query"], &text) == nil {
				sq := map[string]json.RawMessage{"query": fts["query"]}
				if cols, ok := fts["columns"]; ok && string(cols) != "null" {
					sq["columns"] = cols
				}
				q["full_text_query"] = marshal(map[string]any{"string_query": sq})
			} else {
				q["full_text_query"] = marshal(map[string]any{"structured_query": map[string]any{"query": translateFts(fts["query"])}})
			}
		}
	}
	if raw, ok := q["k"]; ok {
		// An unlimited scan (k = i64::MAX) is a k of 0; searches take the
		// large k as it is.
		var k float64
		_, fts := q["full_text_query"]
		if json.Unmarshal(raw, &k) == nil && k >= 1<<62 && string(q["vector"]) == "null" && !fts {
			q["k"] = json.RawMessage("0")
		}
	}
}

// isSpecColumns reports whether a query's columns object is already in the
// spec's form, {column_names} or {column_aliases}, rather than the SDK's
// alias map (whose keys are output column names).
func isSpecColumns(obj map[string]json.RawMessage) bool {
	for k, v := range obj {
		if (k != "column_names" && k != "column_aliases") || (len(v) > 0 && v[0] == '"') {
			return false
		}
	}
	return len(obj) > 0
}

// translateFts rewrites the SDK's multi_match ({query, columns, boost}) into
// the spec's ({match_queries}), recursively.
func translateFts(raw json.RawMessage) json.RawMessage {
	var node map[string]json.RawMessage
	if json.Unmarshal(raw, &node) != nil || node == nil {
		return raw
	}
	for kind, inner := range node {
		var obj map[string]json.RawMessage
		if json.Unmarshal(inner, &obj) != nil || obj == nil {
			continue
		}
		dropNulls(obj)
		switch kind {
		case "multi_match":
			var query string
			var cols []string
			var boosts []float32
			_ = json.Unmarshal(obj["query"], &query)
			_ = json.Unmarshal(obj["columns"], &cols)
			_ = json.Unmarshal(obj["boost"], &boosts)
			if _, spec := obj["match_queries"]; !spec {
				var matches []map[string]any
				for i, col := range cols {
					m := map[string]any{"terms": query, "column": col}
					if i < len(boosts) {
						m["boost"] = boosts[i]
					}
					matches = append(matches, m)
				}
				obj = map[string]json.RawMessage{"match_queries": marshal(matches)}
			}
		case "boost":
			for _, k := range []string{"positive", "negative"} {
				if v, ok := obj[k]; ok {
					obj[k] = translateFts(v)
				}
			}
		case "boolean":
			for _, k := range []string{"must", "should", "must_not"} {
				var list []json.RawMessage
				if json.Unmarshal(obj[k], &list) == nil {
					for i := range list {
						list[i] = translateFts(list[i])
					}
					obj[k] = marshal(list)
				} else {
					obj[k] = json.RawMessage("[]")
				}
			}
		}
		node[kind] = marshal(obj)
	}
	return marshal(node)
}

// translateAlterations rewrites Lance type names in alter_columns data_type
// ("float", "double", "string", …) into the spec's.
func translateAlterations(body map[string]json.RawMessage) {
	var alts []map[string]json.RawMessage
	if json.Unmarshal(body["alterations"], &alts) != nil {
		return
	}
	for _, a := range alts {
		var dt map[string]any
		if json.Unmarshal(a["data_type"], &dt) == nil && dt != nil {
			a["data_type"] = marshal(specTypeOf(dt))
		}
	}
	body["alterations"] = marshal(alts)
}

// lanceTypeNames maps Lance's JSON type names to the spec's.
var lanceTypeNames = map[string]string{
	"halffloat": "float16", "float": "float32", "double": "float64", "string": "utf8", "large_string": "large_utf8",
	"boolean": "bool", "date32:day": "date32", "date64:ms": "date64",
}

// specTypeOf converts a Lance JSON data type into the spec's, with the
// parameters Lance folds into the name ("timestamp:us:UTC", "decimal:128:10:2").
func specTypeOf(dt map[string]any) map[string]any {
	name, _ := dt["type"].(string)
	out := map[string]any{}
	for k, v := range dt {
		out[k] = v
	}
	if n, ok := lanceTypeNames[name]; ok {
		out["type"] = n
	}
	parts := strings.Split(name, ":")
	switch parts[0] {
	case "timestamp", "time32", "time64", "duration":
		if len(parts) > 1 {
			out["type"], out["unit"] = parts[0], parts[1]
		}
		if len(parts) > 2 && parts[2] != "-" {
			out["timezone"] = parts[2]
		}
	case "decimal":
		if len(parts) == 4 {
			p, _ := strconv.Atoi(parts[2])
			s, _ := strconv.Atoi(parts[3])
			out["type"], out["length"] = "decimal"+parts[1], p*1000+s
		}
	}
	if fields, ok := dt["fields"].([]any); ok {
		for _, f := range fields {
			if fm, ok := f.(map[string]any); ok {
				if t, ok := fm["type"].(map[string]any); ok {
					fm["type"] = specTypeOf(t)
				}
			}
		}
	}
	return out
}

// lanceTypeOf converts a spec JSON data type (with lancens' unit and
// timezone members) into Lance's naming, which the SDK reads.
func lanceTypeOf(dt map[string]any) map[string]any {
	name, _ := dt["type"].(string)
	out := map[string]any{"type": name}
	for spec, lance := range map[string]string{"float16": "halffloat", "float32": "float", "float64": "double", "utf8": "string",
		"large_utf8": "large_string", "date32": "date32:day", "date64": "date64:ms"} {
		if name == spec {
			out["type"] = lance
		}
	}
	unit, _ := dt["unit"].(string)
	switch name {
	case "timestamp":
		tz, _ := dt["timezone"].(string)
		if tz == "" {
			tz = "-"
		}
		out["type"] = "timestamp:" + unit + ":" + tz
	case "time32", "time64", "duration":
		out["type"] = name + ":" + unit
	case "decimal32", "decimal64", "decimal128", "decimal256":
		if l, ok := dt["length"].(float64); ok {
			p := int((int64(l) + 128) / 1000)
			out["type"] = "decimal:" + strings.TrimPrefix(name, "decimal") + ":" + strconv.Itoa(p) + ":" + strconv.Itoa(int(l)-p*1000)
		}
	}
	if l, ok := dt["length"]; ok && !strings.HasPrefix(name, "decimal") {
		out["length"] = l
	}
	if fields, ok := dt["fields"].([]any); ok {
		for _, f := range fields {
			if fm, ok := f.(map[string]any); ok {
				if t, ok := fm["type"].(map[string]any); ok {
					fm["type"] = lanceTypeOf(t)
				}
			}
		}
		out["fields"] = fields
	}
	return out
}

// translateResponse rewrites a spec answer into what the SDK reads.
func translateResponse(opID string, body []byte, h http.Header) ([]byte, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil || m == nil {
		return nil, false
	}
	switch opID {
	case "DescribeTable":
		var schema map[string]any
		if json.Unmarshal(m["schema"], &schema) == nil && schema != nil {
			if fields, ok := schema["fields"].([]any); ok {
				for _, f := range fields {
					if fm, ok := f.(map[string]any); ok {
						if t, ok := fm["type"].(map[string]any); ok {
							fm["type"] = lanceTypeOf(t)
						}
					}
				}
			}
			m["schema"] = marshal(schema)
		}
	case "ListTableTags":
		// A flat map of tag name to contents.
		return m["tags"], true
	case "UpdateTable":
		m["rows_updated"] = m["updated_rows"]
	case "DeleteFromTable":
		n, _ := strconv.ParseInt(h.Get(headerDeletedRows), 10, 64)
		m["num_deleted_rows"] = marshal(n)
	default:
		return nil, false
	}
	return marshal(m), true
}
