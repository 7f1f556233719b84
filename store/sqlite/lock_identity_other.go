//go:build !linux

package sqlite

import "io"

// lockFileIdentity locks nothing beyond the resolved path's lock file on
// this platform: where flock(2) and SQLite's fcntl(2) locks may be one
// mechanism (the BSDs, macOS), a whole-file lock would stop SQLite's own.
// Two hard links to one database are not caught here.
func lockFileIdentity(dbPath, resolved string) (io.Closer, error) { return nil, nil }
