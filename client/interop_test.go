package client_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/lancens/lancens/client"
	"github.com/lancens/lancens/store"
)

// TestErrorsInterop checks that the client's errors and lancens's own
// agree on Lance codes without either importing the other: errors.Is
// matches across the two, and each package's ErrorCode reads the other's.
func TestErrorsInterop(t *testing.T) {
	c, err := client.New("http://127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	// An identifier the path cannot carry fails before anything is sent.
	_, err = c.DescribeNamespace(t.Context(), []string{"a", ""})
	err = fmt.Errorf("wrapped: %w", err)
	var ce *client.Error
	if !errors.As(err, &ce) || ce.StatusCode != 0 || ce.Code() != client.CodeInvalidInput {
		t.Fatalf("a bad identifier gives %#v, want a client error with code 13 and no status", err)
	}
	if !errors.Is(err, client.ErrInvalidInput) || !errors.Is(err, store.ErrInvalidInput) || errors.Is(err, store.ErrInternal) {
		t.Fatalf("%v does not match InvalidInput (alone) in both packages", err)
	}
	if store.ErrorCode(err) != store.CodeInvalidInput {
		t.Fatalf("store.ErrorCode = %v", store.ErrorCode(err))
	}
	serr := store.Errorf(store.CodeTableNotFound, "table t not found")
	if client.ErrorCode(serr) != client.CodeTableNotFound || !errors.Is(serr, client.ErrTableNotFound) {
		t.Fatalf("the client does not read the code of %v", serr)
	}
	for code := client.Code(0); code <= 23; code++ {
		if code.String() != store.Code(code).String() {
			t.Errorf("code %d is %s in the client, %s in store", code, code, store.Code(code))
		}
	}
}
