package contract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/lancens/lancens/internal/conformance"
	"github.com/lancens/lancens/store"
)

// Config says where the checks run.
type Config struct {
	// URL is the server's base URL.
	URL string
	// Transport sends the requests and validates every answer.
	Transport *Transport
	// Namespace is an existing namespace the checks may fill: each
	// operation gets a child namespace of its own.
	Namespace []string
	// LocationRoot is where declared and registered tables are located:
	// a URI under which the server records paths. Empty: where the server
	// puts them, with staged manifests written into local locations (see
	// conformance.ScopeLocatedByServer).
	LocationRoot string
}

// operation is one operation of the spec.
type operation struct {
	id     string
	method string
	path   string
	op     *openapi3.Operation
	params openapi3.Parameters
}

// operations returns the operations of the spec by operationId.
func (v *Validator) operations() map[string]*operation {
	out := map[string]*operation{}
	for path, item := range v.doc.Paths.Map() {
		for method, op := range item.Operations() {
			out[op.OperationID] = &operation{id: op.OperationID, method: method, path: path, op: op,
				params: append(slices.Clone(item.Parameters), op.Parameters...)}
		}
	}
	return out
}

// Operations returns the operationIds the checks cover, in run order.
func Operations() []string {
	var out []string
	for _, f := range fixtures {
		out = append(out, f.op)
	}
	return out
}

// Run runs the contract checks as subtest "Contract" of t: one subtest per
// operation of the spec, each with its invalid requests
// ("Invalid/<what>") and its valid one ("Valid"), then checks of routes
// outside the spec and of credentials.
func Run(t conformance.T, cfg Config) {
	conformance.Subtest(t, "Contract", func(t conformance.T) {
		v := cfg.Transport.Validator
		ops := v.operations()
		for _, f := range fixtures {
			op := ops[f.op]
			if op == nil {
				t.Errorf("the checks cover %s, which the spec does not have", f.op)
				continue
			}
			delete(ops, f.op)
			conformance.Subtest(t, f.op, func(t conformance.T) { checkOperation(t, cfg, op, f.make) })
		}
		for id := range ops {
			t.Errorf("no check covers operation %s of the spec", id)
		}
		conformance.Subtest(t, "UnknownRoute", func(t conformance.T) {
			status, _, body := send(t, cfg, &request{method: http.MethodPost, path: "/v1/lancens-conformance/no-such-route"})
			if status != http.StatusNotFound && status != http.StatusMethodNotAllowed {
				t.Errorf("POST to a route outside the spec: want 404 or 405 with an ErrorResponse, got %d %.200s", status, body)
			}
		})
		if cfg.Transport.APIKey != "" {
			conformance.Subtest(t, "NoCredentials", func(t conformance.T) {
				noKey := &Transport{Client: cfg.Transport.Client, Validator: v}
				status, code, _ := send(t, Config{URL: cfg.URL, Transport: noKey}, &request{method: http.MethodGet, path: "/v1/namespace/%24/list"})
				if status != http.StatusUnauthorized || code != int(store.CodeUnauthenticated) {
					t.Errorf("a request without credentials: want 401 code 16, got %d code %d", status, code)
				}
			})
		}
	})
}

// request is one request the checks send.
type request struct {
	method, path string
	query        url.Values
	contentType  string
	body         []byte
	// json is the decoded JSON body, for mutations.
	json any
}

func (r *request) String() string {
	s := r.method + " " + r.path
	if len(r.query) > 0 {
		s += "?" + r.query.Encode()
	}
	if r.body != nil {
		if r.contentType == mimeJSON {
			s += fmt.Sprintf(" %.300s", r.body)
		} else {
			s += fmt.Sprintf(" <%s, %d bytes>", r.contentType, len(r.body))
		}
	}
	return s
}

func (r *request) httpRequest(base string) (*http.Request, error) {
	u := strings.TrimSuffix(base, "/") + r.path
	if len(r.query) > 0 {
		u += "?" + r.query.Encode()
	}
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	req, err := http.NewRequest(r.method, u, body)
	if err != nil {
		return nil, err
	}
	if r.contentType != "" {
		req.Header.Set("Content-Type", r.contentType)
	}
	return req, nil
}

// send sends r and returns the status, the Lance code of an error answer
// (-1 for none) and the body. It ends the case when no answer comes.
func send(t conformance.T, cfg Config, r *request) (int, int, []byte) {
	t.Helper()
	req, err := r.httpRequest(cfg.URL)
	if err != nil {
		t.Fatalf("%s: %v", r, err)
	}
	res, err := cfg.Transport.For(t).Do(req.WithContext(t.Context()))
	if err != nil {
		t.Fatalf("%s: no answer: %v", r, err)
	}
	body, _ := io.ReadAll(res.Body)
	code := -1
	if res.StatusCode >= 300 {
		code = ErrorCode(body)
	}
	return res.StatusCode, code, body
}

// escapeID renders an identifier for a path: "$"-joined, each part
// escaped; the root is "$".
func escapeID(id []string) string {
	if len(id) == 0 {
		return "%24"
	}
	parts := make([]string, len(id))
	for i, p := range id {
		parts[i] = url.PathEscape(p)
	}
	return strings.Join(parts, "$")
}

// validRequest builds the valid request of op from the sample of its
// schemas and the call's values.
func validRequest(op *operation, c call) (*request, error) {
	r := &request{method: op.method, path: op.path, query: url.Values{}}
	for k, vs := range c.query {
		r.query[k] = slices.Clone(vs)
	}
	id := escapeID(c.id)
	if c.raw != "" {
		id = url.PathEscape(c.raw)
	}
	r.path = strings.ReplaceAll(r.path, "{id}", id)
	r.path = strings.ReplaceAll(r.path, "{index_name}", url.PathEscape(c.indexName))
	for _, p := range op.params {
		if p.Value != nil && p.Value.In == openapi3.ParameterInQuery && p.Value.Required && r.query.Get(p.Value.Name) == "" {
			r.query.Set(p.Value.Name, fmt.Sprint(sample(p.Value.Schema.Value, 0)))
		}
	}
	rb := op.op.RequestBody
	if rb == nil || rb.Value == nil {
		return r, nil
	}
	if _, ok := rb.Value.Content[mimeArrowStream]; ok {
		r.contentType, r.body = mimeArrowStream, c.arrow
		return r, nil
	}
	mt := rb.Value.Content[mimeJSON]
	if mt == nil || mt.Schema == nil || mt.Schema.Value == nil {
		return nil, fmt.Errorf("%s: no JSON or Arrow request body in the spec", op.id)
	}
	skeleton, _ := sample(mt.Schema.Value, 0).(map[string]any)
	body := merge(skeleton, c.body)
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	r.contentType, r.body, r.json = mimeJSON, b, body
	return r, nil
}

// variant is one invalid request.
type variant struct {
	name string
	req  *request
	// bySpec: the spec's schemas reject the request; otherwise it breaks a
	// rule the spec states in prose (a malformed body, a body id that
	// names another object).
	bySpec bool
}

// invalidRequests derives the invalid variants of valid: each makes the
// request invalid in one way. Variants the spec's schemas would accept
// are dropped.
func invalidRequests(v *Validator, op *operation, valid *request, base string) []variant {
	var out []variant
	with := func(name string, r *request, bySpec bool) bool {
		if bySpec {
			req, err := r.httpRequest(base)
			if err != nil || v.CheckRequest(req, r.body) == nil {
				return false
			}
		}
		out = append(out, variant{name: name, req: r, bySpec: bySpec})
		return true
	}
	// Query parameters: wrong types, values outside an enum, absence.
	params := slices.Clone(op.params)
	sort.Slice(params, func(i, j int) bool { return params[i].Value.Name < params[j].Value.Name })
	for _, p := range params {
		pv := p.Value
		if pv == nil || pv.In != openapi3.ParameterInQuery || pv.Schema == nil || pv.Schema.Value == nil {
			continue
		}
		ps := alternative(pv.Schema.Value)
		query := func(set func(url.Values)) *request {
			r := *valid
			r.query = url.Values{}
			for k, vs := range valid.query {
				r.query[k] = slices.Clone(vs)
			}
			set(r.query)
			return &r
		}
		switch ts := types(ps); {
		case slices.Contains(ts, openapi3.TypeInteger) || slices.Contains(ts, openapi3.TypeNumber):
			with("WrongType/query/"+pv.Name, query(func(q url.Values) { q.Set(pv.Name, "not-a-number") }), true)
		case slices.Contains(ts, openapi3.TypeBoolean):
			with("WrongType/query/"+pv.Name, query(func(q url.Values) { q.Set(pv.Name, "maybe") }), true)
		}
		if len(ps.Enum) > 0 {
			with("BadEnum/query/"+pv.Name, query(func(q url.Values) { q.Set(pv.Name, bogusEnum) }), true)
		}
		if pv.Required {
			with("MissingRequired/query/"+pv.Name, query(func(q url.Values) { q.Del(pv.Name) }), true)
		}
	}
	switch valid.contentType {
	case mimeArrowStream:
		r := *valid
		r.body = []byte("this is not an Arrow IPC stream")
		with("MalformedArrowBody", &r, false)
	case mimeJSON:
		r := *valid
		r.body, r.json = []byte(`{"id": [`), nil
		with("MalformedJSON", &r, true)
		// A body is one JSON value: anything after it makes it no JSON at
		// all, though a streaming decoder would stop before it.
		trailing := *valid
		trailing.body, trailing.json = append(slices.Clone(valid.body), " x"...), nil
		with("TrailingJSON", &trailing, false)
		schema := op.op.RequestBody.Value.Content[mimeJSON].Schema.Value
		for _, m := range mutations(schema, valid.json, nil, 0) {
			candidates := m.values
			if m.remove {
				candidates = []any{nil}
			}
			for _, val := range candidates {
				body := apply(valid.json, m.path, val, m.remove)
				b, _ := json.Marshal(body)
				r := *valid
				r.body, r.json = b, body
				if with(m.name, &r, true) {
					break
				}
			}
		}
		// A body id must name the object the path names. Transactions are
		// left out: known clients disagree on what their body id holds.
		if _, ok := alternative(schema).Properties["id"]; ok && strings.Contains(op.path, "{id}") && !strings.HasPrefix(op.path, "/v1/transaction/") {
			body := apply(valid.json, []string{"id"}, []any{"lancens-conformance-other"}, false)
			b, _ := json.Marshal(body)
			r := *valid
			r.body, r.json = b, body
			with("BodyIDMismatch", &r, false)
		}
	}
	return out
}

// prepare sets up, through cfg.Transport, the objects a valid request to
// op needs, in a new namespace cfg.Namespace + op's id, and returns that
// request. It ends the case when the setup fails or the request it built
// does not conform to the spec.
func prepare(t conformance.T, cfg Config, op *operation, makeCall func(*env) call) *request {
	t.Helper()
	tg, err := conformance.NewHTTPTarget(cfg.URL, cfg.Transport.For(t))
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	e := &env{t: t, tg: tg, ns: append(slices.Clone(cfg.Namespace), op.id), locRoot: cfg.LocationRoot, locs: map[string]string{}}
	_, err = tg.CreateNamespace(t.Context(), e.ns, store.ModeCreate, nil)
	e.setup(err)
	c := makeCall(e)
	if strings.Contains(op.path, "{id}") && c.id == nil && c.raw == "" {
		conformance.Gap(t, "the server gave no identifier to address %s with", op.id)
	}
	valid, err := validRequest(op, c)
	if err != nil {
		t.Fatalf("%v", err)
	}
	req, err := valid.httpRequest(cfg.URL)
	if err != nil {
		t.Fatalf("%v", err)
	}
	if err := cfg.Transport.Validator.CheckRequest(req, valid.body); err != nil {
		t.Fatalf("the kit built a request the spec rejects: %s: %v", valid, err)
	}
	return valid
}

// ValidRequest sets up, through cfg.Transport, the objects a valid request
// to operation opID needs, in a new namespace cfg.Namespace + [opID] (so
// cfg.Namespace must exist), and returns that request without
// credentials; GetBody gives its body again. It ends the case when the
// setup fails, and returns an error for an operation the spec lacks.
func ValidRequest(t conformance.T, cfg Config, opID string) (*http.Request, error) {
	t.Helper()
	op := cfg.Transport.Validator.operations()[opID]
	if op == nil {
		return nil, fmt.Errorf("the spec has no operation %s", opID)
	}
	for _, f := range fixtures {
		if f.op == opID {
			return prepare(t, cfg, op, f.make).httpRequest(cfg.URL)
		}
	}
	return nil, fmt.Errorf("the kit has no valid request for %s", opID)
}

// lenientAbsence lists, per operation, the required members whose absence
// a server may accept rather than refuse: a query's vector and k, which
// lancens reads as null and 0 when absent (a plain scan need not send
// them). A server that refuses their absence passes too.
var lenientAbsence = map[string][]string{
	"QueryTable":            {"MissingRequired/vector", "MissingRequired/k"},
	"AnalyzeTableQueryPlan": {"MissingRequired/vector", "MissingRequired/k"},
	"ExplainTableQueryPlan": {"MissingRequired/query/vector", "MissingRequired/query/k"},
}

// checkOperation sets up the objects op needs, sends its invalid requests
// (each must answer 400 with code 13, or succeed for a lenientAbsence)
// and then its valid one (which must succeed or answer a documented status
// other than 400).
func checkOperation(t conformance.T, cfg Config, op *operation, makeCall func(*env) call) {
	valid := prepare(t, cfg, op, makeCall)
	for _, vr := range invalidRequests(cfg.Transport.Validator, op, valid, cfg.URL) {
		conformance.Subtest(t, "Invalid/"+vr.name, func(t conformance.T) {
			status, code, body := send(t, cfg, vr.req)
			switch {
			case status == http.StatusBadRequest && code == int(store.CodeInvalidInput):
			case status >= 200 && status < 300 && slices.Contains(lenientAbsence[op.id], vr.name):
				t.Logf("%s accepts the request without %s", op.id, strings.TrimPrefix(vr.name, "MissingRequired/"))
			case status == http.StatusNotAcceptable && code == int(store.CodeUnsupported):
				conformance.Gap(t, "%s answered 406: %.200s", op.id, body)
			default:
				why := "the spec's schemas reject it"
				if !vr.bySpec {
					why = "the spec's rules reject it"
				}
				t.Errorf("%s: want 400 code 13 (%s), got %d code %d\nrequest: %s\nanswer: %.300s", op.id, why, status, code, vr.req, body)
			}
		})
	}
	conformance.Subtest(t, "Valid", func(t conformance.T) {
		status, code, body := send(t, cfg, valid)
		switch {
		case status >= 200 && status < 300:
		case status == http.StatusNotAcceptable && code == int(store.CodeUnsupported):
			conformance.Gap(t, "%s answered 406: %.200s", op.id, body)
		case status == http.StatusBadRequest:
			t.Errorf("%s: a valid request was refused: got 400 code %d\nrequest: %s\nanswer: %.300s", op.id, code, valid, body)
		case op.op.Responses.Status(status) != nil:
			t.Logf("%s answered documented status %d code %d", op.id, status, code)
		default:
			t.Errorf("%s: want success or a documented status, got %d code %d\nrequest: %s\nanswer: %.300s", op.id, status, code, valid, body)
		}
	})
}
