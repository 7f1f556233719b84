// Package pb is the root of the Go packages protoc-gen-go generates from
// the Lance format's protocol buffers in lance/proto (through
// tools/protogen): schemapb for the schema (file.proto), filepb for the
// file container (file2.proto), tablepb for dataset metadata (table.proto,
// transaction.proto and rowids.proto, which share the proto package
// lance.table), enc20pb for format 2.0's page encodings
// (encodings_v2_0.proto), enc21pb for those of format 2.1 and later
// (encodings_v2_1.proto), and one package per group of messages whose
// names would otherwise collide. Every *.pb.go file below it is generated
// by `make generate`; never edit one by hand. The packages are internal:
// lance/'s API speaks Go types, not protocol buffers.
package pb

//go:generate go tool protogen -I ../../proto -out ../../.. -module github.com/lancens/lancens file.proto file2.proto table.proto transaction.proto rowids.proto
//go:generate go tool protogen -I ../../proto -out ../../.. -module github.com/lancens/lancens encodings_v2_0.proto
//go:generate go tool protogen -I ../../proto -out ../../.. -module github.com/lancens/lancens encodings_v2_1.proto
