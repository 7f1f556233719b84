package v21

import (
	"fmt"

	"github.com/lancens/lancens/lance/file/internal/encoding"
)

var (
	corrupt     = encoding.Corruptf
	unsupported = encoding.Unsupportedf
)

// maxItems bounds every count a page declares (rows, items, levels,
// dictionary entries): no page Lance writes comes near it, and below it
// every count fits an int and every product of a count and a width is
// checked against the budget before allocation.
const maxItems = 1 << 31

// budget charges what decoding allocates to the read's encoding.Budget.
type budget struct {
	b *encoding.Budget
}

// items checks a declared count.
func (b budget) items(n uint64, what string) error {
	if n > maxItems {
		return corrupt("%s declares %d entries", what, n)
	}
	return nil
}

// take charges n bytes about to be allocated.
func (b budget) take(n uint64, what string) error {
	if err := b.b.Take(n); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// mulCheck returns a*b, or an error when it overflows or passes limit.
func mulCheck(a, b, limit uint64, what string) (uint64, error) {
	if a != 0 && b > limit/a {
		return 0, corrupt("%s: %d × %d is out of range", what, a, b)
	}
	return a * b, nil
}
