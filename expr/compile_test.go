package expr

import (
	"errors"
	"testing"

	"github.com/lancens/lancens/store"
)

// failingResolver returns its error for every path.
type failingResolver struct{ err error }

func (r failingResolver) Resolve([]string) (Column, error) { return Column{}, r.err }

func TestResolverErrorUnchanged(t *testing.T) {
	want := store.Errorf(store.CodeInvalidInput, "resolver says no")
	for _, src := range []string{"a", "a + 1 = 2", "lower(a) LIKE 'x'", "CAST(a AS INT)"} {
		e, err := Parse(src)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Compile(e, failingResolver{want}); err != want {
			t.Errorf("%s: got %v, want the resolver's error", src, err)
		}
	}
}

func TestMessages(t *testing.T) {
	tests := []struct{ src, msg string }{
		{"s = 1", "cannot compare string with integer at position 3"},
		{"s + 1", "cannot apply + to string and integer at position 3"},
		{"foo(1)", "unknown function foo at position 1"},
		{"lower(s, s)", "lower expects 1 argument, got 2 at position 1"},
		{"substr(s)", "substr expects 2 to 3 arguments, got 1 at position 1"},
		{"coalesce()", "coalesce expects at least 1 argument, got 0 at position 1"},
		{"abs(s)", "argument 1 of abs must be integer or float or decimal or duration, not string at position 1"},
		{"i = 1 AND st = 1", "cannot compare struct values at position 14"},
		{"NOT s", "operand of NOT must be boolean, not string at position 1"},
		{"CAST('x' AS INT)", `cannot cast string to integer: invalid integer text "x" at position 1`},
		{"ts > 'soon'", `cannot parse "soon" as timestamp at position 4`},
	}
	for _, tt := range tests {
		e, err := Parse(tt.src)
		if err != nil {
			t.Fatal(err)
		}
		_, err = Compile(e, testColumns)
		if err == nil || err.Error() != tt.msg {
			t.Errorf("%s: got %v, want %q", tt.src, err, tt.msg)
		}
	}
}

func TestCompileAs(t *testing.T) {
	ts := Type{Kind: KindTimestamp, Unit: Micro}
	ints := Type{Kind: KindList, Elem: ptr(Type{Kind: KindInt})}
	tests := []struct {
		src  string
		to   Type
		code store.Code
	}{
		{"'2024-01-01'", ts, -1},
		{"'tomorrow'", ts, store.CodeInvalidInput},
		{"st", Type{Kind: KindInt}, store.CodeInvalidInput},
		{"l", ints, -1},
		{"[]", ints, -1},
		{"ls", ints, store.CodeInvalidInput},
		{"nope", ts, store.CodeTableColumnNotFound},
		{"dur", Type{Kind: KindDuration, Unit: Second}, -1},
		{"dur", ts, store.CodeInvalidInput},
	}
	for _, tt := range tests {
		e, err := Parse(tt.src)
		if err != nil {
			t.Fatal(err)
		}
		c, err := CompileAs(e, testColumns, tt.to)
		if got := store.ErrorCode(err); got != tt.code {
			t.Errorf("%s as %v: got %v (%v), want code %v", tt.src, tt.to, got, err, tt.code)
		}
		if err == nil && !sameType(c.Type, tt.to) {
			t.Errorf("%s as %v: got type %v", tt.src, tt.to, c.Type)
		}
	}
	if _, err := CompileAs(nil, testColumns, ts); !errors.Is(err, store.ErrInvalidInput) {
		t.Errorf("nil expression: got %v", err)
	}
}
