package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestDefaultAddrIsLoopback checks the default of --addr: loopback only.
func TestDefaultAddrIsLoopback(t *testing.T) {
	cfg, err := parseServeFlags(nil, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	host, port, err := net.SplitHostPort(cfg.addr)
	if err != nil || !net.ParseIP(host).IsLoopback() || port != "2333" {
		t.Fatalf("default --addr %q, want a loopback address on port 2333", cfg.addr)
	}
}

// A network namespace of the test's own, with an address other than
// loopback (on one end of a veth pair): port 2333 is free there whatever runs on
// the machine, and the address stands for the machine's others.
const nsAddr = "10.233.0.1"

// TestDefaultServeUnreachableFromNetwork starts `lancens serve` with no
// flags at all, in a network namespace of its own that has an address
// besides loopback, and checks that it answers on loopback and not on the
// other address. The same server with --addr :2333 answers on both: the
// probe can tell. It needs root (or CAP_SYS_ADMIN), unshare and ip.
func TestDefaultServeUnreachableFromNetwork(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("a network namespace needs root; TestDefaultAddrIsLoopback checks the default address")
	}
	for _, tool := range []string{"unshare", "ip"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (util-linux, iproute2); TestDefaultAddrIsLoopback checks the default address", tool)
		}
	}
	for _, tc := range []struct {
		args          []string
		fromNetworkOK bool
	}{
		{nil, false},
		{[]string{"--addr", ":2333"}, true},
	} {
		t.Run(fmt.Sprintf("args=%q", tc.args), func(t *testing.T) {
			pid := serveInNetns(t, tc.args...)
			if err := dialInNetns(pid, "127.0.0.1:2333"); err != nil {
				t.Fatalf("loopback: %v", err)
			}
			err := dialInNetns(pid, net.JoinHostPort(nsAddr, "2333"))
			if tc.fromNetworkOK && err != nil {
				t.Fatalf("%s: %v; want an answer", nsAddr, err)
			}
			if !tc.fromNetworkOK && !errors.Is(err, syscall.ECONNREFUSED) {
				t.Fatalf("%s: %v; want the connection refused", nsAddr, err)
			}
		})
	}
}

// serveInNetns runs the test binary as `lancens serve args…` (see
// TestMain) in a new network namespace, from a new working directory (for
// the default ./data), and returns its pid once it listens. It is killed
// when the test ends.
func serveInNetns(t *testing.T, args ...string) int {
	t.Helper()
	setup := "ip link set lo up && ip link add lancens0 type veth peer name lancens1 && ip addr add " + nsAddr + "/24 dev lancens0 && ip link set lancens0 up && ip link set lancens1 up && exec \"$0\" serve \"$@\""
	cmd := exec.Command("unshare", append([]string{"--net", "sh", "-c", setup, os.Args[0]}, args...)...)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), crashChildEnv+"=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	line := make(chan string, 1)
	go func() {
		l, _ := bufio.NewReader(stdout).ReadString('\n')
		line <- l
		io.Copy(io.Discard, stdout)
	}()
	select {
	case l := <-line:
		if !strings.Contains(l, "listening on") {
			t.Fatalf("serve in a network namespace did not start: %q\n%s", l, stderr.String())
		}
	case <-time.After(time.Minute):
		t.Fatalf("serve in a network namespace did not start within a minute:\n%s", stderr.String())
	}
	if _, err := os.Stat(filepath.Join(cmd.Dir, "data", "lancens.db")); err != nil {
		t.Fatalf("the default database: %v", err)
	}
	return cmd.Process.Pid
}

// dialInNetns connects to addr from the network namespace of process pid
// and returns the error, if any. It moves a locked thread into that
// namespace and back. Were the thread to end instead, processes started
// from it with a parent-death signal (the test PostgreSQL server) would
// get that signal.
func dialInNetns(pid int, addr string) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		own, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			runtime.UnlockOSThread()
			errc <- err
			return
		}
		defer own.Close()
		ns, err := os.Open(fmt.Sprintf("/proc/%d/ns/net", pid))
		if err != nil {
			runtime.UnlockOSThread()
			errc <- err
			return
		}
		defer ns.Close()
		if err := unix.Setns(int(ns.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("setns: %w", err)
			return
		}
		conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err == nil {
			conn.Close()
		}
		// Back home; a thread that cannot return stays locked and ends
		// with the goroutine.
		if unix.Setns(int(own.Fd()), unix.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread()
		}
		errc <- err
	}()
	return <-errc
}
