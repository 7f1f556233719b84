package expr

import (
	"errors"
	"testing"

	"github.com/lancens/lancens/store"
)

// failingResolver returns its error for every path.
type failingResolver struct{ err error }

func (r failingResolver) Resolve([]string) (dbColumn, error) { return dbColumn{}, r.err }

func TestResolverErrorUnchanged(t *testing.T) {
	want := store.Errorf(store.CodeInvalidInput, "resolver says no")
	for _, src := range []string{"a", "a + 1 = 2", "lower(a) LIKE 'x'", "CAST(a AS INT)"} {
		e, err := Parse(src)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := compileSQL(e, failingResolver{want}); err != want {
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
		_, err = compileSQL(e, testColumns)
		if err == nil || err.Error() != tt.msg {
			t.Errorf("%s: got %v, want %q", tt.src, err, tt.msg)
		}
	}
}

// TestCastCodes checks what CAST accepts and the codes of what it
// rejects, and the type of what it accepts.
func TestCastCodes(t *testing.T) {
	tests := []struct {
		src  string
		to   Type
		code store.Code
	}{
		{"CAST('2024-01-01' AS TIMESTAMP(6))", Type{Kind: KindTimestamp, Unit: Micro}, -1},
		{"CAST('tomorrow' AS TIMESTAMP)", Type{}, store.CodeInvalidInput},
		{"CAST(st AS INT)", Type{}, store.CodeInvalidInput},
		{"CAST(l AS VARCHAR)", Type{}, store.CodeInvalidInput},
		{"CAST(nope AS TIMESTAMP)", Type{}, store.CodeTableColumnNotFound},
		{"CAST(dur AS TIMESTAMP)", Type{}, store.CodeInvalidInput},
		{"CAST(tss AS TIMESTAMP(9))", Type{Kind: KindTimestamp, Unit: Nano}, -1},
		{"CAST(d AS DECIMAL(30, 4))", decimalType(30, 4), -1},
	}
	for _, tt := range tests {
		e, err := Parse(tt.src)
		if err != nil {
			t.Fatal(err)
		}
		c, err := compileSQL(e, testColumns)
		if got := store.ErrorCode(err); got != tt.code {
			t.Errorf("%s: got %v (%v), want code %v", tt.src, got, err, tt.code)
		}
		if err == nil && !sameType(c.Type, tt.to) {
			t.Errorf("%s: got type %v", tt.src, c.Type)
		}
	}
	if _, err := compileSQL(nil, testColumns); !errors.Is(err, store.ErrInvalidInput) {
		t.Errorf("nil expression: got %v", err)
	}
}
