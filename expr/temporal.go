package expr

import (
	"errors"
	"math"
	"strings"
	"time"
)

const (
	secondsPerDay = 86400
	nanosPerDay   = secondsPerDay * 1e9
)

var errTemporal = errors.New("malformed date or time")

// scanner reads fixed-format date and time text.
type scanner struct {
	s string
	i int
}

// digits reads between min and max decimal digits and returns their value
// and count; ok is false when fewer than min are present.
func (sc *scanner) digits(min, max int) (v int64, n int, ok bool) {
	for n < max && sc.i < len(sc.s) && isDigit(rune(sc.s[sc.i])) {
		v = v*10 + int64(sc.s[sc.i]-'0')
		sc.i++
		n++
	}
	return v, n, n >= min
}

// accept consumes c if it is next and reports whether it did.
func (sc *scanner) accept(c byte) bool {
	if sc.i < len(sc.s) && sc.s[sc.i] == c {
		sc.i++
		return true
	}
	return false
}

func (sc *scanner) done() bool { return sc.i == len(sc.s) }

// date reads YYYY-M[M]-D[D] and returns the day number since 1970-01-01. It
// returns errTemporal on bad input.
func (sc *scanner) date() (int64, error) {
	y, _, ok1 := sc.digits(4, 4)
	if !ok1 || !sc.accept('-') {
		return 0, errTemporal
	}
	m, _, ok2 := sc.digits(1, 2)
	if !ok2 || !sc.accept('-') {
		return 0, errTemporal
	}
	d, _, ok3 := sc.digits(1, 2)
	if !ok3 {
		return 0, errTemporal
	}
	t := time.Date(int(y), time.Month(m), int(d), 0, 0, 0, 0, time.UTC)
	if t.Year() != int(y) || int64(t.Month()) != m || int64(t.Day()) != d {
		return 0, errTemporal
	}
	return floorDiv(t.Unix(), secondsPerDay), nil
}

// clock reads HH:MM[:SS[.fraction]] and returns nanoseconds since midnight.
// It returns errTemporal on bad input.
func (sc *scanner) clock() (int64, error) {
	h, _, ok1 := sc.digits(2, 2)
	if !ok1 || h > 23 || !sc.accept(':') {
		return 0, errTemporal
	}
	m, _, ok2 := sc.digits(2, 2)
	if !ok2 || m > 59 {
		return 0, errTemporal
	}
	var s, frac int64
	if sc.accept(':') {
		var ok bool
		if s, _, ok = sc.digits(2, 2); !ok || s > 59 {
			return 0, errTemporal
		}
		if sc.accept('.') {
			f, n, ok := sc.digits(1, 9)
			if !ok {
				return 0, errTemporal
			}
			for ; n < 9; n++ {
				f *= 10
			}
			frac = f
		}
	}
	return ((h*60+m)*60+s)*1e9 + frac, nil
}

// offset reads an optional Z or ±HH[:MM] / ±HHMM and returns it in seconds
// east of UTC. It returns errTemporal on bad input.
func (sc *scanner) offset() (int64, error) {
	for sc.accept(' ') {
	}
	if sc.accept('Z') || sc.accept('z') || sc.done() {
		return 0, nil
	}
	sign := int64(1)
	switch {
	case sc.accept('-'):
		sign = -1
	case sc.accept('+'):
	default:
		return 0, errTemporal
	}
	h, _, ok := sc.digits(2, 2)
	if !ok || h > 23 {
		return 0, errTemporal
	}
	sc.accept(':')
	m, n, _ := sc.digits(2, 2)
	if n == 1 || m > 59 {
		return 0, errTemporal
	}
	return sign * (h*3600 + m*60), nil
}

// parseDate parses YYYY-MM-DD, or a timestamp whose time part is dropped,
// and returns days since 1970-01-01. It returns errTemporal on bad input.
func parseDate(s string) (int64, error) {
	if days, ok := dateOnly(s); ok {
		return days, nil
	}
	sec, _, err := parseTimestamp(s)
	if err != nil {
		return 0, err
	}
	return floorDiv(sec, secondsPerDay), nil
}

// dateOnly parses YYYY-MM-DD alone; ok is false for anything else.
func dateOnly(s string) (days int64, ok bool) {
	sc := &scanner{s: strings.TrimSpace(s)}
	days, err := sc.date()
	return days, err == nil && sc.done()
}

// parseTimestamp parses YYYY-MM-DD[(T| )HH:MM[:SS[.f]]][Z|±HH[:MM]] and
// returns seconds since the epoch (UTC) and the nanoseconds within that
// second. It returns errTemporal on bad input.
func parseTimestamp(s string) (sec, nsec int64, err error) {
	sc := &scanner{s: strings.TrimSpace(s)}
	days, err := sc.date()
	if err != nil {
		return 0, 0, err
	}
	var clock int64
	if sc.accept('T') || sc.accept('t') || sc.accept(' ') {
		if clock, err = sc.clock(); err != nil {
			return 0, 0, err
		}
	}
	off, err := sc.offset()
	if err != nil || !sc.done() {
		return 0, 0, errTemporal
	}
	return days*secondsPerDay + clock/1e9 - off, clock % 1e9, nil
}

// parseTime parses HH:MM[:SS[.f]] and returns nanoseconds since midnight,
// or errTemporal.
func parseTime(s string) (int64, error) {
	sc := &scanner{s: strings.TrimSpace(s)}
	v, err := sc.clock()
	if err != nil || !sc.done() {
		return 0, errTemporal
	}
	return v, nil
}

// timestampLiteral parses timestamp text into a nanosecond timestamp, or
// microseconds when nanoseconds overflow. It returns errTemporal on bad or
// out-of-range input.
func timestampLiteral(s string) (Type, konst, error) {
	sec, nsec, err := parseTimestamp(s)
	if err != nil {
		return Type{}, konst{}, err
	}
	for _, u := range []TimeUnit{Nano, Micro} {
		if v, ok := toUnit(sec, nsec, u); ok {
			return Type{Kind: KindTimestamp, Unit: u}, konst{v: v}, nil
		}
	}
	return Type{}, konst{}, errTemporal
}

// toUnit returns sec seconds plus nsec nanoseconds as a count of u,
// truncating finer digits; ok is false when the count overflows int64.
func toUnit(sec, nsec int64, u TimeUnit) (int64, bool) {
	per := u.perSecond()
	if sec > math.MaxInt64/per-1 || sec < math.MinInt64/per+1 {
		return 0, false
	}
	return sec*per + nsec/(1e9/per), true
}

// formatDate returns days since the epoch as YYYY-MM-DD.
func formatDate(days int64) string {
	return time.Unix(days*secondsPerDay, 0).UTC().Format("2006-01-02")
}

// formatTimestamp returns v counts of u since the epoch as
// YYYY-MM-DDTHH:MM:SS with a fraction of 3, 6 or 9 digits when not zero.
func formatTimestamp(v int64, u TimeUnit) string {
	per := u.perSecond()
	sec, frac := floorDiv(v, per), floorMod(v, per)
	return time.Unix(sec, 0).UTC().Format("2006-01-02T15:04:05") + fraction(frac*(1e9/per))
}

// formatTime returns v counts of u since midnight as HH:MM:SS[.fraction].
func formatTime(v int64, u TimeUnit) string {
	per := u.perSecond()
	sec, frac := floorDiv(v, per), floorMod(v, per)
	return time.Unix(sec, 0).UTC().Format("15:04:05") + fraction(frac*(1e9/per))
}

// fraction renders nanoseconds as "", ".ddd", ".dddddd" or ".ddddddddd",
// the shortest that is exact.
func fraction(nanos int64) string {
	if nanos == 0 {
		return ""
	}
	s := time.Unix(0, nanos).UTC().Format(".000000000")
	switch {
	case nanos%1e6 == 0:
		return s[:4]
	case nanos%1e3 == 0:
		return s[:7]
	}
	return s
}

// floorDiv returns a/b rounded toward negative infinity (b > 0).
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b < 0 {
		q--
	}
	return q
}

// floorMod returns a - b*floorDiv(a, b), which is in [0, b) for b > 0.
func floorMod(a, b int64) int64 {
	m := a % b
	if m < 0 {
		m += b
	}
	return m
}
