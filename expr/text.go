package expr

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

var errBool = errors.New("malformed boolean")

// typeCode encodes a type for the SQL functions lance_from_text and
// lance_to_text: its kind, then the unit (temporal kinds) or scale and
// precision (decimals).
func typeCode(t Type) (kind, p1, p2 int64) {
	if t.Kind == KindDecimal {
		return int64(t.Kind), int64(t.Scale), int64(t.Precision)
	}
	return int64(t.Kind), int64(t.Unit), 0
}

// typeFromCode reverses typeCode.
func typeFromCode(kind, p1, p2 int64) Type {
	t := Type{Kind: Kind(kind)}
	if t.Kind == KindDecimal {
		t.Scale, t.Precision = int(p1), int(p2)
	} else {
		t.Unit = TimeUnit(p1)
	}
	return t
}

// fromText parses s as a value of type t and returns its storage value. It
// returns an error naming s when s is malformed or out of range, or t is
// not one of boolean, integer, float, decimal, date, timestamp and time.
func fromText(s string, t Type) (any, error) {
	v, err := parseAs(strings.TrimSpace(s), t)
	if err != nil {
		return nil, fmt.Errorf("invalid %s text %q", t, s)
	}
	return v, nil
}

// parseAs does the work of fromText on trimmed text. It returns an error on
// bad input.
func parseAs(trimmed string, t Type) (any, error) {
	switch t.Kind {
	case KindBool:
		switch strings.ToLower(trimmed) {
		case "true", "t", "yes", "y", "on", "1":
			return int64(1), nil
		case "false", "f", "no", "n", "off", "0":
			return int64(0), nil
		}
		return nil, errBool
	case KindInt:
		return strconv.ParseInt(trimmed, 10, 64)
	case KindFloat:
		return strconv.ParseFloat(trimmed, 64)
	case KindDecimal:
		r, err := parseDecimal(trimmed)
		if err != nil {
			return nil, err
		}
		return decimalStorage(r, t.Scale, t.Precision, t.textDecimal())
	case KindDate32:
		return parseDate(trimmed)
	case KindDate64:
		days, err := parseDate(trimmed)
		return days * secondsPerDay * 1000, err
	case KindTimestamp:
		sec, nsec, err := parseTimestamp(trimmed)
		if err != nil {
			return nil, err
		}
		v, ok := toUnit(sec, nsec, t.Unit)
		if !ok {
			return nil, errRange
		}
		return v, nil
	case KindTime:
		nanos, err := parseTime(trimmed)
		return nanos / (1e9 / t.Unit.perSecond()), err
	}
	return nil, errRange
}

// toText formats the storage value v of type t (boolean, decimal, date,
// timestamp or time) as text. It returns an error for a malformed decimal
// or another type.
func toText(v any, t Type) (string, error) {
	n, isInt := v.(int64)
	switch {
	case t.Kind == KindBool && isInt:
		return strconv.FormatBool(n != 0), nil
	case t.Kind == KindDecimal:
		r, err := decimalOf(v, t.Scale)
		if err != nil {
			return "", err
		}
		return formatDecimal(unscaled(r, t.Scale), t.Scale), nil
	case t.Kind == KindDate32 && isInt:
		return formatDate(n), nil
	case t.Kind == KindDate64 && isInt:
		return formatDate(floorDiv(n, secondsPerDay*1000)), nil
	case t.Kind == KindTimestamp && isInt:
		return formatTimestamp(n, t.Unit), nil
	case t.Kind == KindTime && isInt:
		return formatTime(n, t.Unit), nil
	}
	return "", errors.New("unsupported conversion from " + t.String() + " to string")
}
