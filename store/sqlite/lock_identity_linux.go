package sqlite

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// fileID is a file's identity: its device and inode, the same under every
// name (hard link) of the file.
type fileID struct{ dev, ino uint64 }

// lockedFiles are the database files DBs of this process hold, by
// identity.
var lockedFiles = struct {
	sync.Mutex
	held map[fileID]bool
}{held: map[fileID]bool{}}

// fileLock is a held lock on a database file: an flock(2) on a descriptor
// of its own.
type fileLock struct {
	f  *os.File
	id fileID
}

// Close gives the lock up.
func (l *fileLock) Close() error {
	lockedFiles.Lock()
	defer lockedFiles.Unlock()
	delete(lockedFiles.held, l.id)
	return l.f.Close()
}

// lockFileIdentity takes an exclusive flock(2) on the database file at
// resolved (created empty when missing: SQLite reads an empty file as a new
// database), which every name of the file meets. dbPath names it in
// refusals. It returns an error naming the holder's pid when a DB of this
// process or another process holds it.
//
// Why flock, and why the bookkeeping: SQLite locks the database file with
// fcntl(2) record locks, which Linux keeps apart from flock locks on local
// file systems (and WAL mode, which lancens uses, needs a local file
// system), so this lock never meets SQLite's. But closing any descriptor of
// a file drops every fcntl lock the process holds on it: a second DB of
// this process that opened the file only to find it locked, and closed it,
// would strip the first DB's SQLite of its locks. So this process checks
// its own DBs first, by identity, and opens the file only when none holds
// it; and a DB closes its descriptor after SQLite has closed.
func lockFileIdentity(dbPath, resolved string) (io.Closer, error) {
	lockedFiles.Lock()
	defer lockedFiles.Unlock()
	var st unix.Stat_t
	err := unix.Stat(resolved, &st)
	if errors.Is(err, unix.ENOENT) {
		f, cerr := os.OpenFile(resolved, os.O_RDONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if cerr != nil && !errors.Is(cerr, os.ErrExist) {
			return nil, fmt.Errorf("sqlite: create %s: %w", dbPath, cerr)
		}
		if f != nil {
			f.Close()
		}
		err = unix.Stat(resolved, &st)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: stat %s: %w", dbPath, err)
	}
	id := fileID{dev: uint64(st.Dev), ino: st.Ino}
	if lockedFiles.held[id] {
		return nil, inUseByOther(dbPath, fmt.Sprintf("pid %d", os.Getpid()))
	}
	f, err := os.Open(resolved)
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", dbPath, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close() // no DB of this process has the file open: no SQLite lock is lost
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, inUseByOther(dbPath, flockHolder(id))
		}
		return nil, fmt.Errorf("sqlite: lock %s: %w", dbPath, err)
	}
	lockedFiles.held[id] = true
	return &fileLock{f: f, id: id}, nil
}

// inUseByOther is the refusal of a database file another DB holds under
// another name.
func inUseByOther(dbPath, holder string) error {
	return fmt.Errorf("sqlite: database %s is in use by another lancens (%s) under another name of the same file (a hard link): "+
		"only one server may open a database at a time, and each name would get a WAL of its own", dbPath, holder)
}

// flockHolder names the process holding an flock on the file id, from
// /proc/locks ("1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF"), or says
// it is unknown.
func flockHolder(id fileID) string {
	f, err := os.Open("/proc/locks")
	if err != nil {
		return "holder unknown"
	}
	defer f.Close()
	want := fmt.Sprintf("%02x:%02x:%d", unix.Major(id.dev), unix.Minor(id.dev), id.ino)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 6 && fields[1] == "FLOCK" && fields[5] == want {
			return "pid " + fields[4]
		}
	}
	return "holder unknown"
}
