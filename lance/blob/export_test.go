package blob

import (
	"os"
	"sync/atomic"
	"testing"
)

// CountSyncs counts the syncs Dir makes until the test ends.
func CountSyncs(t *testing.T) *atomic.Int64 {
	var n atomic.Int64
	old := syncFile
	syncFile = func(f *os.File) error {
		n.Add(1)
		return old(f)
	}
	t.Cleanup(func() { syncFile = old })
	return &n
}
