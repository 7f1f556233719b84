package server_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lancens/lancens/internal/apitest"
	"github.com/lancens/lancens/store"
)

// closePOST sends `POST path` with body and `Connection: close`, the body
// in a second write a moment after the headers (as Python's urllib sends
// it), reads the whole answer and returns its status and body length.
// Returns an error for any transport failure (a reset connection, a
// truncated answer).
func closePOST(addr, path, body string) (int, int, error) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return 0, 0, err
	}
	defer conn.Close()
	head := "POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" +
		"Content-Length: " + strconv.Itoa(len(body)) + "\r\nConnection: close\r\n\r\n"
	if _, err := io.WriteString(conn, head); err != nil {
		return 0, 0, err
	}
	time.Sleep(200 * time.Microsecond)
	if _, err := io.WriteString(conn, body); err != nil {
		return 0, 0, err
	}
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return 0, 0, err
	}
	defer res.Body.Close()
	n, err := io.Copy(io.Discard, res.Body)
	if err != nil {
		return 0, 0, fmt.Errorf("after %d bytes: %w", n, err)
	}
	return res.StatusCode, int(n), nil
}

// TestReadRoutesReadTheirBody is the regression test of issue 19: read
// routes called with POST, a JSON body and `Connection: close` answer in
// full, large answers included. Before the fix the server closed the
// connection with the body unread in the socket and the kernel reset it
// while the client was still reading.
func TestReadRoutesReadTheirBody(t *testing.T) {
	s := apitest.Start(t, apitest.Options{})
	ctx := t.Context()
	long := strings.Repeat("x", 150)
	start := time.Now()

	// A declared table with 2,000 versions (a ~200 KB version list),
	// committed through the store to keep the test fast.
	info, err := s.Client.DeclareTable(ctx, []string{"v"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for v := int64(1); v <= 2000; v++ {
		path := fmt.Sprintf("%s/_versions/%d.manifest", info.Location, v)
		if _, _, err := s.DB.CommitVersion(ctx, []string{"v"}, store.VersionCommit{Version: v, StagedPath: path, ManifestPath: path}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 500 {
		name := fmt.Sprintf("%s%03d", long, i)
		if _, err := s.DB.CreateNamespace(ctx, []string{name}, store.ModeCreate, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := s.DB.CreateTag(ctx, []string{"v"}, name, "", int64(i+1)); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.DB.DeclareTable(ctx, []string{"t" + name}, store.TableDeclaration{Location: fmt.Sprintf("%s/../t%03d", info.Location, i)}); err != nil {
			t.Fatal(err)
		}
	}
	createPeople(t, s.Client, "m")
	t.Logf("set up in %v", time.Since(start))
	addr := strings.TrimPrefix(s.URL, "http://")
	for _, tc := range []struct {
		path    string
		times   int
		minSize int // the answer is large enough to show the bug
	}{
		{"/v1/table/v/version/list", 1000, 140 << 10},
		{"/v1/namespace/%24/list", 100, 75 << 10},
		{"/v1/namespace/%24/table/list", 100, 75 << 10},
		{"/v1/table", 100, 75 << 10},
		{"/v1/table/v/tags/list", 100, 75 << 10},
		{"/v1/table/v/branches/list", 100, 0},
		{"/v1/table/m/index/list", 100, 0},
	} {
		began := time.Now()
		// Four clients at a time, to keep the test short.
		errs := make(chan error, tc.times)
		calls := make(chan int, tc.times)
		for i := range tc.times {
			calls <- i
		}
		close(calls)
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for i := range calls {
					status, n, err := closePOST(addr, tc.path, "{}")
					switch {
					case err != nil:
						errs <- fmt.Errorf("POST %s, call %d: %w", tc.path, i+1, err)
					case status != http.StatusOK || n < tc.minSize:
						errs <- fmt.Errorf("POST %s: status %d, %d bytes (want 200 and at least %d)", tc.path, status, n, tc.minSize)
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		t.Logf("%d × POST %s in %v", tc.times, tc.path, time.Since(began))
	}
}
