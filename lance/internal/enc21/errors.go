package enc21

import (
	"errors"
	"fmt"
)

var (
	// ErrCorrupt reports a page that does not decode: an offset, length,
	// count or width that contradicts the buffers or the layout.
	ErrCorrupt = errors.New("corrupt Lance page")
	// ErrUnsupported reports a well-formed page that uses an encoding
	// this package does not decode.
	ErrUnsupported = errors.New("unsupported Lance encoding")
	// ErrTooLarge reports a page that would decode to more than the
	// Limits allow.
	ErrTooLarge = errors.New("Lance page exceeds the decoding limits")
)

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}

func unsupported(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUnsupported, fmt.Sprintf(format, args...))
}

// Limits bound what decoding one page may allocate. Every size a page
// declares (rows, items, dictionary entries, decompressed lengths) is
// checked against them before memory is allocated for it.
type Limits struct {
	// MaxItems is the most rows, items or levels one page may declare.
	MaxItems uint64
	// MaxBytes is the most bytes one page may decode to, counted over
	// values, levels and decompressed buffers.
	MaxBytes uint64
}

// DefaultLimits fit every page Lance writes (its pages hold a few
// megabytes) with room to spare, while refusing pages that declare sizes
// no real writer produces.
var DefaultLimits = Limits{MaxItems: 1 << 28, MaxBytes: 1 << 31}

// budget counts what a page decodes to against the Limits.
type budget struct {
	lim   Limits
	bytes uint64
}

func newBudget(lim Limits) *budget {
	if lim.MaxItems == 0 {
		lim.MaxItems = DefaultLimits.MaxItems
	}
	if lim.MaxBytes == 0 {
		lim.MaxBytes = DefaultLimits.MaxBytes
	}
	return &budget{lim: lim}
}

// items checks a declared count.
func (b *budget) items(n uint64, what string) error {
	if n > b.lim.MaxItems {
		return fmt.Errorf("%w: %s declares %d entries (limit %d)", ErrTooLarge, what, n, b.lim.MaxItems)
	}
	return nil
}

// take accounts for n bytes about to be allocated.
func (b *budget) take(n uint64, what string) error {
	if n > b.lim.MaxBytes || b.bytes > b.lim.MaxBytes-n {
		return fmt.Errorf("%w: %s would need %d more bytes (limit %d)", ErrTooLarge, what, n, b.lim.MaxBytes)
	}
	b.bytes += n
	return nil
}

// mulCheck returns a*b, or an error when it overflows or passes limit.
func mulCheck(a, b, limit uint64, what string) (uint64, error) {
	if a != 0 && b > limit/a {
		return 0, corrupt("%s: %d × %d is out of range", what, a, b)
	}
	return a * b, nil
}
