package main

import (
	"fmt"
	"strconv"
	"strings"
)

// byteUnits are the suffixes a size may carry, largest first; they are
// binary multiples, whether written KiB or K.
var byteUnits = []struct {
	suffix string
	shift  uint
}{{"TIB", 40}, {"GIB", 30}, {"MIB", 20}, {"KIB", 10}, {"T", 40}, {"G", 30}, {"M", 20}, {"K", 10}, {"B", 0}}

// parseBytes reads a size in bytes: a whole number, optionally followed by
// KiB, MiB, GiB or TiB (or K, M, G, T: the same binary multiples). It
// returns an error for anything else, a size below 1 or one that overflows.
func parseBytes(s string) (int64, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	var shift uint
	for _, u := range byteUnits {
		if strings.HasSuffix(t, u.suffix) {
			t, shift = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.shift
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 1 || n > (1<<62)>>shift {
		return 0, fmt.Errorf("bad size %q: want a positive whole number of bytes, optionally with KiB, MiB, GiB or TiB", s)
	}
	return n << shift, nil
}

// formatBytes writes n with the largest binary unit that divides it.
func formatBytes(n int64) string {
	for _, u := range byteUnits[:4] {
		if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return strconv.FormatInt(n>>u.shift, 10) + u.suffix[:1] + "iB"
		}
	}
	return strconv.FormatInt(n, 10)
}

// byteSize is a flag.Value holding a size in bytes.
type byteSize struct{ p *int64 }

func (b byteSize) String() string {
	if b.p == nil {
		return ""
	}
	return formatBytes(*b.p)
}

func (b byteSize) Set(s string) error {
	n, err := parseBytes(s)
	if err != nil {
		return err
	}
	*b.p = n
	return nil
}
