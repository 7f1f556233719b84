package sqlite

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/lancens/lancens/store"
)

// errLocked is what lockFile returns when another open file holds the lock.
var errLocked = errors.New("locked")

// dbLock is the exclusive lock a DB holds on its database for as long as
// it is open: one server per database. It is two OS locks, so it goes with
// the process that held it, however that process ends:
//
//   - flock(2) (LockFileEx on Windows) on a file beside the database,
//     named after the database's resolved path: its absolute path with
//     every symbolic link, "." and ".." resolved, so that every spelling of
//     the path and every symbolic link to the file or its directories finds
//     the same lock file. It records the holder's pid for the refusals.
//   - a lock on the database file itself (see lockFileIdentity), which a
//     second name of the same file, a hard link, meets too: a hard link
//     would otherwise be a second database with a WAL of its own, and the
//     commits of one server would be lost to the other.
type dbLock struct {
	f *os.File
	// file is the lock on the database file; nil where the platform has
	// none (see lockFileIdentity).
	file io.Closer
}

// lockPath returns the lock file of the database at resolved, its
// resolved path (see resolvePath).
func lockPath(resolved string) string { return resolved + ".lock" }

// resolvePath returns the absolute path of dbPath with every symbolic link
// resolved: of the file itself when it exists, else of its directory (the
// file is created there). It returns an error when the directory cannot be
// resolved either.
func resolvePath(dbPath string) (string, error) {
	abs, err := filepath.Abs(dbPath)
	if err != nil {
		return "", err
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		return r, nil
	}
	dir, err := filepath.EvalSymlinks(filepath.Dir(abs))
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, filepath.Base(abs)), nil
}

// lockDatabase takes the lock of the database at dbPath and writes the
// holder's pid and start time into the lock file. It returns an error
// naming the holder when another process — or another DB in this one —
// holds it under any name of the file, or when the lock file cannot be
// opened (ServiceUnavailable (17) when the directory is not writable).
func lockDatabase(dbPath string) (*dbLock, error) {
	resolved, err := resolvePath(dbPath)
	if err != nil {
		return nil, fmt.Errorf("sqlite: resolve database path %s: %w", dbPath, err)
	}
	path := lockPath(resolved)
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
	file, err := lockFileIdentity(dbPath, resolved)
	if err != nil {
		f.Close()
		return nil, err
	}
	return &dbLock{f: f, file: file}, nil
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
	var err error
	if l.file != nil {
		err = l.file.Close()
	}
	return errors.Join(err, l.f.Close())
}
