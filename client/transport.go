package client

import (
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"
)

// transport sends the generated client's requests: it adds the configured
// headers, escapes "+" in paths, bounds each attempt by the timeout and
// retries calls that only read when the server answers 429 or 503.
type transport struct {
	client  *http.Client
	headers http.Header
	retry   RetryPolicy
	timeout time.Duration
}

// readOnlyRoutes are the last path segments of the POST routes that change
// nothing, so that repeating them is safe (GET routes all read).
var readOnlyRoutes = map[string]bool{
	"describe": true, "exists": true, "list": true, "query": true, "count_rows": true,
	"explain_plan": true, "analyze_plan": true, "stats": true, "version": true,
}

func retryable(req *http.Request) bool {
	if req.Body != nil && req.GetBody == nil {
		return false // a streamed body cannot be sent twice
	}
	return req.Method == http.MethodGet || readOnlyRoutes[path.Base(req.URL.Path)]
}

// Do sends req, retrying it as the retry policy says. It returns the
// transport's error, or the context's when it ends during a wait.
func (t *transport) Do(req *http.Request) (*http.Response, error) {
	for name, values := range t.headers {
		req.Header[name] = append([]string(nil), values...)
	}
	escapePlus(req)
	retries := 0
	if retryable(req) {
		retries = t.retry.MaxRetries
	}
	for attempt := 0; ; attempt++ {
		r := req
		if attempt > 0 {
			r = req.Clone(req.Context())
			if req.GetBody != nil {
				body, err := req.GetBody()
				if err != nil {
					return nil, err
				}
				r.Body = body
			}
		}
		res, err := t.send(r)
		if err != nil || attempt >= retries || (res.StatusCode != http.StatusTooManyRequests && res.StatusCode != http.StatusServiceUnavailable) {
			return res, err
		}
		wait := t.backoff(attempt, res.Header.Get("Retry-After"))
		_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
		res.Body.Close()
		timer := time.NewTimer(wait)
		select {
		case <-req.Context().Done():
			timer.Stop()
			return nil, req.Context().Err()
		case <-timer.C:
		}
	}
}

// send makes one attempt, bounded by the timeout until its body is closed.
func (t *transport) send(req *http.Request) (*http.Response, error) {
	if t.timeout <= 0 {
		return t.client.Do(req)
	}
	ctx, cancel := context.WithTimeout(req.Context(), t.timeout)
	res, err := t.client.Do(req.WithContext(ctx))
	if err != nil {
		cancel()
		return nil, err
	}
	res.Body = cancelOnClose{ReadCloser: res.Body, cancel: cancel}
	return res, nil
}

type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b cancelOnClose) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

// backoff returns the wait before retry number attempt+1: BaseDelay doubled
// per attempt, between half and all of it at random, raised to what
// Retry-After (in seconds) asks, and at most MaxDelay.
func (t *transport) backoff(attempt int, retryAfter string) time.Duration {
	d := t.retry.BaseDelay << min(attempt, 30)
	if d <= 0 || d > t.retry.MaxDelay {
		d = t.retry.MaxDelay
	}
	if d > 1 {
		d = d/2 + rand.N(d/2)
	}
	if s, err := strconv.Atoi(strings.TrimSpace(retryAfter)); err == nil && s > 0 {
		d = max(d, time.Duration(s)*time.Second)
	}
	return min(d, t.retry.MaxDelay)
}

// escapePlus sends a literal "+" in the path as %2B: servers may read an
// unescaped "+" in an identifier as a space, as form encoding does.
func escapePlus(req *http.Request) {
	if p := req.URL.EscapedPath(); strings.Contains(p, "+") {
		req.URL.RawPath = strings.ReplaceAll(p, "+", "%2B")
	}
}
