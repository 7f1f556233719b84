package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"

	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lancens/lancens/store"
)

// testEnv is the environment the tests give serve: none of the caller's
// variables.
func testEnv(string) string { return "" }

// startServe runs `lancens serve` with args on a free port and returns its
// address and a function that stops it and returns how long the stop took
// and serve's error.
func startServe(t *testing.T, args ...string) (addr string, stop func() (time.Duration, error)) {
	t.Helper()
	return startServeLogging(t, io.Discard, args...)
}

// startServeLogging is startServe with serve's log written to stderr.
func startServeLogging(t *testing.T, stderr io.Writer, args ...string) (addr string, stop func() (time.Duration, error)) {
	t.Helper()
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	stdout, w := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, append([]string{"serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(dir, "lancens.db"),
			"--warehouse", filepath.Join(dir, "wh")}, args...), testEnv, w, stderr)
		w.Close()
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		cancel()
		t.Fatalf("no startup line: %v (serve: %v)", err, <-done)
	}
	go io.Copy(io.Discard, stdout)
	m := regexp.MustCompile(`https?://(\S+)`).FindStringSubmatch(line)
	if m == nil {
		cancel()
		t.Fatalf("startup line %q has no address", line)
	}
	addr = m[1]
	stopped := false
	stop = func() (time.Duration, error) {
		stopped = true
		start := time.Now()
		cancel()
		select {
		case err := <-done:
			return time.Since(start), err
		case <-time.After(time.Minute):
			t.Fatal("serve did not stop within a minute")
			return 0, nil
		}
	}
	t.Cleanup(func() {
		if !stopped {
			stop()
		}
	})
	return addr, stop
}

// TestSlowHeadersCutOff sends a request's headers one byte at a time and
// checks that the server closes the connection once --read-header-timeout
// has passed, long before the client would have finished.
func TestSlowHeadersCutOff(t *testing.T) {
	addr, _ := startServe(t, "--read-header-timeout", "1s")
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	request := "GET /v1/namespace/$/list HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: " + strings.Repeat("a", 100) + "\r\n\r\n"
	start := time.Now()
	for i := range len(request) {
		if _, err := conn.Write([]byte{request[i]}); err != nil {
			return // cut off: the server closed the connection
		}
		if time.Since(start) > 30*time.Second {
			break
		}
		time.Sleep(100 * time.Millisecond) // the whole request takes ~13 s
	}
	// The headers are complete: an uncut connection gets its answer now.
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := conn.Read(make([]byte, 1)); n > 0 || err == nil {
		t.Fatalf("the server answered headers sent over %s; --read-header-timeout 1s did not cut them off", time.Since(start).Round(time.Second))
	}
}

// TestShutdownWithSlowClients stops the server while one client trickles a
// request body and another holds an idle keep-alive connection, and checks
// that the shutdown neither waits for them (it took 30 s) nor fails.
func TestShutdownWithSlowClients(t *testing.T) {
	addr, stop := startServe(t)
	idle, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	fmt.Fprintf(idle, "GET /v1/namespace/$/list HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
	if _, err := bufio.NewReader(idle).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	trickle, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer trickle.Close()
	fmt.Fprintf(trickle, "POST /v1/namespace/slow/create HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{")
	stopTrickle := make(chan struct{})
	defer close(stopTrickle)
	go func() {
		for {
			select {
			case <-stopTrickle:
				return
			case <-time.After(200 * time.Millisecond):
				if _, err := trickle.Write([]byte(" ")); err != nil {
					return
				}
			}
		}
	}()
	time.Sleep(500 * time.Millisecond) // the handler is reading the body
	took, err := stop()
	if err != nil {
		t.Fatalf("shutdown failed after %s: %v", took, err)
	}
	if took > 10*time.Second {
		t.Fatalf("shutdown took %s with a trickling client", took)
	}
}

// TestServeTimeoutFlags checks the parsing of the timeout and bound flags,
// the commit durability, and their environment variables.
func TestServeTimeoutFlags(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		env     map[string]string
		wantErr bool
		check   func(*serveConfig) bool
	}{
		{"Defaults", nil, nil, false, func(c *serveConfig) bool {
			return c.readHeaderTimeout == defaultReadHeaderTimeout && c.readTimeout == defaultReadTimeout &&
				c.writeTimeout == defaultWriteTimeout && c.idleTimeout == defaultIdleTimeout && c.queryTimeout == time.Minute &&
				c.maxPageSize == store.MaxPageSize && c.maxSearchRows == 100_000 && c.retainVersionsFor == store.DefaultRetainVersionsFor &&
				c.commitDurability == store.DurabilityFull
		}},
		{"CommitDurability", []string{"--commit-durability", "process"}, nil, false,
			func(c *serveConfig) bool { return c.commitDurability == store.DurabilityProcess }},
		{"CommitDurabilityEnv", nil, map[string]string{"LANCENS_COMMIT_DURABILITY": "Process"}, false,
			func(c *serveConfig) bool { return c.commitDurability == store.DurabilityProcess }},
		{"CommitDurabilityFlagBeatsEnv", []string{"--commit-durability", "full"}, map[string]string{"LANCENS_COMMIT_DURABILITY": "process"}, false,
			func(c *serveConfig) bool { return c.commitDurability == store.DurabilityFull }},
		{"BadCommitDurability", []string{"--commit-durability", "none"}, nil, true, nil},
		{"BadCommitDurabilityEnv", nil, map[string]string{"LANCENS_COMMIT_DURABILITY": "power"}, true, nil},
		{"RetainVersionsFor", []string{"--retain-versions-for", "36h"}, nil, false,
			func(c *serveConfig) bool { return c.retainVersionsFor == 36*time.Hour }},
		{"RetainVersionsForEnv", nil, map[string]string{"LANCENS_RETAIN_VERSIONS_FOR": "0"}, false,
			func(c *serveConfig) bool { return c.retainVersionsFor == 0 }},
		{"NegativeRetention", []string{"--retain-versions-for", "-1h"}, nil, true, nil},
		{"Flags", []string{"--read-timeout", "1m", "--write-timeout", "2m", "--idle-timeout", "3s", "--read-header-timeout", "4s", "--query-timeout", "5s", "--max-page-size", "50", "--max-search-rows", "7"}, nil, false,
			func(c *serveConfig) bool {
				return c.readTimeout == time.Minute && c.writeTimeout == 2*time.Minute && c.idleTimeout == 3*time.Second &&
					c.readHeaderTimeout == 4*time.Second && c.queryTimeout == 5*time.Second && c.maxPageSize == 50 && c.maxSearchRows == 7
			}},
		{"Env", nil, map[string]string{"LANCENS_READ_TIMEOUT": "90s", "LANCENS_QUERY_TIMEOUT": "0", "LANCENS_MAX_SEARCH_ROWS": "9"}, false,
			func(c *serveConfig) bool {
				return c.readTimeout == 90*time.Second && c.queryTimeout == 0 && c.maxSearchRows == 9
			}},
		{"FlagBeatsEnv", []string{"--write-timeout", "1s"}, map[string]string{"LANCENS_WRITE_TIMEOUT": "9s"}, false,
			func(c *serveConfig) bool { return c.writeTimeout == time.Second }},
		{"BadEnvDuration", nil, map[string]string{"LANCENS_IDLE_TIMEOUT": "soon"}, true, nil},
		{"BadFlagDuration", []string{"--read-timeout", "10"}, nil, true, nil},
		{"NegativeTimeout", []string{"--write-timeout", "-1s"}, nil, true, nil},
		{"NoHeaderTimeout", []string{"--read-header-timeout", "0"}, nil, true, nil},
		{"NoIdleTimeout", []string{"--idle-timeout", "0"}, nil, true, nil},
		{"PageSizeTooLarge", []string{"--max-page-size", "10001"}, nil, true, nil},
		{"PageSizeZero", []string{"--max-page-size", "0"}, nil, true, nil},
		{"SearchRowsZero", []string{"--max-search-rows", "0"}, nil, true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := parseServeFlags(tc.args, func(k string) string { return tc.env[k] }, io.Discard)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want error: %v", err, tc.wantErr)
			}
			if err == nil && !tc.check(cfg) {
				t.Fatalf("parsed %+v", cfg)
			}
		})
	}
}
