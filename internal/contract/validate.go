// Package contract checks a Lance Namespace REST server against
// openapi.yaml itself: for every operation of the spec it sends a valid
// request, built from the operation's schemas against objects it created,
// and invalid ones generated from the same schemas (wrong types, missing
// required fields, bad enum values, malformed bodies), and checks every
// answer against the spec. It is the spec-driven half of
// `lancens conformance`; the behavioural half is internal/conformance.
package contract

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/lancens/lancens/gen"
	"github.com/lancens/lancens/server"
	"github.com/lancens/lancens/store"
)

// Validator checks requests and answers against openapi.yaml.
type Validator struct {
	doc         *openapi3.T
	router      routers.Router
	errorSchema *openapi3.Schema
	// requests routes to a copy of the spec marked OpenAPI 3.0.3, so that
	// kin-openapi checks requests with its own validator, which reads the
	// spec's 3.1 type arrays the same way, instead of compiling a JSON
	// Schema 2020 validator for each of the kit's many requests.
	requests routers.Router
}

// NewValidator loads the spec lancens embeds. It returns an error if the
// spec does not load.
func NewValidator() (*Validator, error) {
	doc, err := gen.GetSpec()
	if err != nil {
		return nil, err
	}
	doc.Servers = nil
	// Credentials are the transport's business, not the request's shape.
	doc.Security = nil
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, err
	}
	as30 := *doc
	as30.OpenAPI = "3.0.3"
	requests, err := gorillamux.NewRouter(&as30)
	if err != nil {
		return nil, err
	}
	return &Validator{doc: doc, router: router, requests: requests, errorSchema: doc.Components.Schemas["ErrorResponse"].Value}, nil
}

const (
	mimeJSON        = "application/json"
	mimeArrowStream = "application/vnd.apache.arrow.stream"
)

// CheckRequest returns an error saying how request r with body violates
// the spec, or nil when it conforms (an Arrow body is taken as it is).
func (v *Validator) CheckRequest(r *http.Request, body []byte) error {
	route, params, err := v.requests.FindRoute(r)
	if err != nil {
		return fmt.Errorf("no operation of the spec: %w", err)
	}
	req := r.Clone(context.Background())
	req.Body = io.NopCloser(bytes.NewReader(body))
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{SkipSettingDefaults: true}}
	return openapi3filter.ValidateRequest(context.Background(), in)
}

// Check returns an error saying how an answer to request r violates the
// spec, or nil. A status the operation documents is validated in full; any
// other must carry an ErrorResponse whose code maps to that status (the
// spec's per-route lists are not exhaustive). A route outside the spec
// must answer 404 or 405 with an ErrorResponse, except the LanceDB remote
// dialect's routes the kit uses (server.IsDialectRoute), which answer {} or
// an ErrorResponse.
func (v *Validator) Check(r *http.Request, status int, header http.Header, body []byte) error {
	route, params, err := v.router.FindRoute(r)
	if err != nil {
		dialect := server.IsDialectRoute(r.Method, r.URL.EscapedPath())
		if dialect && status < 300 {
			return CheckEmptyObject(header, body)
		}
		if !dialect && status != http.StatusNotFound && status != http.StatusMethodNotAllowed {
			return fmt.Errorf("no route in the spec, yet status %d", status)
		}
		return CheckErrorResponse(v.errorSchema, status, header, body, exactStatus)
	}
	if route.Operation.Responses.Status(status) == nil && status < 500 {
		return CheckErrorResponse(v.errorSchema, status, header, body, exactStatus)
	}
	if route.Operation.OperationID == "QueryTable" && status == http.StatusOK &&
		strings.Contains(r.Header.Get("Accept"), mimeArrowStream) && header.Get("Content-Type") == mimeArrowStream {
		return CheckArrowStream(body)
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: r, PathParams: params, Route: route},
		Status:                 status,
		Header:                 header,
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	in.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		return err
	}
	if status >= 300 {
		return CheckErrorResponse(v.errorSchema, status, header, body, exactStatus)
	}
	return nil
}

// CheckArrowStream returns an error when body is not a complete Arrow IPC
// stream.
func CheckArrowStream(body []byte) error {
	r, err := ipc.NewReader(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("not an Arrow IPC stream: %w", err)
	}
	defer r.Release()
	for r.Next() {
	}
	return r.Err()
}

// exactStatus is the status rule of the kit: an error's HTTP status is the
// one its code maps to.
func exactStatus(code store.Code, status int) bool { return status == server.StatusForCode(code) }

// CheckErrorResponse returns an error when an error answer is not a JSON
// ErrorResponse (errorSchema, the spec's) or its status does not suit its
// code: statusAllowed decides that, and code 0 may also come with 404 or
// 405 (an unknown route or method).
func CheckErrorResponse(errorSchema *openapi3.Schema, status int, header http.Header, body []byte, statusAllowed func(store.Code, int) bool) error {
	if ct := header.Get("Content-Type"); !strings.HasPrefix(ct, mimeJSON) {
		return fmt.Errorf("error answer with Content-Type %q, want an ErrorResponse in JSON", ct)
	}
	var doc any
	if err := json.Unmarshal(body, &doc); err != nil {
		return fmt.Errorf("error body is not JSON: %w", err)
	}
	if err := errorSchema.VisitJSON(doc, openapi3.EnableJSONSchema2020()); err != nil {
		return fmt.Errorf("error body is not an ErrorResponse: %w", err)
	}
	code := ErrorCode(body)
	if statusAllowed(store.Code(code), status) || (code == 0 && (status == http.StatusNotFound || status == http.StatusMethodNotAllowed)) {
		return nil
	}
	return fmt.Errorf("status %d does not match error code %d (which maps to %d)", status, code, server.StatusForCode(store.Code(code)))
}

// ErrorCode returns the Lance code of an ErrorResponse body, or -1.
func ErrorCode(body []byte) int {
	var er struct{ Code *int }
	if json.Unmarshal(body, &er) != nil || er.Code == nil {
		return -1
	}
	return *er.Code
}

// CheckEmptyObject returns an error unless a success answer is the JSON
// object {}.
func CheckEmptyObject(header http.Header, body []byte) error {
	if ct := header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		return fmt.Errorf("answer with Content-Type %q, want JSON", ct)
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil || m == nil || len(m) != 0 {
		return fmt.Errorf("answer %.200s, want {}", body)
	}
	return nil
}
