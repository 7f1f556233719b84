package server

import (
	"encoding/json"
	"net/url"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/lancens/lancens/store"
)

// Databases. A LanceDB SDK connected with connect("db://NAME",
// {hostOverride}) sends x-lancedb-database: NAME with every request. With
// Config.RouteDatabases, such a request is served inside top-level
// namespace NAME: identifiers in its path and body get NAME in front, the
// identifiers in its answer lose it, and authorize confines its principal
// to NAME. Each database so sees only its own namespaces and tables, and
// "$" (the root) is NAME. Without the option the header only marks the
// dialect.

const (
	headerDatabase  = "X-Lancedb-Database"
	contextDatabase = "lancens.database"
)

// databaseOf returns the database a request is routed to, if any.
func databaseOf(c echo.Context) (string, bool) {
	db, ok := c.Get(contextDatabase).(string)
	return db, ok
}

// idPathKinds are the first path elements after /v1 that are followed by
// an {id}.
var idPathKinds = map[string]bool{"namespace": true, "table": true, "transaction": true, "materialized_view": true}

// routeDatabases rewrites the {id} of a request routed to a database
// before routing: the root becomes the database's namespace, any other
// identifier is put inside it. A database name that cannot be a namespace
// name is left for authorize to refuse.
func (s *Server) routeDatabases(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		db := req.Header.Get(headerDatabase)
		if !s.cfg.RouteDatabases || db == "" {
			return next(c)
		}
		c.Set(contextDatabase, db)
		d := delimiterOf(optionalQuery(c, "delimiter"))
		if !validDatabaseName(db, d) {
			return next(c)
		}
		p := req.URL.EscapedPath()
		parts := strings.Split(p, "/")
		if len(parts) < 5 || parts[1] != "v1" || !idPathKinds[parts[2]] || p == "/v1/table/version/batch-create" {
			return next(c)
		}
		seg, err := url.PathUnescape(parts[3])
		if err != nil {
			return next(c) // validation answers the malformed path
		}
		name := escapeSegment(db)
		inDB := func(escaped, decoded string) string {
			if decoded == d {
				return name
			}
			return name + escapeSegment(d) + escaped
		}
		parts[3] = inDB(parts[3], seg)
		if sent, ok := c.Get(contextSentID).(string); ok {
			// The segment as the client sent it (see remotePaths) names
			// the same object inside the database.
			if dec, err := url.PathUnescape(sent); err == nil {
				c.Set(contextSentID, inDB(sent, dec))
			}
		}
		raw := strings.Join(parts, "/")
		if dec, err := url.PathUnescape(raw); err == nil {
			req.URL.Path, req.URL.RawPath = dec, raw
		}
		return next(c)
	}
}

// escapeSegment escapes s for a path segment so that both readings of a
// path (see pathValues) give s back: "+" is escaped too.
func escapeSegment(s string) string {
	return strings.ReplaceAll(url.PathEscape(s), "+", "%2B")
}

func validDatabaseName(db, delimiter string) bool {
	return store.ValidateName("database", db) == nil && !strings.Contains(db, delimiter)
}

// checkDatabaseName returns InvalidInput (13) for a database name that
// cannot name a top-level namespace.
func checkDatabaseName(c echo.Context, db string) error {
	d := delimiterOf(optionalQuery(c, "delimiter"))
	if err := store.ValidateName("database", db); err != nil {
		return err
	}
	if strings.Contains(db, d) {
		return invalidInput("database name %q contains the delimiter %q", db, d)
	}
	return nil
}

// intoDatabase puts the identifiers of a JSON request body inside
// database db: the body's id, a rename's new namespace, a materialized
// view's source table and the tables of batch operations. A body it cannot read is returned as it is.
func intoDatabase(opID string, raw []byte, db string) []byte {
	var body map[string]json.RawMessage
	if json.Unmarshal(raw, &body) != nil || body == nil {
		return raw
	}
	prefix(body, "id", db)
	switch opID {
	case "RenameTable":
		prefix(body, "new_namespace_id", db)
	case "CreateMaterializedView":
		// The source table is named inside source_query, itself the JSON
		// text of a query request (see viewQuery).
		var text string
		var query map[string]json.RawMessage
		if json.Unmarshal(body["source_query"], &text) == nil && json.Unmarshal([]byte(text), &query) == nil && query != nil {
			prefix(query, "id", db)
			body["source_query"] = marshal(string(marshal(query)))
		}
	case "BatchCreateTableVersions":
		eachObject(body, "entries", func(e map[string]json.RawMessage) { prefix(e, "id", db) })
	case "BatchCommitTables":
		eachObject(body, "operations", func(op map[string]json.RawMessage) {
			for k, v := range op {
				var inner map[string]json.RawMessage
				if json.Unmarshal(v, &inner) == nil && inner != nil {
					prefix(inner, "id", db)
					op[k] = marshal(inner)
				}
			}
		})
	}
	return marshal(body)
}

// outOfDatabase takes database db out of the identifiers of a JSON answer:
// the id of a dropped or deregistered table, a described table's
// namespace, and the names of ListAllTables (joined by delimiter).
func outOfDatabase(opID string, raw []byte, db, delimiter string) []byte {
	var body map[string]json.RawMessage
	if json.Unmarshal(raw, &body) != nil || body == nil {
		return raw
	}
	switch opID {
	case "DropTable", "DeregisterTable":
		unprefix(body, "id", db)
	case "DescribeTable":
		unprefix(body, "namespace", db)
	case "BatchCommitTables":
		eachObject(body, "results", func(r map[string]json.RawMessage) {
			var dereg map[string]json.RawMessage
			if json.Unmarshal(r["deregister_table"], &dereg) == nil && dereg != nil {
				unprefix(dereg, "id", db)
				r["deregister_table"] = marshal(dereg)
			}
		})
	case "ListAllTables":
		var names []string
		if json.Unmarshal(body["tables"], &names) == nil {
			for i, n := range names {
				names[i] = strings.TrimPrefix(n, db+delimiter)
			}
			body["tables"] = marshal(names)
		}
	default:
		return raw
	}
	return marshal(body)
}

// prefix puts db in front of the identifier m[key], when m has one.
func prefix(m map[string]json.RawMessage, key, db string) {
	var id []string
	if json.Unmarshal(m[key], &id) == nil && id != nil {
		m[key] = marshal(append([]string{db}, id...))
	}
}

// unprefix takes db off the front of the identifier m[key].
func unprefix(m map[string]json.RawMessage, key, db string) {
	var id []string
	if json.Unmarshal(m[key], &id) == nil && len(id) > 0 && id[0] == db {
		m[key] = marshal(slices.Clone(id[1:]))
	}
}

// eachObject applies f to every object of the JSON array body[key], when
// body has one.
func eachObject(body map[string]json.RawMessage, key string, f func(map[string]json.RawMessage)) {
	var list []map[string]json.RawMessage
	if json.Unmarshal(body[key], &list) != nil || list == nil {
		return
	}
	for _, m := range list {
		if m != nil {
			f(m)
		}
	}
	body[key] = marshal(list)
}
