package client

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/lancens/lancens/store"
)

// Code is a Lance namespace error code (0–23); Code.String names it.
type Code = store.Code

// Error is an error answered by the server. It unwraps to a *store.Error
// carrying the Lance code, so errors.Is works with this package's sentinels:
//
//	var e *client.Error
//	if errors.As(err, &e) { log.Print(e.StatusCode, e.Code(), e.Message()) }
type Error struct {
	// StatusCode is the HTTP status of the response.
	StatusCode int
	// RequestID is the server's X-Request-Id for the request, if it sent one.
	RequestID string
	// Err holds the Lance code and the server's message.
	Err *store.Error
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("lance namespace error %d (%s, HTTP %d): %s", int(e.Err.Code), e.Err.Code, e.StatusCode, e.Err.Message)
	if e.RequestID != "" {
		msg += " [request " + e.RequestID + "]"
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// Code returns the Lance error code the server answered.
func (e *Error) Code() Code { return e.Err.Code }

// Message returns the server's message.
func (e *Error) Message() string { return e.Err.Message }

// ErrorCode returns the Lance code err carries: the server's, or that of an
// error this package made before sending. It returns Internal (18) for any
// other error and -1 for nil.
func ErrorCode(err error) Code { return store.ErrorCode(err) }

// checkResponse returns nil for a 2xx response and an *Error otherwise. A
// body that is not an ErrorResponse is reported as Internal (18) with the
// status and the start of the body.
func checkResponse(hr *http.Response, body []byte) error {
	if hr.StatusCode >= 200 && hr.StatusCode < 300 {
		return nil
	}
	e := &Error{StatusCode: hr.StatusCode, RequestID: hr.Header.Get("X-Request-Id")}
	var er struct {
		Code  *int   `json:"code"`
		Error string `json:"error"`
	}
	if json.Unmarshal(body, &er) == nil && er.Code != nil {
		e.Err = &store.Error{Code: store.Code(*er.Code), Message: er.Error}
		return e
	}
	snippet := string(body)
	if len(snippet) > 200 {
		snippet = snippet[:200] + "…"
	}
	e.Err = store.Errorf(store.CodeInternal, "unexpected response %s: %s", hr.Status, snippet)
	return e
}

// Sentinels for errors.Is, one per Lance error code.
var (
	ErrUnsupported                = store.ErrUnsupported                // 0
	ErrNamespaceNotFound          = store.ErrNamespaceNotFound          // 1
	ErrNamespaceAlreadyExists     = store.ErrNamespaceAlreadyExists     // 2
	ErrNamespaceNotEmpty          = store.ErrNamespaceNotEmpty          // 3
	ErrTableNotFound              = store.ErrTableNotFound              // 4
	ErrTableAlreadyExists         = store.ErrTableAlreadyExists         // 5
	ErrTableIndexNotFound         = store.ErrTableIndexNotFound         // 6
	ErrTableIndexAlreadyExists    = store.ErrTableIndexAlreadyExists    // 7
	ErrTableTagNotFound           = store.ErrTableTagNotFound           // 8
	ErrTableTagAlreadyExists      = store.ErrTableTagAlreadyExists      // 9
	ErrTransactionNotFound        = store.ErrTransactionNotFound        // 10
	ErrTableVersionNotFound       = store.ErrTableVersionNotFound       // 11
	ErrTableColumnNotFound        = store.ErrTableColumnNotFound        // 12
	ErrInvalidInput               = store.ErrInvalidInput               // 13
	ErrConcurrentModification     = store.ErrConcurrentModification     // 14
	ErrPermissionDenied           = store.ErrPermissionDenied           // 15
	ErrUnauthenticated            = store.ErrUnauthenticated            // 16
	ErrServiceUnavailable         = store.ErrServiceUnavailable         // 17
	ErrInternal                   = store.ErrInternal                   // 18
	ErrInvalidTableState          = store.ErrInvalidTableState          // 19
	ErrTableSchemaValidationError = store.ErrTableSchemaValidationError // 20
	ErrThrottling                 = store.ErrThrottling                 // 21
	ErrTableBranchNotFound        = store.ErrTableBranchNotFound        // 22
	ErrTableBranchAlreadyExists   = store.ErrTableBranchAlreadyExists   // 23
)

// invalid returns an InvalidInput (13) error made by the client, before
// anything is sent.
func invalid(format string, args ...any) error {
	return store.Errorf(store.CodeInvalidInput, format, args...)
}
