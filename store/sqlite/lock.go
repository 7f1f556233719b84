package sqlite

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/lancens/lancens/store"
)

// errLocked is what lockFile returns when another open file holds the lock.
var errLocked = errors.New("locked")

// dbLock is the exclusive lock a DB holds on its database file for as long
// as it is open: one server per database. It is an OS lock (flock(2), or
// LockFileEx on Windows) on a file beside the database, so it goes with the
// process that held it, however that process ends.
type dbLock struct {
	f *os.File
}

// lockPath returns the lock file of the database at dbPath.
func lockPath(dbPath string) string { return dbPath + ".lock" }

// lockDatabase takes the lock of the database at dbPath and writes the
// holder's pid and start time into the lock file. It returns an error
// naming the holder when another process — or another DB in this one —
// holds it, or when the lock file cannot be opened (ServiceUnavailable (17)
// when the directory is not writable).
func lockDatabase(dbPath string) (*dbLock, error) {
	path := lockPath(dbPath)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS) {
		return nil, &store.Error{Code: store.CodeServiceUnavailable, Cause: err, Message: fmt.Sprintf(
			"cannot create the lock file %s: lancens must be able to write to the database's directory; check its permissions and that the file system is mounted read-write", path)}
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: open lock file: %w", err)
	}
	if err := lockFile(f); err != nil {
		holder, _ := io.ReadAll(io.LimitReader(f, 512))
		f.Close()
		if errors.Is(err, errLocked) {
			return nil, fmt.Errorf("sqlite: database %s is in use by another lancens (%s; lock file %s): only one server may open a database at a time",
				dbPath, describeHolder(holder), path)
		}
		return nil, fmt.Errorf("sqlite: lock %s: %w", path, err)
	}
	info := fmt.Sprintf("pid %d\nstarted %s\n", os.Getpid(), time.Now().UTC().Format(time.RFC3339))
	if err := f.Truncate(0); err != nil {
		f.Close()
		return nil, fmt.Errorf("sqlite: write lock file: %w", err)
	}
	if _, err := f.WriteAt([]byte(info), 0); err != nil {
		f.Close()
		return nil, fmt.Errorf("sqlite: write lock file: %w", err)
	}
	return &dbLock{f: f}, nil
}

// describeHolder renders the content of a held lock file for a message.
func describeHolder(content []byte) string {
	s := strings.Join(strings.Fields(string(content)), " ")
	if s == "" {
		return "holder unknown"
	}
	return s
}

// release gives the lock up. The file stays: removing it would let a
// process that opened it just before lock a file nobody else sees.
func (l *dbLock) release() error {
	return l.f.Close()
}
