package apitest

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestValidatorRejects proves the response check can fail: each response
// below breaks the spec in one way.
func TestValidatorRejects(t *testing.T) {
	v := NewValidator(t)
	jsonCT := http.Header{"Content-Type": {"application/json"}}
	for _, tc := range []struct {
		name, method, path string
		status             int
		header             http.Header
		body               string
		wantErr            bool
	}{
		{"ValidList", "GET", "/v1/namespace/$/list", 200, jsonCT, `{"namespaces":["a"]}`, false},
		{"ValidListNullToken", "GET", "/v1/namespace/$/list", 200, jsonCT, `{"namespaces":[],"page_token":null}`, false},
		{"ListMissingRequired", "GET", "/v1/namespace/$/list", 200, jsonCT, `{}`, true},
		{"ListDuplicateNames", "GET", "/v1/namespace/$/list", 200, jsonCT, `{"namespaces":["a","a"]}`, true},
		{"CountAsObject", "POST", "/v1/table/t/count_rows", 200, jsonCT, `{"count":3}`, true},
		{"CountAsInteger", "POST", "/v1/table/t/count_rows", 200, jsonCT, `3`, false},
		{"ErrorWithoutCode", "POST", "/v1/namespace/a/describe", 404, jsonCT, `{"error":"x"}`, true},
		{"ErrorPlainText", "POST", "/v1/namespace/a/describe", 404, http.Header{"Content-Type": {"text/plain"}}, `not found`, true},
		{"ErrorCodeStatusMismatch", "POST", "/v1/namespace/a/describe", 404, jsonCT, `{"code":13}`, true},
		{"UndeclaredStatusMatchingCode", "POST", "/v1/table/t/describe", 406, jsonCT, `{"code":0}`, false},
		{"UndeclaredStatusWrongCode", "POST", "/v1/table/t/describe", 429, jsonCT, `{"code":13}`, true},
		{"UnknownRouteJSON", "POST", "/v1/nowhere", 404, jsonCT, `{"code":0}`, false},
		{"UnknownRouteSuccess", "POST", "/v1/nowhere", 200, jsonCT, `{}`, true},
		{"DialectPrewarm", "POST", "/v1/table/t/index/i/prewarm", 200, jsonCT, `{}`, false},
		{"DialectPrewarmSlash", "POST", "/v1/table/t/index/i/prewarm/", 200, jsonCT, `{}`, false},
		{"DialectPrewarmNotEmpty", "POST", "/v1/table/t/index/i/prewarm", 200, jsonCT, `{"x":1}`, true},
		{"DialectPrewarmNotJSON", "POST", "/v1/table/t/index/i/prewarm", 200, http.Header{"Content-Type": {"text/plain"}}, `ok`, true},
		{"DialectPrewarmError", "POST", "/v1/table/t/index/i/prewarm", 404, jsonCT, `{"code":6}`, false},
		{"DialectPrewarmErrorWrongCode", "POST", "/v1/table/t/index/i/prewarm", 404, jsonCT, `{"code":13}`, true},
		{"DialectPrewarmWrongMethod", "GET", "/v1/table/t/index/i/prewarm", 200, jsonCT, `{}`, true},
		{"EmptyIDInvalid", "POST", "/v1/namespace//describe", 400, jsonCT, `{"code":13}`, false},
		{"EmptyIDWrongCode", "POST", "/v1/namespace//describe", 400, jsonCT, `{"code":0}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(tc.method, tc.path, nil)
			err := v.Check(req, tc.status, tc.header, []byte(tc.body))
			if (err != nil) != tc.wantErr {
				t.Fatalf("Check = %v, want error: %v", err, tc.wantErr)
			}
		})
	}
}
