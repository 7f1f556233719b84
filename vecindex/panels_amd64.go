package vecindex

import (
	"golang.org/x/sys/cpu"

	"github.com/lancens/lancens/vecindex/internal/simd"
)

// nearestKernel reports whether the CPU runs simd.L2Nearest.
var nearestKernel = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// l2Kernel reports whether l2Bounded runs simd.L2Bounded, which needs only
// SSE, part of every amd64 CPU; tests turn it off to compare with the Go
// version.
var l2Kernel = true

// l2BoundedAsm returns simd.L2Bounded(a, b, limit) and true, or false when
// l2Kernel is off. b must hold len(a) values.
func l2BoundedAsm(a, b []float32, limit float32) (float32, bool) {
	if !l2Kernel {
		return 0, false
	}
	return simd.L2Bounded(a, b, limit), true
}

// l2NearestAsm runs simd.L2Nearest and returns true, or returns false when
// the CPU lacks the instructions it needs. It panics when p holds fewer
// than blocks×8 vectors of len(x) values.
func l2NearestAsm(x, p []float32, blocks int, best *[8]int32, first, second *[8]float32) bool {
	if !nearestKernel {
		return false
	}
	if len(p) < blocks*8*len(x) {
		panic("vecindex: panels shorter than their blocks")
	}
	simd.L2Nearest(x, p, blocks, best, first, second)
	return true
}
