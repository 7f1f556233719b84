package blob

import (
	"os"
	"syscall"
)

// syncFileRangeWrite is sync_file_range's SYNC_FILE_RANGE_WRITE: start the
// writeback of the range's dirty pages, without waiting for it.
const syncFileRangeWrite = 2

// startWriteback asks the kernel to start writing n bytes of f from off to
// the disk, without waiting for them; a later Sync then has less to wait
// for. It is only a hint: an error changes nothing.
func startWriteback(f *os.File, off, n int64) {
	_ = syscall.SyncFileRange(int(f.Fd()), off, n, syncFileRangeWrite)
}
