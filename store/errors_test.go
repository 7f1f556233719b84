package store

import (
	"errors"
	"fmt"
	"testing"
)

func TestErrorIs(t *testing.T) {
	err := fmt.Errorf("describe: %w", Errorf(CodeTableNotFound, "table t not found"))
	if !errors.Is(err, ErrTableNotFound) {
		t.Fatal("wrapped table-not-found does not match ErrTableNotFound")
	}
	if errors.Is(err, ErrNamespaceNotFound) {
		t.Fatal("table-not-found matches ErrNamespaceNotFound")
	}
	if got := ErrorCode(err); got != CodeTableNotFound {
		t.Fatalf("ErrorCode = %v", got)
	}
	if got := ErrorMessage(err); got != "table t not found" {
		t.Fatalf("ErrorMessage = %q", got)
	}
	plain := errors.New("disk on fire")
	if ErrorCode(plain) != CodeInternal || ErrorMessage(plain) != "internal error" {
		t.Fatalf("a plain error is %v %q, want Internal with a generic message", ErrorCode(plain), ErrorMessage(plain))
	}
	if ErrorCode(nil) != -1 {
		t.Fatal("ErrorCode(nil) != -1")
	}
	if Code(23).String() != "TableBranchAlreadyExists" || Code(99).String() != "Code(99)" {
		t.Fatal("Code.String")
	}
}

func TestParseModes(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want CreateMode
		ok   bool
	}{
		{"", ModeCreate, true}, {"Create", ModeCreate, true}, {"create", ModeCreate, true},
		{"ExistOk", ModeExistOk, true}, {"exist_ok", ModeExistOk, true}, {"EXIST_OK", ModeExistOk, true}, {"existok", ModeExistOk, true},
		{"Overwrite", ModeOverwrite, true}, {"OVERWRITE", ModeOverwrite, true},
		{"exists", 0, false}, {`"Create"`, 0, false},
	} {
		got, err := ParseCreateMode(tc.in)
		if (err == nil) != tc.ok || (tc.ok && got != tc.want) {
			t.Errorf("ParseCreateMode(%q) = %v, %v", tc.in, got, err)
		}
		if !tc.ok && ErrorCode(err) != CodeInvalidInput {
			t.Errorf("ParseCreateMode(%q) error code %v", tc.in, ErrorCode(err))
		}
	}
	if m, err := ParseDropMode("skip"); err != nil || m != DropSkip {
		t.Error("ParseDropMode(skip)")
	}
	if _, err := ParseDropMode("later"); ErrorCode(err) != CodeInvalidInput {
		t.Error("ParseDropMode(later)")
	}
	if b, err := ParseDropBehavior("CASCADE"); err != nil || b != DropCascade {
		t.Error("ParseDropBehavior(CASCADE)")
	}
	if _, err := ParseDropBehavior("gently"); ErrorCode(err) != CodeInvalidInput {
		t.Error("ParseDropBehavior(gently)")
	}
}

func TestPageTokens(t *testing.T) {
	for _, key := range []string{"a", "with space", "ü$/+", ""} {
		got, err := DecodePageToken(EncodePageToken(key))
		if err != nil || got != key {
			t.Errorf("round trip of %q = %q, %v", key, got, err)
		}
	}
	for _, bad := range []string{"!!", "bm90LXByZWZpeGVk"} {
		if _, err := DecodePageToken(bad); ErrorCode(err) != CodeInvalidInput {
			t.Errorf("DecodePageToken(%q) = %v, want InvalidInput", bad, err)
		}
	}
	if PageSize(0) != DefaultPageSize || PageSize(5) != 5 || PageSize(1<<30) != MaxPageSize {
		t.Error("PageSize")
	}
}

// foreignError carries a Lance code the way errors of packages that do
// not import store do (the Go client's).
type foreignError struct{ code int }

func (e foreignError) Error() string  { return "foreign" }
func (e foreignError) LanceCode() int { return e.code }

func TestForeignCodes(t *testing.T) {
	err := fmt.Errorf("call: %w", foreignError{int(CodeTableNotFound)})
	if got := ErrorCode(err); got != CodeTableNotFound {
		t.Fatalf("ErrorCode of a foreign error = %v, want TableNotFound", got)
	}
	if !errors.Is(Errorf(CodeInvalidInput, "x"), foreignError{int(CodeInvalidInput)}) ||
		errors.Is(Errorf(CodeInvalidInput, "x"), foreignError{int(CodeInternal)}) {
		t.Fatal("an *Error does not match the foreign errors of its code alone")
	}
}
