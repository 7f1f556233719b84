package server

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/labstack/echo/v4"
)

// bodyKind says what an operation's request body is.
type bodyKind int

const (
	bodyNone  bodyKind = iota // no request body in the spec: a list route reads one as its request model (listbodies.go), others discard it
	bodyJSON                  // a JSON document
	bodyArrow                 // an Arrow IPC stream, read by the handler as it arrives
)

// operation is what the middleware knows about one route of the spec.
type operation struct {
	id    string
	route *routers.Route
	body  bodyKind
	// validation holds the options its requests are validated with; the
	// validator only reads them, so every request shares them.
	validation *openapi3filter.Options
}

// operationTable maps "METHOD /echo/:path" to the spec operation it serves.
type operationTable map[string]*operation

// newOperationTable reads every operation of doc. The routes it returns
// carry a copy of the spec adjusted for request validation:
//   - no security requirements: authentication is our own middleware, and
//     openapi3filter would otherwise want a callback and read whole request
//     bodies for it;
//   - no servers, so the Host header is not matched;
//   - marked OpenAPI 3.0.3, so kin-openapi validates with its own validator
//     (which reads the 3.1 type arrays of our spec, `[T, "null"]`, the same
//     way) instead of compiling a JSON Schema 2020 validator for every
//     request, which cost more than the rest of a request put together.
func newOperationTable(doc *openapi3.T) operationTable {
	open := *doc
	open.Security = nil
	open.Servers = nil
	open.OpenAPI = "3.0.3"
	table := operationTable{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			o := &operation{
				id:    op.OperationID,
				route: &routers.Route{Spec: &open, Path: path, PathItem: item, Method: method, Operation: op},
			}
			if rb := op.RequestBody; rb != nil && rb.Value != nil {
				o.body = bodyJSON
				for ct := range rb.Value.Content {
					if strings.HasPrefix(ct, "application/vnd.apache.arrow") {
						o.body = bodyArrow
					}
				}
			}
			o.validation = &openapi3filter.Options{SkipSettingDefaults: true, MultiError: true, ExcludeRequestBody: o.body != bodyJSON}
			o.validation.WithCustomSchemaErrorFunc(schemaErrorMessage)
			table[method+" "+echoPath(path)] = o
		}
	}
	return table
}

// echoPath turns an OpenAPI path template into Echo's syntax.
func echoPath(p string) string {
	return strings.NewReplacer("{", ":", "}", "").Replace(p)
}

// lookup returns the spec operation Echo routed the request to, or nil.
func (t operationTable) lookup(c echo.Context) *operation {
	// Every middleware asks: build the key where indexing the map with it
	// does not allocate.
	var buf [128]byte
	key := append(append(append(buf[:0], c.Request().Method...), ' '), c.Path()...)
	return t[string(key)]
}

// validateRequests checks every request against the spec before its handler
// runs: parameters always; JSON bodies too, after an empty or `null` body has
// been read as `{}`. Arrow bodies are left on the wire for the handler to
// stream. A failure is InvalidInput (13) naming what is wrong.
func (s *Server) validateRequests(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		op := s.ops.lookup(c)
		if op == nil {
			return next(c)
		}
		req := c.Request()
		switch op.body {
		case bodyJSON:
			body, err := readJSONBody(req, s.cfg.MaxJSONBody)
			if err != nil {
				return err
			}
			if body, err = adjustQueryBody(op, body, !isRemote(req)); err != nil {
				return err
			}
			req.Header.Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
			req.Body = newJSONBody(body)
			req.ContentLength = int64(len(body))
			req.GetBody = func() (io.ReadCloser, error) { return newJSONBody(body), nil }
		case bodyNone:
			if err := s.queryFromBody(c, op); err != nil {
				return err
			}
		}
		if op.id == "MergeInsertIntoTable" {
			keepRepeatedOn(c)
		}
		params := map[string]string{}
		for _, name := range c.ParamNames() {
			params[name] = c.Param(name)
		}
		in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: op.route, Options: op.validation}
		if err := openapi3filter.ValidateRequest(req.Context(), in); err != nil {
			return invalidInput("%s", validationMessage(err))
		}
		if op.body == bodyJSON {
			// The validator consumed the body; hand the handler a fresh reader.
			req.Body, _ = req.GetBody()
		}
		return next(c)
	}
}

// readJSONBody reads a JSON request body of at most limit bytes. An absent,
// empty or `null` body reads as `{}`. Returns InvalidInput (13) when the
// body is not valid UTF-8 or is more than one JSON value (`{} x`), and with
// HTTP 413 when it is too large.
func readJSONBody(req *http.Request, limit int64) ([]byte, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return []byte("{}"), nil
	}
	body, err := readBody(req.Body, limit)
	if err != nil {
		return nil, err
	}
	if t := bytes.TrimSpace(body); len(t) == 0 || string(t) == "null" {
		return []byte("{}"), nil
	}
	if !utf8.Valid(body) {
		// JSON is UTF-8 (RFC 8259); a decoder would silently turn the bad
		// bytes into U+FFFD and store a name the client never sent.
		return nil, invalidInput("the request body is not valid UTF-8")
	}
	if err := oneJSONValue(body); err != nil {
		return nil, err
	}
	return body, nil
}

// schemaErrorMessage words a schema violation without echoing values back.
func schemaErrorMessage(e *openapi3.SchemaError) string {
	return "/" + strings.Join(e.JSONPointer(), "/") + ": " + e.Reason
}

// validationMessage flattens the validator's (possibly nested) errors into
// one line, one clause per distinct problem.
func validationMessage(err error) string {
	var parts []string
	var walk func(error)
	walk = func(err error) {
		var me openapi3.MultiError
		var re *openapi3filter.RequestError
		switch {
		case errors.As(err, &me):
			for _, e := range me {
				walk(e)
			}
		case errors.As(err, &re):
			var inner openapi3.MultiError
			if re.Err != nil && errors.As(re.Err, &inner) {
				for _, e := range inner {
					parts = append(parts, requestErrorPrefix(re)+e.Error())
				}
				return
			}
			reason := re.Reason
			if re.Err != nil {
				if reason != "" {
					reason += ": "
				}
				reason += re.Err.Error()
			}
			parts = append(parts, requestErrorPrefix(re)+reason)
		default:
			parts = append(parts, err.Error())
		}
	}
	walk(err)
	sort.Strings(parts)
	parts = slices.Compact(parts)
	return strings.Join(parts, "; ")
}

func requestErrorPrefix(re *openapi3filter.RequestError) string {
	if re.Parameter != nil {
		return fmt.Sprintf("parameter %q in %s: ", re.Parameter.Name, re.Parameter.In)
	}
	return "request body: "
}

// contextMergeKeys holds every value of a repeated merge_insert "on"
// parameter (a composite key). The spec declares one value; the parameter
// binding then sees only the first.
const contextMergeKeys = "lancens.merge_keys"

func keepRepeatedOn(c echo.Context) {
	q := c.Request().URL.Query()
	if on := q["on"]; len(on) > 1 {
		c.Set(contextMergeKeys, on)
		q["on"] = on[:1]
		c.Request().URL.RawQuery = q.Encode()
	}
}
