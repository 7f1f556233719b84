//go:build unix

package objstore

import (
	"fmt"
	"io/fs"
	"syscall"
)

// fileTag is the entity tag of a local file: its inode, size and
// modification time, which a rewrite or a rename over it changes.
func fileTag(info fs.FileInfo) string {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return fmt.Sprintf("%x-%x-%x", st.Ino, info.Size(), info.ModTime().UnixNano())
	}
	return fmt.Sprintf("%x-%x", info.Size(), info.ModTime().UnixNano())
}
