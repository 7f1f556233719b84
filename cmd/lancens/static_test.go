package main

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// TestStaticBinary builds lancens as `make build` does (CGO_ENABLED=0) and
// checks that the binary needs no dynamic libraries: no ELF interpreter and
// no DT_NEEDED entries, what makes ldd say "not a dynamic executable".
func TestStaticBinary(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("static binaries are checked on Linux, where they are ELF files")
	}
	bin := filepath.Join(t.TempDir(), "lancens")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Fatal("the binary has an ELF interpreter: it is dynamically linked")
		}
	}
	libs, err := f.ImportedLibraries()
	if err != nil {
		t.Fatal(err)
	}
	if len(libs) > 0 {
		t.Fatalf("the binary needs dynamic libraries %q", libs)
	}
	if ldd, err := exec.LookPath("ldd"); err == nil {
		out, _ := exec.Command(ldd, bin).CombinedOutput()
		t.Logf("ldd: %s", out)
	}
}
