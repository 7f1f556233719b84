//go:build !unix

package main

import "time"

// processCPU returns 0 where the process's CPU time is not known.
func processCPU() time.Duration { return 0 }
