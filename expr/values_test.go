package expr

import (
	"math/big"
	"testing"
)

func TestParseTimestamp(t *testing.T) {
	tests := []struct {
		s         string
		sec, nsec int64
		ok        bool
	}{
		{"1970-01-01", 0, 0, true},
		{"1970-01-01 00:00:01", 1, 0, true},
		{"1970-01-01T00:00:01.5", 1, 500000000, true},
		{"1970-01-01t00:01", 60, 0, true},
		{"1970-01-01 00:00:00.123456789", 0, 123456789, true},
		{"1970-01-01 00:00:00Z", 0, 0, true},
		{"1970-01-01 01:00:00+01:00", 0, 0, true},
		{"1970-01-01 01:00:00 +0100", 0, 0, true},
		{"1969-12-31 23:00:00-01", 0, 0, true},
		{" 2024-02-29 12:00:00 ", 1709208000, 0, true},
		{"2023-02-29", 0, 0, false},
		{"2024-13-01", 0, 0, false},
		{"2024-01-01 24:00:00", 0, 0, false},
		{"2024-01-01 12:60", 0, 0, false},
		{"2024-01-01 12:00:00.", 0, 0, false},
		{"2024-01-01 12:00:00.1234567890", 0, 0, false},
		{"2024-01-01 12:00:00+1", 0, 0, false},
		{"2024-01-01x", 0, 0, false},
		{"24-01-01", 0, 0, false},
		{"", 0, 0, false},
	}
	for _, tt := range tests {
		sec, nsec, err := parseTimestamp(tt.s)
		if (err == nil) != tt.ok || (tt.ok && (sec != tt.sec || nsec != tt.nsec)) {
			t.Errorf("parseTimestamp(%q) = %d, %d, %v", tt.s, sec, nsec, err)
		}
	}
}

func TestFormatTemporal(t *testing.T) {
	tests := []struct {
		got, want string
	}{
		{formatDate(0), "1970-01-01"},
		{formatDate(-1), "1969-12-31"},
		{formatDate(19723), "2024-01-01"},
		{formatTimestamp(0, Second), "1970-01-01T00:00:00"},
		{formatTimestamp(-1, Milli), "1969-12-31T23:59:59.999"},
		{formatTimestamp(1500, Micro), "1970-01-01T00:00:00.001500"},
		{formatTimestamp(1, Nano), "1970-01-01T00:00:00.000000001"},
		{formatTime(3600*1e6+5, Micro), "01:00:00.000005"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}

func TestDecimal(t *testing.T) {
	tests := []struct {
		text   string
		scale  int
		want   string // formatted at scale, or "error"
		intVal int64
	}{
		{"1.5", 2, "1.50", 150},
		{"-1.005", 2, "-1.01", -101},
		{"1.004", 2, "1.00", 100},
		{".5", 0, "1", 1},
		{"-.5", 0, "-1", -1},
		{"5.", 1, "5.0", 50},
		{"1e3", 1, "1000.0", 10000},
		{"1.5E-1", 3, "0.150", 150},
		{"+7", 0, "7", 7},
		{"0.001", 3, "0.001", 1},
		{"-0.001", 3, "-0.001", -1},
		{"123", -1, "120", 12},
		{"1/3", 2, "error", 0},
		{"1e401", 2, "error", 0},
		{"--1", 2, "error", 0},
		{"1.2.3", 2, "error", 0},
		{"", 2, "error", 0},
		{"e5", 2, "error", 0},
	}
	for _, tt := range tests {
		r, err := parseDecimal(tt.text)
		if tt.want == "error" {
			if err == nil {
				t.Errorf("parseDecimal(%q): want an error", tt.text)
			}
			continue
		}
		if err != nil {
			t.Errorf("parseDecimal(%q): %v", tt.text, err)
			continue
		}
		u := unscaled(r, tt.scale)
		if got := formatDecimal(u, tt.scale); got != tt.want || u.Int64() != tt.intVal {
			t.Errorf("%q at scale %d: got %s (%d), want %s (%d)", tt.text, tt.scale, got, u, tt.want, tt.intVal)
		}
	}
	if _, err := decimalStorage(big.NewRat(1000, 1), 0, 3, false); err == nil {
		t.Error("1000 in decimal(3,0): want an error")
	}
	if v, err := decimalStorage(big.NewRat(-999, 1), 0, 3, true); err != nil || v != "-999" {
		t.Errorf("-999 in decimal(3,0): got %v, %v", v, err)
	}
}
