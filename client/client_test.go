package client

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lancens/lancens/gen"
)

func TestCheckResponse(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		body   string
		want   error // nil: success
	}{
		{"OK", 200, `{}`, nil},
		{"Coded", 404, `{"code":4,"error":"table t not found"}`, ErrTableNotFound},
		{"CodeWinsOverStatus", 400, `{"code":1}`, ErrNamespaceNotFound},
		{"PlainText", 502, `bad gateway`, ErrInternal},
		{"NoCode", 404, `{"error":"x"}`, ErrInternal},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hr := &http.Response{StatusCode: tc.status, Status: http.StatusText(tc.status), Header: http.Header{"X-Request-Id": {"r1"}}}
			err := checkResponse(hr, []byte(tc.body))
			if tc.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			var ce *Error
			if !errors.As(err, &ce) || ce.StatusCode != tc.status || ce.RequestID != "r1" {
				t.Fatalf("error %#v lacks status or request id", err)
			}
		})
	}
}

func TestPaginate(t *testing.T) {
	pages := map[string][]string{"": {"a", "b"}, "t1": {"c"}, "t2": {"d"}}
	next := map[string]string{"": "t1", "t1": "t2", "t2": ""}
	var got []string
	for v, err := range paginate(func(tok string) ([]string, string, error) { return pages[tok], next[tok], nil }) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, v)
	}
	if !slices.Equal(got, []string{"a", "b", "c", "d"}) {
		t.Fatalf("got %q", got)
	}
	// A server that repeats a token must not loop forever.
	var last error
	n := 0
	for _, err := range paginate(func(string) ([]string, string, error) { return []string{"x"}, "same", nil }) {
		n++
		last = err
		if n > 10 {
			break
		}
	}
	if !errors.Is(last, ErrInternal) {
		t.Fatalf("repeated token: last error %v after %d items", last, n)
	}
}

func TestPathID(t *testing.T) {
	c, err := New("http://x")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		id   []string
		want string
		ok   bool
	}{
		{[]string{}, "$", true},
		{[]string{"a", "b"}, "a$b", true},
		{[]string{"a$b"}, "", false},
		{[]string{""}, "", false},
		{[]string{"a", "."}, "", false},
		{[]string{".."}, "", false},
		{[]string{"..."}, "...", true},
	} {
		got, err := c.pathID(tc.id)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("pathID(%q) = %q, %v", tc.id, got, err)
		}
	}
	for _, d := range []string{"", ".", ".."} {
		if _, err := New("http://x", WithDelimiter(d)); err == nil {
			t.Errorf("New accepted the delimiter %q", d)
		}
	}
}

func TestNewValidatesURL(t *testing.T) {
	for _, tc := range []struct {
		url, want string // want "": New fails
	}{
		{"http://localhost:2333", "http://localhost:2333"},
		{"http://localhost:2333/", "http://localhost:2333"},
		{"https://lance.example.com/v1", "https://lance.example.com"},
		{"https://lance.example.com/v1/", "https://lance.example.com"},
		{"http://proxy/lance/v1", "http://proxy/lance"},
		{"http://proxy/lance", "http://proxy/lance"},
		{"localhost:2333", ""},
		{"ftp://host", ""},
		{"http://", ""},
		{"http://host?x=1", ""},
		{"http://user:pw@host", ""},
		{"http://host/#frag", ""},
		{"://bad", ""},
	} {
		t.Run(tc.url, func(t *testing.T) {
			c, err := New(tc.url)
			if tc.want == "" {
				if err == nil {
					t.Fatalf("New accepted %q", tc.url)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := c.api.ClientInterface.(*gen.Client).Server; strings.TrimSuffix(got, "/") != tc.want {
				t.Fatalf("server %q, want %q", got, tc.want)
			}
		})
	}
	for _, opt := range []Option{WithDelimiter(""), WithRetry(RetryPolicy{MaxRetries: -1}), WithRetry(RetryPolicy{BaseDelay: time.Second, MaxDelay: time.Millisecond}), WithHTTPClient(nil)} {
		if _, err := New("http://host", opt); err == nil {
			t.Error("New accepted an invalid option")
		}
	}
}

// TestErrorSentinels checks that every Lance error code 0–23 an answer
// carries matches its sentinel, and no other, with the status and message
// on the *Error.
func TestErrorSentinels(t *testing.T) {
	sentinels := []error{
		ErrUnsupported, ErrNamespaceNotFound, ErrNamespaceAlreadyExists, ErrNamespaceNotEmpty, ErrTableNotFound,
		ErrTableAlreadyExists, ErrTableIndexNotFound, ErrTableIndexAlreadyExists, ErrTableTagNotFound, ErrTableTagAlreadyExists,
		ErrTransactionNotFound, ErrTableVersionNotFound, ErrTableColumnNotFound, ErrInvalidInput, ErrConcurrentModification,
		ErrPermissionDenied, ErrUnauthenticated, ErrServiceUnavailable, ErrInternal, ErrInvalidTableState,
		ErrTableSchemaValidationError, ErrThrottling, ErrTableBranchNotFound, ErrTableBranchAlreadyExists,
	}
	if len(sentinels) != 24 {
		t.Fatalf("%d sentinels", len(sentinels))
	}
	for code := range sentinels {
		t.Run(Code(code).String(), func(t *testing.T) {
			status := 400 + code
			hr := &http.Response{StatusCode: status, Header: http.Header{}}
			err := checkResponse(hr, []byte(fmt.Sprintf(`{"code":%d,"error":"message %d"}`, code, code)))
			for other, s := range sentinels {
				if got := errors.Is(err, s); got != (other == code) {
					t.Errorf("errors.Is(code %d, sentinel of %d) = %v", code, other, got)
				}
			}
			var e *Error
			if !errors.As(err, &e) || e.StatusCode != status || e.Code() != Code(code) || e.Message() != fmt.Sprintf("message %d", code) {
				t.Fatalf("error %#v", err)
			}
			if ErrorCode(err) != Code(code) {
				t.Fatalf("ErrorCode = %d", ErrorCode(err))
			}
		})
	}
}
