package vecindex

import (
	"golang.org/x/sys/cpu"

	"github.com/lancens/lancens/gen/simd"
)

// nearestKernel reports whether the CPU runs simd.L2Nearest.
var nearestKernel = cpu.X86.HasAVX2 && cpu.X86.HasFMA

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
