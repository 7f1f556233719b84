package server_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/lancens/lancens/internal/apitest"
)

// BenchmarkRequestPath times requests through the whole middleware chain
// and a cheap handler, in process (no sockets), where the cost of the
// chain itself is most visible: a catalog read and an unknown route.
func BenchmarkRequestPath(b *testing.B) {
	s := apitest.Start(b, apitest.Options{APIKeys: []string{"k"}})
	if _, err := s.Client.CreateNamespace(b.Context(), []string{"bench"}, nil); err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name, method, path string
		want               int
	}{
		{"DescribeNamespace", "POST", "/v1/namespace/bench/describe", http.StatusOK},
		{"UnknownRoute", "GET", "/v1/nothing", http.StatusNotFound},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				req := httptest.NewRequest(tc.method, tc.path, nil)
				req.Header.Set("X-Api-Key", "k")
				rec := httptest.NewRecorder()
				s.API.ServeHTTP(rec, req)
				if rec.Code != tc.want {
					b.Fatalf("status %d, want %d: %s", rec.Code, tc.want, rec.Body)
				}
			}
		})
	}
}
