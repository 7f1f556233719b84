package store

import (
	"fmt"
	"strings"
)

// CommitDurability is what an acknowledged commit of a table version
// survives: the commit's final manifest and its version record. It is
// chosen by the operator (lancens serve --commit-durability) and applies
// to the commits the coordinator makes (version/create, batch commits);
// the warehouse and the backend each honour it for their half.
type CommitDurability int

const (
	// DurabilityFull syncs a commit to disk before it is acknowledged:
	// the manifest file (on local disk) and the version record (SQLite's
	// synchronous mode, --sync). The commit survives a power loss or a
	// crash of the operating system.
	DurabilityFull CommitDurability = iota
	// DurabilityProcess writes a commit without syncing it: the manifest
	// is linked under its final name and the record written to SQLite's
	// log (synchronous NORMAL), both into the operating system's cache.
	// The commit survives a crash of the lancens process (kill -9), whose
	// writes the kernel keeps, but not necessarily a power loss or a
	// kernel crash. This is what Lance's directory namespace offers: it
	// syncs nothing.
	DurabilityProcess
)

// ParseCommitDurability reads "full" or "process" (any case). It returns
// an error naming the accepted values otherwise.
func ParseCommitDurability(s string) (CommitDurability, error) {
	switch strings.ToLower(s) {
	case "full":
		return DurabilityFull, nil
	case "process":
		return DurabilityProcess, nil
	}
	return 0, fmt.Errorf("unknown commit durability %q (full or process)", s)
}

// String returns the name ParseCommitDurability reads.
func (d CommitDurability) String() string {
	if d == DurabilityProcess {
		return "process"
	}
	return "full"
}
