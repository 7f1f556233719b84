//go:build !unix

package server_test

import "time"

// processCPU reports -1: the CPU time of the process is not read here.
func processCPU() time.Duration { return -1 }
