// Command protogen turns .proto files into Go with protoc-gen-go, without
// protoc: it parses and links the files with protocompile (pure Go), then
// speaks the protoc plugin protocol to `go tool protoc-gen-go`, so both the
// compiler and the generator are pinned by go.mod. `make generate` runs it
// (see lance/internal/pb/generate.go):
//
//	go tool protogen -I ../../proto -out ../../.. -module github.com/lancens/lancens file2.proto …
//
// Each file's go_package option names the Go package it lands in; -module
// is stripped from that path to place the output under -out. Never edit
// its output by hand.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/bufbuild/protocompile"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/pluginpb"
)

func main() {
	include := flag.String("I", ".", "directory the .proto files and their imports are found in")
	out := flag.String("out", ".", "directory the module's root is at: generated files go below it")
	module := flag.String("module", "", "Go module path stripped from each go_package to place its file under -out")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: protogen [-I dir] [-out dir] [-module path] file.proto…")
		os.Exit(2)
	}
	if err := run(context.Background(), *include, *out, *module, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "protogen:", err)
		os.Exit(1)
	}
}

// run compiles files, asks protoc-gen-go for their Go code and writes it.
// It returns the first compile, plugin or write error.
func run(ctx context.Context, include, out, module string, files []string) error {
	compiler := protocompile.Compiler{
		Resolver:       protocompile.WithStandardImports(&protocompile.SourceResolver{ImportPaths: []string{include}}),
		SourceInfoMode: protocompile.SourceInfoStandard,
	}
	linked, err := compiler.Compile(ctx, files...)
	if err != nil {
		return err
	}
	req := &pluginpb.CodeGeneratorRequest{FileToGenerate: files}
	if module != "" {
		req.Parameter = proto.String("module=" + module)
	}
	seen := map[string]bool{}
	for _, f := range linked {
		addWithImports(req, f, seen)
	}
	resp, err := callPlugin(ctx, req)
	if err != nil {
		return err
	}
	for _, f := range resp.GetFile() {
		path := filepath.Join(out, filepath.FromSlash(f.GetName()))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(f.GetContent()), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// addWithImports appends f's descriptor to req after those of the files it
// imports, each once: the plugin protocol lists files in dependency order.
func addWithImports(req *pluginpb.CodeGeneratorRequest, f protoreflect.FileDescriptor, seen map[string]bool) {
	if seen[f.Path()] {
		return
	}
	seen[f.Path()] = true
	imports := f.Imports()
	for i := range imports.Len() {
		addWithImports(req, imports.Get(i).FileDescriptor, seen)
	}
	req.ProtoFile = append(req.ProtoFile, protodesc.ToFileDescriptorProto(f))
}

// callPlugin runs protoc-gen-go (pinned as a tool of the module) on req. It
// returns an error when the plugin cannot run or reports one.
func callPlugin(ctx context.Context, req *pluginpb.CodeGeneratorRequest) (*pluginpb.CodeGeneratorResponse, error) {
	in, err := proto.Marshal(req)
	if err != nil {
		return nil, err
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "go", "tool", "protoc-gen-go")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(in), &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("protoc-gen-go: %w: %s", err, stderr.Bytes())
	}
	resp := new(pluginpb.CodeGeneratorResponse)
	if err := proto.Unmarshal(stdout.Bytes(), resp); err != nil {
		return nil, fmt.Errorf("protoc-gen-go answer: %w", err)
	}
	if resp.Error != nil {
		return nil, fmt.Errorf("protoc-gen-go: %s", resp.GetError())
	}
	return resp, nil
}
