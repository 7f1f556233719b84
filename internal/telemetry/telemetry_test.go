package telemetry

import "testing"

// TestEndpoints checks where spans are posted and over which protocol.
func TestEndpoints(t *testing.T) {
	for in, want := range map[string]string{
		"http://c:4318":               "http://c:4318/v1/traces",
		"http://c:4318/":              "http://c:4318/v1/traces",
		"https://c/otlp/v1/traces":    "https://c/otlp/v1/traces",
		"http://c:4318/custom/traces": "http://c:4318/custom/traces",
	} {
		if got := tracesURL(in); got != want {
			t.Errorf("tracesURL(%q) = %q, want %q", in, got, want)
		}
	}
	for _, tc := range []struct {
		flag string
		env  map[string]string
		want string // "" for an error
	}{
		{"", nil, ProtocolHTTP},
		{"grpc", nil, ProtocolGRPC},
		{"", map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, ProtocolGRPC},
		{"", map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf"}, ProtocolHTTP},
		{"http/protobuf", map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, ProtocolHTTP},
		{"", map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, ""},
	} {
		got, err := Config{Protocol: tc.flag, Getenv: func(k string) string { return tc.env[k] }}.protocol()
		if (err != nil) != (tc.want == "") || got != tc.want {
			t.Errorf("flag %q, env %v: %q (%v), want %q", tc.flag, tc.env, got, err, tc.want)
		}
	}
}
