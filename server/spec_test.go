package server_test

import (
	"testing"

	"github.com/lancens/lancens/gen"
)

// TestEmbeddedSpecValid checks that the spec compiled into the binary is a
// valid OpenAPI document. The servers block is dropped first: its empty
// basePath default is inherited from upstream and trips the validator.
func TestEmbeddedSpecValid(t *testing.T) {
	doc, err := gen.GetSpec()
	if err != nil {
		t.Fatal(err)
	}
	doc.Servers = nil
	if err := doc.Validate(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := doc.Paths.Len(); n != 54 {
		t.Fatalf("%d paths", n)
	}
}
