package main

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestSlowBodyCutOff checks that a client trickling its body (a byte every
// 200 ms, 5 B/s) is cut off soon after server.BodyRateGrace, with an
// answer of code 13, instead of holding its connection until
// --read-timeout (5 minutes by default); and that with --min-body-rate 0
// it is not (before, every trickling client was held for the read
// timeout).
func TestSlowBodyCutOff(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		cutOff  bool
		waitFor time.Duration
	}{
		{"Default", nil, true, 20 * time.Second},
		{"Off", []string{"--min-body-rate", "0"}, false, 8 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, _ := startServe(t, tc.args...)
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			fmt.Fprintf(conn, "POST /v1/namespace/slow/create HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{")
			stop := make(chan struct{})
			defer close(stop)
			go func() {
				for {
					select {
					case <-stop:
						return
					case <-time.After(200 * time.Millisecond):
						if _, err := conn.Write([]byte(" ")); err != nil {
							return
						}
					}
				}
			}()
			start := time.Now()
			_ = conn.SetReadDeadline(start.Add(tc.waitFor))
			res, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if !tc.cutOff {
				if err == nil {
					t.Fatalf("answered %s after %s with the minimum off", res.Status, time.Since(start))
				}
				return
			}
			if err != nil {
				t.Fatalf("no answer within %s: %v", tc.waitFor, err)
			}
			var body strings.Builder
			_, _ = bufio.NewReader(res.Body).WriteTo(&body)
			if res.StatusCode != http.StatusBadRequest || !strings.Contains(body.String(), `"code":13`) {
				t.Fatalf("cut off with %s %s, want 400 code 13", res.Status, body.String())
			}
			t.Logf("cut off after %s", time.Since(start).Round(100*time.Millisecond))
		})
	}
}

// TestMaxConnections checks that with --max-connections 2 a third client
// is not served while two connections are open, and is as soon as one
// closes.
func TestMaxConnections(t *testing.T) {
	addr, _ := startServe(t, "--max-connections", "2")
	var held []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		held = append(held, c)
	}
	third, err := net.Dial("tcp", addr) // the kernel queues it
	if err != nil {
		t.Fatal(err)
	}
	defer third.Close()
	fmt.Fprintf(third, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
	r := bufio.NewReader(third)
	_ = third.SetReadDeadline(time.Now().Add(time.Second))
	if res, err := http.ReadResponse(r, nil); err == nil {
		t.Fatalf("third connection served (%s) while two were open", res.Status)
	}
	held[0].Close()
	_ = third.SetReadDeadline(time.Now().Add(10 * time.Second))
	res, err := http.ReadResponse(r, nil)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("third connection after one closed: %v %v", res, err)
	}
}
