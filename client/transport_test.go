package client

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// flaky answers the first failures requests with status, and then 200 with
// body; it counts the requests.
type flaky struct {
	failures int32
	status   int
	header   http.Header
	body     string
	calls    atomic.Int32
	last     atomic.Pointer[http.Request]
}

func (f *flaky) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := f.calls.Add(1)
	f.last.Store(r)
	w.Header().Set("Content-Type", "application/json")
	if n <= f.failures {
		for k, v := range f.header {
			w.Header()[k] = v
		}
		w.WriteHeader(f.status)
		_, _ = w.Write([]byte(`{"code":17,"error":"busy"}`))
		return
	}
	_, _ = w.Write([]byte(f.body))
}

func fastRetry(n int) Option {
	return WithRetry(RetryPolicy{MaxRetries: n, BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond})
}

func TestRetries(t *testing.T) {
	describe := func(c *Client) error { _, err := c.DescribeNamespace(t.Context(), []string{"ns"}); return err }
	count := func(c *Client) error { _, err := c.CountRows(t.Context(), []string{"t"}, "", nil); return err }
	create := func(c *Client) error { _, err := c.CreateNamespace(t.Context(), []string{"ns"}, nil); return err }
	list := func(c *Client) error { _, _, err := c.ListNamespacesPage(t.Context(), nil, "", 0); return err }
	for _, tc := range []struct {
		name      string
		call      func(*Client) error
		body      string
		status    int
		failures  int32
		retries   int
		wantCalls int32
		wantErr   error // nil: success
	}{
		{"ReadRetriedOn503", describe, `{"properties":{}}`, 503, 2, 3, 3, nil},
		{"ReadRetriedOn429", count, `7`, 429, 1, 3, 2, nil},
		{"GetRetried", list, `{"namespaces":[]}`, 503, 1, 3, 2, nil},
		{"ReadGivesUp", describe, `{}`, 503, 5, 2, 3, ErrServiceUnavailable},
		{"WriteNotRetried", create, `{}`, 503, 1, 3, 1, ErrServiceUnavailable},
		{"OtherStatusNotRetried", describe, `{}`, 500, 1, 3, 1, ErrServiceUnavailable},
		{"RetriesOff", describe, `{}`, 503, 1, 0, 1, ErrServiceUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &flaky{failures: tc.failures, status: tc.status, body: tc.body}
			srv := httptest.NewServer(f)
			defer srv.Close()
			c, err := New(srv.URL, fastRetry(tc.retries))
			if err != nil {
				t.Fatal(err)
			}
			err = tc.call(c)
			if tc.wantErr == nil && err != nil || tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Fatalf("got %v, want %v", err, tc.wantErr)
			}
			if got := f.calls.Load(); got != tc.wantCalls {
				t.Fatalf("%d requests, want %d", got, tc.wantCalls)
			}
		})
	}
}

func TestRetryResendsTheBody(t *testing.T) {
	var (
		mu     sync.Mutex
		bodies []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		bodies = append(bodies, string(b))
		w.Header().Set("Content-Type", "application/json")
		if len(bodies) == 1 {
			w.WriteHeader(503)
			_, _ = w.Write([]byte(`{"code":17}`))
			return
		}
		_, _ = w.Write([]byte(`3`))
	}))
	defer srv.Close()
	c, _ := New(srv.URL, fastRetry(2))
	if n, err := c.CountRows(t.Context(), []string{"t"}, "x > 1", nil); err != nil || n != 3 {
		t.Fatalf("count %d, %v", n, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bodies) != 2 || bodies[0] != bodies[1] || !strings.Contains(bodies[1], "predicate") {
		t.Fatalf("bodies %q", bodies)
	}
}

func TestBackoff(t *testing.T) {
	tr := &transport{retry: RetryPolicy{MaxRetries: 5, BaseDelay: 100 * time.Millisecond, MaxDelay: 2 * time.Second}}
	for attempt, max := range []time.Duration{100, 200, 400, 800, 1600, 2000, 2000} {
		max *= time.Millisecond
		for range 20 {
			if d := tr.backoff(attempt, ""); d < max/2 || d > max {
				t.Fatalf("attempt %d waits %v, want between %v and %v", attempt, d, max/2, max)
			}
		}
	}
	if d := tr.backoff(0, "1"); d != time.Second {
		t.Fatalf("Retry-After 1 gave %v", d)
	}
	if d := tr.backoff(0, "60"); d != 2*time.Second {
		t.Fatalf("Retry-After 60 gave %v, want the 2s cap", d)
	}
}

func TestRetryWaitEndsWithContext(t *testing.T) {
	f := &flaky{failures: 10, status: 503, header: http.Header{"Retry-After": {"30"}}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	c, _ := New(srv.URL, WithRetry(RetryPolicy{MaxRetries: 3, BaseDelay: time.Second, MaxDelay: time.Minute}))
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.DescribeNamespace(ctx, []string{"ns"})
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 5*time.Second {
		t.Fatalf("got %v after %v", err, time.Since(start))
	}
}

func TestTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	c, _ := New(srv.URL, WithTimeout(20*time.Millisecond), WithRetry(RetryPolicy{}))
	_, err := c.DescribeNamespace(t.Context(), []string{"ns"})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want a deadline error", err)
	}
}

func TestHeadersAndPaths(t *testing.T) {
	f := &flaky{body: `{"properties":{}}`}
	srv := httptest.NewServer(f)
	defer srv.Close()
	for _, tc := range []struct {
		opt    Option
		header string
		want   string
	}{
		{WithAPIKey("k1"), "X-Api-Key", "k1"},
		{WithBearerToken("tok"), "Authorization", "Bearer tok"},
		{WithHeader("X-Team", "search"), "X-Team", "search"},
	} {
		c, _ := New(srv.URL, tc.opt)
		if _, err := c.DescribeNamespace(t.Context(), []string{"a+b", "c d"}); err != nil {
			t.Fatal(err)
		}
		r := f.last.Load()
		if got := r.Header.Get(tc.header); got != tc.want {
			t.Errorf("%s = %q, want %q", tc.header, got, tc.want)
		}
		if got := r.URL.EscapedPath(); got != "/v1/namespace/a%2Bb$c%20d/describe" {
			t.Errorf("path %q", got)
		}
	}
}
