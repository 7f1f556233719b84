package objstore

import (
	"os"
	"sync/atomic"
	"testing"
)

// CountSyncs counts the file and directory syncs of Dir operations until
// t ends. Tests that call it must not run in parallel.
func CountSyncs(t testing.TB) *atomic.Int64 {
	n := new(atomic.Int64)
	sync := syncFile
	syncFile = func(f *os.File) error {
		n.Add(1)
		return sync(f)
	}
	t.Cleanup(func() { syncFile = sync })
	return n
}
