// Package cputime reads the CPU time the process has used, for benchmarks
// that report it beside wall-clock time.
package cputime
