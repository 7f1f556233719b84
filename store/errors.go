package store

import (
	"errors"
	"fmt"
)

// Code is a Lance namespace error code (0–23). Clients dispatch on it, so every
// error that leaves lancens carries one.
type Code int

// The Lance namespace error codes, in the order the specification numbers them.
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

// String returns the code's name from the specification, or "Code(n)" for a
// code outside 0–23.
func (c Code) String() string {
	if c >= 0 && int(c) < len(codeNames) {
		return codeNames[c]
	}
	return fmt.Sprintf("Code(%d)", int(c))
}

// Error is the one error type of lancens: a Lance error code and a message
// that is safe to show to the caller.
type Error struct {
	Code    Code
	Message string
	// Cause, when set, is the underlying failure (a driver error, say): it is
	// for logs and errors.As, never shown to the caller.
	Cause error
}

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

func (e *Error) Error() string {
	if e.Message == "" {
		return e.Code.String()
	}
	return e.Message
}

// Unwrap returns the cause of e (nil when it has none).
func (e *Error) Unwrap() error { return e.Cause }

// Is reports whether target carries the same code, so that errors.Is(err,
// ErrTableNotFound) matches any table-not-found error whatever its message.
// Besides an *Error, any error with a LanceCode method is recognised (the
// Go client's *client.Error is one).
func (e *Error) Is(target error) bool {
	var t lanceCoder
	return errors.As(target, &t) && Code(t.LanceCode()) == e.Code
}

// LanceCode returns the code as a plain number. Errors of packages that
// carry Lance codes without importing this one (the Go client, which
// stands alone) have the same method, and ErrorCode and Is read theirs.
func (e *Error) LanceCode() int { return int(e.Code) }

// lanceCoder is an error that carries a Lance code.
type lanceCoder interface{ LanceCode() int }

// Sentinels for errors.Is. Their messages are generic; errors returned by the
// store carry a specific message and the same code.
var (
	ErrUnsupported                = &Error{Code: CodeUnsupported}
	ErrNamespaceNotFound          = &Error{Code: CodeNamespaceNotFound}
	ErrNamespaceAlreadyExists     = &Error{Code: CodeNamespaceAlreadyExists}
	ErrNamespaceNotEmpty          = &Error{Code: CodeNamespaceNotEmpty}
	ErrTableNotFound              = &Error{Code: CodeTableNotFound}
	ErrTableAlreadyExists         = &Error{Code: CodeTableAlreadyExists}
	ErrTableIndexNotFound         = &Error{Code: CodeTableIndexNotFound}
	ErrTableIndexAlreadyExists    = &Error{Code: CodeTableIndexAlreadyExists}
	ErrTableTagNotFound           = &Error{Code: CodeTableTagNotFound}
	ErrTableTagAlreadyExists      = &Error{Code: CodeTableTagAlreadyExists}
	ErrTransactionNotFound        = &Error{Code: CodeTransactionNotFound}
	ErrTableVersionNotFound       = &Error{Code: CodeTableVersionNotFound}
	ErrTableColumnNotFound        = &Error{Code: CodeTableColumnNotFound}
	ErrInvalidInput               = &Error{Code: CodeInvalidInput}
	ErrConcurrentModification     = &Error{Code: CodeConcurrentModification}
	ErrPermissionDenied           = &Error{Code: CodePermissionDenied}
	ErrUnauthenticated            = &Error{Code: CodeUnauthenticated}
	ErrServiceUnavailable         = &Error{Code: CodeServiceUnavailable}
	ErrInternal                   = &Error{Code: CodeInternal}
	ErrInvalidTableState          = &Error{Code: CodeInvalidTableState}
	ErrTableSchemaValidationError = &Error{Code: CodeTableSchemaValidationError}
	ErrThrottling                 = &Error{Code: CodeThrottling}
	ErrTableBranchNotFound        = &Error{Code: CodeTableBranchNotFound}
	ErrTableBranchAlreadyExists   = &Error{Code: CodeTableBranchAlreadyExists}
)

// ErrorCode returns the Lance code carried by err (by an *Error, or by any
// error in its chain with a LanceCode method, such as the Go client's), or
// CodeInternal when it carries none. It returns -1 for a nil error.
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

// ErrorMessage returns the caller-safe message of err: the message of the
// *Error it wraps, or a generic text for anything else, so internal details
// never leak.
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Error()
	}
	return "internal error"
}
