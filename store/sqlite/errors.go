package sqlite

import (
	"errors"
	"fmt"

	sqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/lancens/lancens/store"
)

// Messages of the storage failures a caller or an operator can act on.
const (
	msgDiskFull = "the database disk is full: lancens cannot write until space is freed on the disk that holds its database"
	msgReadOnly = "the database is read-only: lancens cannot write to its database file or the directory that holds it"
	msgBusy     = "the database is locked by another process; retry later"
)

// driverCode returns the primary result code of a SQLite error in err's
// chain, and false when err holds none.
func driverCode(err error) (int, bool) {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return 0, false
	}
	return se.Code() & 0xff, true
}

// storageError classifies a failure of the database itself: a full disk, a
// read-only database or a database another process keeps locked is
// ServiceUnavailable (17) with a message saying so and err as its cause.
// It returns nil for any other error.
func storageError(err error) *store.Error {
	code, ok := driverCode(err)
	if !ok {
		return nil
	}
	var msg string
	switch code {
	case sqlite3.SQLITE_FULL:
		msg = msgDiskFull
	case sqlite3.SQLITE_READONLY:
		msg = msgReadOnly
	case sqlite3.SQLITE_BUSY:
		msg = msgBusy
	default:
		return nil
	}
	return &store.Error{Code: store.CodeServiceUnavailable, Message: msg, Cause: err}
}

// storeError returns err with storage failures classified (see
// storageError); errors that already carry a Lance code, and all others,
// are returned as they are.
func storeError(err error) error {
	var se *store.Error
	if err == nil || errors.As(err, &se) {
		return err
	}
	if s := storageError(err); s != nil {
		return s
	}
	return err
}

// internal wraps an unexpected error of operation op; storage failures
// become ServiceUnavailable (17) instead (see storageError).
func internal(op string, err error) error {
	if s := storageError(err); s != nil {
		return s
	}
	return fmt.Errorf("sqlite: %s: %w", op, err)
}

// openError explains a failure to open the database at path: a database
// lancens may not write, or cannot open or create, is ServiceUnavailable
// (17) with a message that names the file and says what to check. Other
// errors are returned as they are.
func openError(path string, err error) error {
	code, _ := driverCode(err)
	switch code {
	case sqlite3.SQLITE_READONLY:
		return &store.Error{Code: store.CodeServiceUnavailable, Cause: err, Message: fmt.Sprintf(
			"the database %s is read-only: lancens must be able to write to the file and to its directory (for the -wal and -shm files beside it); check their permissions and that the file system is mounted read-write", path)}
	case sqlite3.SQLITE_CANTOPEN:
		return &store.Error{Code: store.CodeServiceUnavailable, Cause: err, Message: fmt.Sprintf(
			"cannot open the database %s: check that it is a file (or does not exist yet) in a directory lancens may write to", path)}
	case sqlite3.SQLITE_FULL:
		return &store.Error{Code: store.CodeServiceUnavailable, Cause: err, Message: fmt.Sprintf(
			"cannot open the database %s: the disk that holds it is full", path)}
	}
	return err
}

// isConstraint reports whether err is a SQLite UNIQUE or PRIMARY KEY
// constraint violation.
func isConstraint(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() {
	case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
		return true
	}
	return false
}
