package expr

import (
	"strconv"

	"github.com/lancens/lancens/store"
)

// maxDepth bounds how deeply expressions may nest, so that neither the
// parser, the compiler nor SQLite (whose own limit is 1000) runs out of
// stack.
const maxDepth = 256

// syntaxErr returns an invalid-input error naming the 1-based position.
func syntaxErr(pos int, format string, args ...any) error {
	e := store.Errorf(store.CodeInvalidInput, format, args...)
	e.Message = "syntax error at position " + strconv.Itoa(pos) + ": " + e.Message
	return e
}

// invalid returns an invalid-input error with a formatted message.
func invalid(format string, args ...any) error {
	return store.Errorf(store.CodeInvalidInput, format, args...)
}
