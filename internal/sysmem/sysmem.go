// Package sysmem tells how much memory the process may use, for the
// defaults of the memory bounds (read cache, decode budget, memory limit).
package sysmem

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
)

// fallbackMemory is the memory assumed when the machine's cannot be read.
const fallbackMemory = 8 << 30

// Available returns the memory available to the process: the smaller of
// the physical memory (/proc/meminfo) and the cgroup's memory limit, or 8
// GiB when neither can be read.
func Available() int64 {
	return availableMemory(os.ReadFile)
}

// availableMemory returns the smaller of the physical memory and the
// cgroup (v2, else v1) memory limit, reading files with read; or
// fallbackMemory when none is known.
func availableMemory(read func(string) ([]byte, error)) int64 {
	best := int64(0)
	consider := func(n int64) {
		if n > 0 && (best == 0 || n < best) {
			best = n
		}
	}
	if b, err := read("/proc/meminfo"); err == nil {
		consider(memTotal(b))
	}
	for _, path := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		if b, err := read(path); err == nil {
			// "max" (v2) and the v1 "no limit" value (near 2^63) leave
			// the physical memory as the bound.
			if n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && n < 1<<60 {
				consider(n)
			}
		}
	}
	if best == 0 {
		return fallbackMemory
	}
	return best
}

// memTotal returns the MemTotal of /proc/meminfo in bytes, or 0.
func memTotal(meminfo []byte) int64 {
	sc := bufio.NewScanner(bytes.NewReader(meminfo))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}
