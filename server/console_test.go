package server_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/lancens/lancens/internal/testkit/apitest"
)

// TestConsoleRoutes: the web console is served by the API server without
// credentials (the page asks for them), while the API still wants them.
// The console's answers are not API responses, so they are read from the
// server directly, past the spec validator.
func TestConsoleRoutes(t *testing.T) {
	s := apitest.Start(t, apitest.Options{APIKeys: []string{"k1"}})
	for _, tc := range []struct {
		method, path string
		status       int
	}{
		{"GET", "/console/", http.StatusOK},
		{"GET", "/console/app.js", http.StatusOK},
		{"GET", "/console", http.StatusMovedPermanently},
		{"GET", "/console/missing.css", http.StatusNotFound},
		{"POST", "/console/", http.StatusMethodNotAllowed},
	} {
		rec := httptest.NewRecorder()
		s.API.ServeHTTP(rec, httptest.NewRequest(tc.method, tc.path, nil))
		if rec.Code != tc.status {
			t.Errorf("%s %s: got %d, want %d", tc.method, tc.path, rec.Code, tc.status)
		}
	}
	rec := httptest.NewRecorder()
	s.API.ServeHTTP(rec, httptest.NewRequest("GET", "/console/", nil))
	if !strings.Contains(rec.Body.String(), "lancens console") {
		t.Errorf("GET /console/ is not the console: %.200s", rec.Body.String())
	}
	// The API behind it still needs a key (and the answer is checked
	// against the spec).
	if status, body, _ := s.Do(t, "GET", "/v1/namespace/%24/list", nil, nil); status != http.StatusUnauthorized || apitest.ErrorCode(body) != 16 {
		t.Fatalf("API without a key: %d %s", status, body)
	}
}
