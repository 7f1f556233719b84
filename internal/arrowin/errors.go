package arrowin

import "fmt"

// Error is why a Reader refused a body. Its message is safe to show the
// caller: it names sizes, counts and columns, never the body's bytes.
type Error struct {
	// Unsupported marks a column of a type a Reader does not accept (unions,
	// run-end encoded and list-view columns); every other Error is bad
	// input.
	Unsupported bool
	// TooLarge marks a body larger than Limits.MaxBodyBytes (what it sent
	// or what its messages declare); every other limit is bad input.
	TooLarge bool
	msg      string
	cause    error // a failed read of the body, if that is what happened
}

func (e *Error) Error() string { return e.msg }

// Unwrap returns the read error behind e, if any.
func (e *Error) Unwrap() error { return e.cause }

func invalid(format string, args ...any) *Error {
	return &Error{msg: fmt.Sprintf(format, args...)}
}

// corrupt is the error of metadata whose structure is broken.
func corrupt(format string, args ...any) *Error {
	return invalid("corrupt Arrow metadata: "+format, args...)
}

// unsupported is the error of a column type a Reader does not accept.
func unsupported(format string, args ...any) *Error {
	e := invalid(format, args...)
	e.Unsupported = true
	return e
}
