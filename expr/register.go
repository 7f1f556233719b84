package expr

import (
	"database/sql/driver"
	"errors"
	"strings"
	"sync"

	sqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

var (
	registerOnce sync.Once
	registerErr  error
)

// functionErrorMark starts the message of an error one of our SQL functions
// reports through SQLite, which carries only text: FunctionError finds the
// message after it.
const functionErrorMark = "lance function error: "

// Register registers the SQLite functions that compiled SQL calls (the
// lance_* functions of sqlFuncs) with modernc.org/sqlite, for connections
// opened afterwards. It is safe to call more than once; it returns the
// first registration error.
func Register() error {
	registerOnce.Do(func() {
		for _, f := range sqlFuncs {
			fn := f.fn
			err := sqlite.RegisterDeterministicScalarFunction(f.name, f.nArgs,
				func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
					v, err := fn(args)
					if err != nil {
						return nil, errors.New(functionErrorMark + err.Error())
					}
					return v, nil
				})
			if err != nil {
				registerErr = err
				return
			}
		}
	})
	return registerErr
}

// FunctionError returns the message of the error one of the registered SQL
// functions failed with, when err is the SQLite error reporting it, and
// false for any other error (SQLite's own failures included).
func FunctionError(err error) (string, bool) {
	var se *sqlite.Error
	if !errors.As(err, &se) || se.Code()&0xff != sqlite3.SQLITE_ERROR {
		return "", false
	}
	// The driver's text is "<SQLite's description>: <our message> (<code>)".
	_, msg, ok := strings.Cut(se.Error(), functionErrorMark)
	if !ok {
		return "", false
	}
	if i := strings.LastIndex(msg, " ("); i >= 0 && strings.HasSuffix(msg, ")") {
		msg = msg[:i]
	}
	return msg, true
}
