//go:build tools

// Package tools pins the code generators of lancens.
//
// go.mod's `tool` directive is what runs them: gen/generate.go calls
// `go tool oapi-codegen`, at the version go.mod requires. This file imports
// the same command under the `tools` build tag, which no build sets, so
// that the generator is a visible, direct dependency of the module for
// readers and for tools that predate the directive (go mod tidy keeps it
// required either way). `make generate` must reproduce gen/ byte for byte
// (`make check-generated`).
package tools

import (
	_ "github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen"
)
