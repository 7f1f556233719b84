package client

import (
	"errors"
	"net/http"
	"slices"
	"testing"
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
