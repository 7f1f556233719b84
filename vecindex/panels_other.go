//go:build !amd64

package vecindex

// nearestKernel and l2Kernel are off: this CPU has no assembly kernels.
var nearestKernel, l2Kernel = false, false

// l2NearestAsm returns false: there is no assembly kernel for this CPU.
func l2NearestAsm(x, p []float32, blocks int, best *[8]int32, first, second *[8]float32) bool {
	return false
}

// l2BoundedAsm returns false: there is no assembly kernel for this CPU.
func l2BoundedAsm(a, b []float32, limit float32) (float32, bool) {
	return 0, false
}
