package expr

import (
	"database/sql/driver"
	"testing"
)

func TestLikeMatch(t *testing.T) {
	tests := []struct {
		s, p string
		esc  rune
		fold bool
		want bool
	}{
		{"Hello", "Hello", '\\', false, true},
		{"Hello", "hello", '\\', false, false},
		{"Hello", "hello", '\\', true, true},
		{"Hello", "H%", '\\', false, true},
		{"Hello", "%o", '\\', false, true},
		{"Hello", "%ll%", '\\', false, true},
		{"Hello", "H_llo", '\\', false, true},
		{"Hello", "H_lo", '\\', false, false},
		{"", "%", '\\', false, true},
		{"", "_", '\\', false, false},
		{"abc", "%%%c", '\\', false, true},
		{"a%c", `a\%c`, '\\', false, true},
		{"abc", `a\%c`, '\\', false, false},
		{"a_c", "a!_c", '!', false, true},
		{"abc", "a!_c", '!', false, false},
		{`a\`, `a\`, '\\', false, true},
		{"ÄÖ", "äö", '\\', true, true},
		{"ΣΑΣ", "σας", '\\', true, true},
		{"straße", "STRASSE", '\\', true, false},
		{"aaaaaaaaaaaaaaaaaaaaaaaaaaaaab", "%a%a%a%a%a%a%c", '\\', false, false},
		{"日本語", "_本_", '\\', false, true},
	}
	for _, tt := range tests {
		if got := likeMatch(tt.s, tt.p, tt.esc, tt.fold); got != tt.want {
			t.Errorf("likeMatch(%q, %q, %q, %v) = %v", tt.s, tt.p, tt.esc, tt.fold, got)
		}
	}
}

func TestSubstr(t *testing.T) {
	tests := []struct {
		args []driver.Value
		want driver.Value
	}{
		{[]driver.Value{"hello", int64(2)}, "ello"},
		{[]driver.Value{"hello", int64(2), int64(3)}, "ell"},
		{[]driver.Value{"hello", int64(0), int64(2)}, "h"},
		{[]driver.Value{"hello", int64(-1), int64(3)}, "h"},
		{[]driver.Value{"hello", int64(-5)}, "hello"},
		{[]driver.Value{"hello", int64(9)}, ""},
		{[]driver.Value{"hello", int64(2), int64(0)}, ""},
		{[]driver.Value{"héllo", int64(2), int64(1)}, "é"},
		{[]driver.Value{"hello", int64(2), int64(9223372036854775807)}, "ello"},
		{[]driver.Value{nil, int64(2)}, nil},
		{[]driver.Value{"hello", nil}, nil},
		{[]driver.Value{"hello", int64(1), nil}, nil},
	}
	for _, tt := range tests {
		got, err := substr(tt.args)
		if err != nil || got != tt.want {
			t.Errorf("substr%v = %#v, %v; want %#v", tt.args, got, err, tt.want)
		}
	}
	if _, err := substr([]driver.Value{"x", int64(1), int64(-1)}); err == nil {
		t.Error("negative length: want an error")
	}
}

func TestArrayFuncs(t *testing.T) {
	tests := []struct {
		name string
		fn   func([]driver.Value) (driver.Value, error)
		args []driver.Value
		want driver.Value
	}{
		{"has int", arrayHasFunc, []driver.Value{"[1,2,3]", int64(2)}, true},
		{"has float", arrayHasFunc, []driver.Value{"[1,2.5]", 2.5}, true},
		{"int equals float", arrayHasFunc, []driver.Value{"[1.0]", int64(1)}, true},
		{"missing", arrayHasFunc, []driver.Value{"[1,2,3]", int64(4)}, false},
		{"string", arrayHasFunc, []driver.Value{`["a","b"]`, "b"}, true},
		{"string is not number", arrayHasFunc, []driver.Value{`["1"]`, int64(1)}, false},
		{"bool", arrayHasFunc, []driver.Value{"[true,false]", int64(0)}, true},
		{"binary", arrayHasFunc, []driver.Value{`["AP8="]`, []byte{0, 0xff}}, true},
		{"big ints", arrayHasFunc, []driver.Value{"[9007199254740993]", int64(9007199254740992)}, false},
		{"null element", arrayHasFunc, []driver.Value{"[null]", int64(0)}, false},
		{"null list", arrayHasFunc, []driver.Value{nil, int64(1)}, nil},
		{"json null", arrayHasFunc, []driver.Value{"null", int64(1)}, nil},
		{"null value", arrayHasFunc, []driver.Value{"[1]", nil}, nil},
		{"any", arraySetFunc(false), []driver.Value{"[1,2]", "[5,2]"}, true},
		{"any none", arraySetFunc(false), []driver.Value{"[1,2]", "[5]"}, false},
		{"any empty", arraySetFunc(false), []driver.Value{"[1,2]", "[]"}, false},
		{"all", arraySetFunc(true), []driver.Value{"[1,2,3]", "[3,1]"}, true},
		{"all missing", arraySetFunc(true), []driver.Value{"[1,2,3]", "[3,4]"}, false},
		{"all empty", arraySetFunc(true), []driver.Value{"[1]", "[]"}, true},
		{"all skips nulls", arraySetFunc(true), []driver.Value{"[1]", "[1,null]"}, true},
		{"set null", arraySetFunc(true), []driver.Value{"[1]", nil}, nil},
	}
	for _, tt := range tests {
		got, err := tt.fn(tt.args)
		if err != nil || got != tt.want {
			t.Errorf("%s: got %#v, %v; want %#v", tt.name, got, err, tt.want)
		}
	}
	if _, err := arrayHasFunc([]driver.Value{"[1,", int64(1)}); err == nil {
		t.Error("malformed JSON: want an error")
	}
}

func TestConversionFuncs(t *testing.T) {
	tests := []struct {
		name string
		fn   func([]driver.Value) (driver.Value, error)
		args []driver.Value
		want driver.Value
	}{
		{"dec from int", decCastFunc, []driver.Value{int64(12), int64(0), int64(2), int64(5), int64(0)}, int64(1200)},
		{"dec rescale", decCastFunc, []driver.Value{int64(1235), int64(2), int64(1), int64(0), int64(0)}, int64(124)},
		{"dec negative", decCastFunc, []driver.Value{int64(-1235), int64(2), int64(1), int64(0), int64(0)}, int64(-124)},
		{"dec from float", decCastFunc, []driver.Value{0.1, int64(0), int64(3), int64(0), int64(1)}, "0.100"},
		{"dec from text", decCastFunc, []driver.Value{"-0.5", int64(0), int64(2), int64(38), int64(1)}, "-0.50"},
		{"dec null", decCastFunc, []driver.Value{nil, int64(0), int64(2), int64(5), int64(0)}, nil},
		{"to text ts", toTextFunc, []driver.Value{int64(-1), int64(KindTimestamp), int64(Second), int64(0)}, "1969-12-31T23:59:59"},
		{"to text time", toTextFunc, []driver.Value{int64(1500), int64(KindTime), int64(Milli), int64(0)}, "00:00:01.500"},
		{"to text date64", toTextFunc, []driver.Value{int64(-1), int64(KindDate64), int64(0), int64(0)}, "1969-12-31"},
		{"to text decimal", toTextFunc, []driver.Value{int64(-5), int64(KindDecimal), int64(3), int64(5)}, "-0.005"},
		{"from text ts", fromTextFunc, []driver.Value{"1970-01-01T00:00:01.25", int64(KindTimestamp), int64(Milli), int64(0)}, int64(1250)},
		{"from text bool", fromTextFunc, []driver.Value{"FALSE", int64(KindBool), int64(0), int64(0)}, int64(0)},
		{"from text time", fromTextFunc, []driver.Value{"00:01", int64(KindTime), int64(Second), int64(0)}, int64(60)},
		{"from text null", fromTextFunc, []driver.Value{nil, int64(KindInt), int64(0), int64(0)}, nil},
		{"floordiv", floorDivFunc, []driver.Value{int64(-1), int64(1000)}, int64(-1)},
		{"floordiv exact", floorDivFunc, []driver.Value{int64(-2000), int64(1000)}, int64(-2)},
		{"floordiv null", floorDivFunc, []driver.Value{nil, int64(1000)}, nil},
	}
	for _, tt := range tests {
		got, err := tt.fn(tt.args)
		if err != nil || got != tt.want {
			t.Errorf("%s: got %#v, %v; want %#v", tt.name, got, err, tt.want)
		}
	}
	for _, args := range [][]driver.Value{
		{int64(99999), int64(0), int64(2), int64(5), int64(0)},
		{"x", int64(0), int64(2), int64(5), int64(0)},
		{"1", "0", int64(2), int64(5), int64(0)},
	} {
		if _, err := decCastFunc(args); err == nil {
			t.Errorf("lance_dec_cast%v: want an error", args)
		}
	}
}

func TestRegexpFlags(t *testing.T) {
	tests := []struct {
		s, pattern, flags string
		want              bool
	}{
		{"Hello", "^h", "", false},
		{"Hello", "^h", "i", true},
		{"Hello", "^h", "ic", false},
		{"a\nb", "^b$", "", false},
		{"a\nb", "^b$", "m", true},
		{"a\nb", "a.b", "s", true},
	}
	for _, tt := range tests {
		got, err := regexpLike([]driver.Value{tt.s, tt.pattern, tt.flags})
		if err != nil || got != tt.want {
			t.Errorf("regexp_like(%q, %q, %q) = %v, %v", tt.s, tt.pattern, tt.flags, got, err)
		}
	}
	if _, err := compileRegexp("a", "g"); err == nil {
		t.Error("flag g: want an error")
	}
}

func TestRegisterTwice(t *testing.T) {
	if err := Register(); err != nil {
		t.Fatal(err)
	}
	if err := Register(); err != nil {
		t.Fatal(err)
	}
}
