package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/store/sqlite"
)

// helperEnv names the environment variable that makes the test binary run
// `lancens serve` with the JSON-encoded arguments it holds instead of the
// tests: the child process of TestServeReadOnly when the tests run as root.
const helperEnv = "LANCENS_TEST_SERVE_ARGS"

// serveHelper runs serve with the JSON-encoded args for at most 10 s and
// prints the Lance code and the text of its error.
func serveHelper(raw string) {
	var args []string
	if err := json.Unmarshal([]byte(raw), &args); err != nil {
		fmt.Println("bad arguments:", err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := run(ctx, args, func(string) string { return "" }, io.Discard, io.Discard)
	fmt.Printf("code=%d\nerror: %v\n", store.ErrorCode(err), err)
}

// TestServeReadOnly starts `lancens serve` on a database it may not write
// and checks that it refuses to start with a ServiceUnavailable (17) error,
// whose message says the database is read-only. Root may write any file,
// so as root the server runs in a child process as the user nobody.
func TestServeReadOnly(t *testing.T) {
	const nobody = 65534
	root := os.Geteuid() == 0
	for _, tc := range []struct {
		name          string
		fileRW, dirRW bool
		create        bool
	}{
		{"ReadOnlyFile", false, true, true},
		{"ReadOnlyDirectory", true, false, true},
		{"NewFileInReadOnlyDirectory", true, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			dir, wh := filepath.Join(base, "db"), filepath.Join(base, "wh")
			path := filepath.Join(dir, "lancens.db")
			for _, d := range []string{dir, wh} {
				if err := os.Mkdir(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if tc.create {
				db, err := sqlite.Open(context.Background(), path, sqlite.Options{})
				if err != nil {
					t.Fatal(err)
				}
				if err := db.Close(); err != nil {
					t.Fatal(err)
				}
			}
			args := []string{"serve", "--addr", "127.0.0.1:0", "--db", path, "--warehouse", wh}
			// What the server may write: as root, by owner; otherwise by mode.
			owned := func(p string, rw bool, mode os.FileMode) {
				if root {
					uid := 0
					if rw {
						uid = nobody
					}
					if err := os.Chown(p, uid, 0); err != nil {
						t.Fatal(err)
					}
				}
				if !rw {
					mode &^= 0o222
				}
				if err := os.Chmod(p, mode); err != nil {
					t.Fatal(err)
				}
			}
			owned(wh, true, 0o755)
			if tc.create {
				owned(path, tc.fileRW, 0o644)
			}
			owned(dir, tc.dirRW, 0o755)
			t.Cleanup(func() { os.Chmod(dir, 0o755) })
			if !root {
				err := run(context.Background(), args, func(string) string { return "" }, io.Discard, io.Discard)
				t.Logf("serve: %v", err)
				if store.ErrorCode(err) != store.CodeServiceUnavailable {
					t.Fatalf("serve on a read-only database: %v, want a ServiceUnavailable error", err)
				}
				return
			}
			code := serveAsNobody(t, base, args, nobody)
			if code != int(store.CodeServiceUnavailable) {
				t.Fatalf("serve on a read-only database ended with code %d, want %d", code, store.CodeServiceUnavailable)
			}
		})
	}
}

// serveAsNobody runs serve with args in a copy of the test binary (see
// TestMain), as user uid, and returns the code it printed.
func serveAsNobody(t *testing.T, base string, args []string, uid int) int {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(base, "lancens.test")
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	// The user must reach the binary and the directories under base.
	for p := base; p != filepath.Dir(p) && p != os.TempDir(); p = filepath.Dir(p) {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	raw, _ := json.Marshal(args)
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), helperEnv+"="+string(raw))
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("run the helper as uid %d: %v", uid, err)
	}
	m := regexp.MustCompile(`code=(-?\d+)`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("the helper printed no code:\n%s", out)
	}
	var code int
	fmt.Sscan(string(m[1]), &code)
	t.Logf("as uid %d: %s", uid, bytes.TrimSpace(out))
	return code
}
