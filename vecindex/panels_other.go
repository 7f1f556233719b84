//go:build !amd64

package vecindex

// l2NearestAsm returns false: there is no assembly kernel for this CPU.
func l2NearestAsm(x, p []float32, blocks int, best *[8]int32, first, second *[8]float32) bool {
	return false
}
