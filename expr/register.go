package expr

import (
	"database/sql/driver"
	"sync"

	sqlite "modernc.org/sqlite"
)

var (
	registerOnce sync.Once
	registerErr  error
)

// Register registers lancens's SQLite functions (the lance_* functions of
// sqlFuncs) with modernc.org/sqlite, for connections opened afterwards:
// the indexes of an earlier release's row tables call them, and so does
// the SQL the tests render of a compiled expression. It is safe to call more than once; it returns the
// first registration error.
func Register() error {
	registerOnce.Do(func() {
		for _, f := range sqlFuncs {
			fn := f.fn
			err := sqlite.RegisterDeterministicScalarFunction(f.name, f.nArgs,
				func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
					return fn(args)
				})
			if err != nil {
				registerErr = err
				return
			}
		}
	})
	return registerErr
}
