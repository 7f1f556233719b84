package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/labstack/echo/v4"
)

// listModels names the request model of each read-only list route whose
// spec operation has no request body. Over REST their fields travel in the
// query string, but the routes are also called with POST and the model as
// a JSON body (the Lance namespace client posts `version/list` so on every
// commit), and those fields are honoured too.
var listModels = map[string]string{
	"ListNamespaces":    "ListNamespacesRequest",
	"ListTables":        "ListTablesRequest",
	"ListAllTables":     "ListTablesRequest",
	"ListTableVersions": "ListTableVersionsRequest",
	"ListTableTags":     "ListTableTagsRequest",
	"ListTableBranches": "ListTableBranchesRequest",
}

// queryFromBody reads the JSON body of a request to one of the routes of
// listModels, checks it against the model's schema and moves its fields
// into the query string, where the handler reads them. A field given both
// in the body and in the query string must have the same value in both:
// neither silently wins, as an `id` in a body must name the path's object.
// `identity` and `context` are ignored (credentials travel as headers).
// An empty or `null` body is `{}`. Returns InvalidInput (13) for a body
// that does not fit the model, a conflicting field or a different `id`,
// with HTTP 413 for a body over MaxJSONBody.
func (s *Server) queryFromBody(c echo.Context, op *operation) error {
	model, ok := listModels[op.id]
	if !ok {
		return nil
	}
	req := c.Request()
	raw, err := readJSONBody(req, s.cfg.MaxJSONBody)
	req.Body = http.NoBody
	if err != nil || string(raw) == "{}" {
		return err
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return invalidInput("malformed JSON body: %v", err)
	}
	schema := op.route.Spec.Components.Schemas[model].Value
	if err := schema.VisitJSON(doc, openapi3.MultiErrors()); err != nil {
		return invalidInput("request body: %s", validationMessage(err))
	}
	fields, _ := doc.(map[string]any) // the schema says it is an object
	q := req.URL.Query()
	params := queryParams(op)
	for name, v := range fields {
		switch {
		case v == nil || name == "identity" || name == "context":
		case name == "id":
			if err := checkBodyID(c, op, q.Get("delimiter"), raw); err != nil {
				return err
			}
		case params[name]:
			val := queryValue(v)
			if given, ok := q[name]; ok && !sameValue(given[0], val) {
				return invalidInput("%s is %q in the query string but %q in the body", name, given[0], val)
			}
			q.Set(name, val)
		}
	}
	req.URL.RawQuery = q.Encode()
	return nil
}

// queryParams returns the names of an operation's query parameters.
func queryParams(op *operation) map[string]bool {
	out := map[string]bool{}
	for _, list := range []openapi3.Parameters{op.route.PathItem.Parameters, op.route.Operation.Parameters} {
		for _, p := range list {
			if p.Value != nil && p.Value.In == openapi3.ParameterInQuery {
				out[p.Value.Name] = true
			}
		}
	}
	return out
}

// checkBodyID checks the `id` of a list body against the path: the object
// the {id} path segment names, or the root for ListAllTables, which has
// none. Returns InvalidInput (13) when they differ.
func checkBodyID(c echo.Context, op *operation, delimiter string, raw []byte) error {
	var body struct{ ID []string }
	if err := json.NewDecoder(bytes.NewReader(raw)).Decode(&body); err != nil {
		return invalidInput("malformed JSON body: %v", err)
	}
	if op.id == "ListAllTables" {
		if len(body.ID) > 0 {
			return invalidInput("ListAllTables lists every table and takes no id; list a namespace's tables with namespace/{id}/table/list")
		}
		return nil
	}
	var d *string
	if delimiter != "" {
		d = &delimiter
	}
	_, err := resolveID(c, d, &body.ID)
	return err
}

// queryValue writes a JSON scalar the way a query string carries it.
func queryValue(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case bool:
		return strconv.FormatBool(v)
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// sameValue reports whether a query-string value and a body value say the
// same: equal text, or equal as booleans or integers ("1" and "01",
// "true" and "TRUE").
func sameValue(query, body string) bool {
	if query == body {
		return true
	}
	if a, err := strconv.ParseBool(query); err == nil {
		b, err := strconv.ParseBool(body)
		return err == nil && a == b
	}
	a, err := strconv.ParseInt(query, 10, 64)
	b, err2 := strconv.ParseInt(body, 10, 64)
	return err == nil && err2 == nil && a == b
}
