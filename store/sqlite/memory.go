package sqlite

import "github.com/lancens/lancens/internal/sysmem"

// DefaultCacheBytes returns the default read-cache budget: a quarter of the
// memory available to the process (sysmem.Available), or 2 GiB when it
// cannot be read.
func DefaultCacheBytes() int64 {
	return sysmem.Available() / 4
}
