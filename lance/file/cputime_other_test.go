//go:build !unix

package file_test

import (
	"testing"
	"time"
)

// processCPU returns 0 where the process's CPU time is not known.
func processCPU(*testing.B) time.Duration { return 0 }
