//go:build tools

// Package tools pins the code generators of lancens.
//
// go.mod's `tool` directive is what runs them: gen/generate.go and
// gen/apiclient/generate.go call `go tool oapi-codegen` (the server and
// the client side of the API code, in two packages so that the client
// links nothing of the server's), vecindex/internal/simd/generate.go
// `go tool simdgen` (our own generator, tools/simdgen, which writes
// assembly with avo), and lance/internal/pb/generate.go `go tool
// protogen` (our own driver, tools/protogen, which compiles .proto files
// with protocompile and runs protoc-gen-go on them, so no protoc binary
// is needed), at the versions go.mod requires. This file imports the same
// packages under the `tools` build tag, which no build sets, so that the
// generators are visible, direct dependencies of the module for readers
// and for tools that predate the directive (go mod tidy keeps them
// required either way). `make generate` must reproduce all their output
// byte for byte (`make check-generated`).
package tools

import (
	_ "github.com/bufbuild/protocompile"
	_ "github.com/mmcloughlin/avo/build"
	_ "github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen"
	_ "google.golang.org/protobuf/cmd/protoc-gen-go"
)
