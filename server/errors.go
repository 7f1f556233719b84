package server

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/lancens/lancens/gen"
	"github.com/lancens/lancens/store"
)

// statusByCode is the one mapping from Lance error codes to HTTP statuses.
var statusByCode = map[store.Code]int{
	store.CodeUnsupported:                http.StatusNotAcceptable,
	store.CodeNamespaceNotFound:          http.StatusNotFound,
	store.CodeNamespaceAlreadyExists:     http.StatusConflict,
	store.CodeNamespaceNotEmpty:          http.StatusConflict,
	store.CodeTableNotFound:              http.StatusNotFound,
	store.CodeTableAlreadyExists:         http.StatusConflict,
	store.CodeTableIndexNotFound:         http.StatusNotFound,
	store.CodeTableIndexAlreadyExists:    http.StatusConflict,
	store.CodeTableTagNotFound:           http.StatusNotFound,
	store.CodeTableTagAlreadyExists:      http.StatusConflict,
	store.CodeTransactionNotFound:        http.StatusNotFound,
	store.CodeTableVersionNotFound:       http.StatusNotFound,
	store.CodeTableColumnNotFound:        http.StatusNotFound,
	store.CodeInvalidInput:               http.StatusBadRequest,
	store.CodeConcurrentModification:     http.StatusConflict,
	store.CodePermissionDenied:           http.StatusForbidden,
	store.CodeUnauthenticated:            http.StatusUnauthorized,
	store.CodeServiceUnavailable:         http.StatusServiceUnavailable,
	store.CodeInternal:                   http.StatusInternalServerError,
	store.CodeInvalidTableState:          http.StatusConflict,
	store.CodeTableSchemaValidationError: http.StatusBadRequest,
	store.CodeThrottling:                 http.StatusTooManyRequests,
	store.CodeTableBranchNotFound:        http.StatusNotFound,
	store.CodeTableBranchAlreadyExists:   http.StatusConflict,
}

// StatusForCode returns the HTTP status lancens answers with for a Lance
// error code; unknown codes are 500.
func StatusForCode(code store.Code) int {
	if s, ok := statusByCode[code]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// routingError is an error found before any operation ran: an unknown route
// or a method the route does not accept. It keeps the HTTP status of the
// routing failure and reports code 0 (the server has no such operation).
type routingError struct {
	status  int
	message string
}

func (e *routingError) Error() string { return e.message }

// errorHandler is Echo's HTTPErrorHandler: it turns every error a handler or
// middleware returns into a JSON ErrorResponse. Internal errors are logged
// with their cause and answered with a generic message; other errors with
// an underlying cause (store.Error.Cause) log it at level warn. Nothing is
// written for a request whose client has gone away (see logRequests).
func (s *Server) errorHandler(err error, c echo.Context) {
	if c.Response().Committed || clientGone(c) {
		return
	}
	status, code, message := s.classify(err)
	var se *store.Error
	switch {
	case code == store.CodeInternal:
		s.log.ErrorContext(c.Request().Context(), "internal error",
			slog.String("request_id", requestID(c)), slog.String("path", c.Request().URL.Path), slog.Any("error", err))
	case errors.As(err, &se) && se.Cause != nil:
		s.log.WarnContext(c.Request().Context(), "request failed",
			slog.String("request_id", requestID(c)), slog.String("path", c.Request().URL.Path),
			slog.Int("code", int(code)), slog.Any("cause", se.Cause))
	}
	setRetryAfter(c, err)
	instance := c.Request().URL.Path
	body := gen.ErrorResponse{Code: int(code), Error: &message, Instance: &instance}
	if c.Request().Method == http.MethodHead {
		err = c.NoContent(status)
	} else {
		err = c.JSON(status, body)
	}
	if err != nil {
		s.log.WarnContext(c.Request().Context(), "write error response", slog.Any("error", err))
	}
}

// classify returns the HTTP status, Lance code and caller-safe message for err.
func (s *Server) classify(err error) (int, store.Code, string) {
	var se *store.Error
	var re *routingError
	var he *echo.HTTPError
	switch {
	case errors.As(err, &se):
		return statusOf(err, se.Code), se.Code, se.Error()
	case errors.As(err, &re):
		return re.status, store.CodeUnsupported, re.message
	case errors.As(err, &he):
		// Echo's own errors: routing failures and the few it raises itself.
		switch he.Code {
		case http.StatusNotFound:
			return http.StatusNotFound, store.CodeUnsupported, "no such route"
		case http.StatusMethodNotAllowed:
			return http.StatusMethodNotAllowed, store.CodeUnsupported, "method not allowed on this route"
		case http.StatusRequestEntityTooLarge:
			return http.StatusRequestEntityTooLarge, store.CodeInvalidInput, "request body too large"
		case http.StatusUnauthorized:
			return http.StatusUnauthorized, store.CodeUnauthenticated, fmt.Sprint(he.Message)
		}
		if he.Code >= 400 && he.Code < 500 {
			return http.StatusBadRequest, store.CodeInvalidInput, fmt.Sprint(he.Message)
		}
	}
	return http.StatusInternalServerError, store.CodeInternal, "internal error"
}

func invalidInput(format string, args ...any) error {
	return store.Errorf(store.CodeInvalidInput, format, args...)
}

// A request body over its size limit is bad input (code 13) like any other,
// answered with HTTP 413 rather than 400 so that clients and proxies know
// that sending it again unchanged cannot succeed. It and a body of the
// wrong media type (415, crosssite.go) are the errors whose status is not
// their code's.

// tooLargeError is the error of a request body over its limit.
type tooLargeError struct{ err *store.Error }

func (e *tooLargeError) Error() string { return e.err.Error() }
func (e *tooLargeError) Unwrap() error { return e.err }

// The lancens serve flags that set the body limits, named in the errors
// of bodies over them.
const (
	flagMaxJSONBody  = "--max-json-body"
	flagMaxArrowBody = "--max-arrow-body"
)

// bodyTooLarge returns the error of a request body larger than limit bytes,
// the limit the serve flag named flag sets.
func bodyTooLarge(limit int64, flag string) error {
	return &tooLargeError{store.Errorf(store.CodeInvalidInput,
		"the request body is larger than %d bytes, the limit for this route (set by lancens serve %s)", limit, flag)}
}

// statusOf returns the HTTP status of err, an error of code: 413 for a body
// over its limit, 415 for a body of a type its route does not read, else
// the code's status.
func statusOf(err error, code store.Code) int {
	var tl *tooLargeError
	var um *unsupportedMediaTypeError
	switch {
	case errors.As(err, &tl):
		return http.StatusRequestEntityTooLarge
	case errors.As(err, &um):
		return http.StatusUnsupportedMediaType
	}
	return StatusForCode(code)
}

// StatusAllowed reports whether lancens may answer an error of code with
// status: the code's status, or for InvalidInput (13) 413 when a request
// body is over its limit and 415 when it is of a type its route does not
// read.
func StatusAllowed(code store.Code, status int) bool {
	return status == StatusForCode(code) ||
		(code == store.CodeInvalidInput && (status == http.StatusRequestEntityTooLarge || status == http.StatusUnsupportedMediaType))
}
