//go:build !unix

package objstore

import (
	"fmt"
	"io/fs"
)

// fileTag is the entity tag of a local file: its size and modification
// time.
func fileTag(info fs.FileInfo) string {
	return fmt.Sprintf("%x-%x", info.Size(), info.ModTime().UnixNano())
}
