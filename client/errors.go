package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
)

// Code is a Lance namespace error code (0–23); Code.String names it.
type Code int

// The Lance namespace error codes, numbered as the specification numbers
// them.
const (
	CodeUnsupported                Code = 0
	CodeNamespaceNotFound          Code = 1
	CodeNamespaceAlreadyExists     Code = 2
	CodeNamespaceNotEmpty          Code = 3
	CodeTableNotFound              Code = 4
	CodeTableAlreadyExists         Code = 5
	CodeTableIndexNotFound         Code = 6
	CodeTableIndexAlreadyExists    Code = 7
	CodeTableTagNotFound           Code = 8
	CodeTableTagAlreadyExists      Code = 9
	CodeTransactionNotFound        Code = 10
	CodeTableVersionNotFound       Code = 11
	CodeTableColumnNotFound        Code = 12
	CodeInvalidInput               Code = 13
	CodeConcurrentModification     Code = 14
	CodePermissionDenied           Code = 15
	CodeUnauthenticated            Code = 16
	CodeServiceUnavailable         Code = 17
	CodeInternal                   Code = 18
	CodeInvalidTableState          Code = 19
	CodeTableSchemaValidationError Code = 20
	CodeThrottling                 Code = 21
	CodeTableBranchNotFound        Code = 22
	CodeTableBranchAlreadyExists   Code = 23
)

var codeNames = [...]string{
	"Unsupported", "NamespaceNotFound", "NamespaceAlreadyExists", "NamespaceNotEmpty",
	"TableNotFound", "TableAlreadyExists", "TableIndexNotFound", "TableIndexAlreadyExists",
	"TableTagNotFound", "TableTagAlreadyExists", "TransactionNotFound", "TableVersionNotFound",
	"TableColumnNotFound", "InvalidInput", "ConcurrentModification", "PermissionDenied",
	"Unauthenticated", "ServiceUnavailable", "Internal", "InvalidTableState",
	"TableSchemaValidationError", "Throttling", "TableBranchNotFound", "TableBranchAlreadyExists",
}

// String returns the code's name in the specification, or "Code(n)" for a
// code outside 0–23.
func (c Code) String() string {
	if c >= 0 && int(c) < len(codeNames) {
		return codeNames[c]
	}
	return fmt.Sprintf("Code(%d)", int(c))
}

// Error is an error with a Lance code: one the server answered, or a
// mistake the client caught before sending (StatusCode 0). errors.Is
// matches it against this package's sentinels by code:
//
//	var e *client.Error
//	if errors.As(err, &e) { log.Print(e.StatusCode, e.Code(), e.Message()) }
type Error struct {
	// StatusCode is the HTTP status of the response; 0 for an error made
	// before anything was sent.
	StatusCode int
	// RequestID is the server's X-Request-Id for the request, if it sent one.
	RequestID string
	code      Code
	message   string
}

func (e *Error) Error() string {
	if e.StatusCode == 0 {
		if e.message == "" {
			return "lance namespace error " + e.code.String()
		}
		return e.message
	}
	msg := fmt.Sprintf("lance namespace error %d (%s, HTTP %d): %s", int(e.code), e.code, e.StatusCode, e.message)
	if e.RequestID != "" {
		msg += " [request " + e.RequestID + "]"
	}
	return msg
}

// Code returns the Lance error code.
func (e *Error) Code() Code { return e.code }

// Message returns the server's message (or the client's, for an error
// made before sending).
func (e *Error) Message() string { return e.message }

// LanceCode returns the Lance error code as a plain number, for code that
// reads Lance codes without importing this package: any error with a
// LanceCode method carries one.
func (e *Error) LanceCode() int { return int(e.code) }

// Is reports whether target carries the same Lance code, so that
// errors.Is(err, ErrTableNotFound) matches every table-not-found error
// whatever its message. Besides this package's errors it recognises any
// error with a LanceCode method.
func (e *Error) Is(target error) bool {
	var t lanceCoder
	return errors.As(target, &t) && Code(t.LanceCode()) == e.code
}

// lanceCoder is an error that carries a Lance code.
type lanceCoder interface{ LanceCode() int }

// ErrorCode returns the Lance code err carries (the server's, or that of
// an error this package made before sending, or of any error in its chain
// with a LanceCode method). It returns Internal (18) for any other error
// and -1 for nil.
func ErrorCode(err error) Code {
	if err == nil {
		return -1
	}
	var c lanceCoder
	if errors.As(err, &c) {
		return Code(c.LanceCode())
	}
	return CodeInternal
}

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
		e.code, e.message = Code(*er.Code), er.Error
		return e
	}
	snippet := string(body)
	if len(snippet) > 200 {
		snippet = snippet[:200] + "…"
	}
	e.code, e.message = CodeInternal, fmt.Sprintf("unexpected response %s: %s", hr.Status, snippet)
	return e
}

// Sentinels for errors.Is, one per Lance error code.
var (
	ErrUnsupported                = &Error{code: CodeUnsupported}
	ErrNamespaceNotFound          = &Error{code: CodeNamespaceNotFound}
	ErrNamespaceAlreadyExists     = &Error{code: CodeNamespaceAlreadyExists}
	ErrNamespaceNotEmpty          = &Error{code: CodeNamespaceNotEmpty}
	ErrTableNotFound              = &Error{code: CodeTableNotFound}
	ErrTableAlreadyExists         = &Error{code: CodeTableAlreadyExists}
	ErrTableIndexNotFound         = &Error{code: CodeTableIndexNotFound}
	ErrTableIndexAlreadyExists    = &Error{code: CodeTableIndexAlreadyExists}
	ErrTableTagNotFound           = &Error{code: CodeTableTagNotFound}
	ErrTableTagAlreadyExists      = &Error{code: CodeTableTagAlreadyExists}
	ErrTransactionNotFound        = &Error{code: CodeTransactionNotFound}
	ErrTableVersionNotFound       = &Error{code: CodeTableVersionNotFound}
	ErrTableColumnNotFound        = &Error{code: CodeTableColumnNotFound}
	ErrInvalidInput               = &Error{code: CodeInvalidInput}
	ErrConcurrentModification     = &Error{code: CodeConcurrentModification}
	ErrPermissionDenied           = &Error{code: CodePermissionDenied}
	ErrUnauthenticated            = &Error{code: CodeUnauthenticated}
	ErrServiceUnavailable         = &Error{code: CodeServiceUnavailable}
	ErrInternal                   = &Error{code: CodeInternal}
	ErrInvalidTableState          = &Error{code: CodeInvalidTableState}
	ErrTableSchemaValidationError = &Error{code: CodeTableSchemaValidationError}
	ErrThrottling                 = &Error{code: CodeThrottling}
	ErrTableBranchNotFound        = &Error{code: CodeTableBranchNotFound}
	ErrTableBranchAlreadyExists   = &Error{code: CodeTableBranchAlreadyExists}
)

// errorf returns an error with the given code made by the client, before
// anything is sent.
func errorf(code Code, format string, args ...any) error {
	return &Error{code: code, message: fmt.Sprintf(format, args...)}
}

// invalid returns an InvalidInput (13) error made by the client, before
// anything is sent.
func invalid(format string, args ...any) error {
	return errorf(CodeInvalidInput, format, args...)
}
