// Package telemetry sets up OpenTelemetry tracing for lancens: an SDK
// tracer provider exporting spans over OTLP (HTTP with protobuf, or gRPC)
// in batches, installed as the global provider with W3C trace-context
// propagation, so that the packages that make spans (server, coord,
// warehouse, objstore, store/storetrace) find it through otel.Tracer.
//
// Tracing is off unless asked for, by --otlp-endpoint or by the standard
// environment variables: OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (or OTEL_TRACES_EXPORTER=otlp, which
// sends to the default localhost:4318); OTEL_SDK_DISABLED=true or
// OTEL_TRACES_EXPORTER=none keep it off whatever else is set. The
// exporter reads the other OTEL_EXPORTER_OTLP_* variables itself
// (headers, such as a collector's credentials, certificates, timeouts,
// compression), the SDK reads OTEL_TRACES_SAMPLER(_ARG) and OTEL_BSP_*,
// and the resource OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES.
package telemetry

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
)

// The OTLP protocols.
const (
	ProtocolHTTP = "http/protobuf"
	ProtocolGRPC = "grpc"
)

// Config says where spans go.
type Config struct {
	// Endpoint is the collector's URL (--otlp-endpoint), such as
	// http://collector:4318 or, for gRPC, http://collector:4317; empty:
	// the environment's. For HTTP, a URL without a path gets the traces
	// path, /v1/traces.
	Endpoint string
	// Protocol is ProtocolHTTP or ProtocolGRPC; empty: the environment's
	// (OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, OTEL_EXPORTER_OTLP_PROTOCOL),
	// else ProtocolHTTP.
	Protocol string
	// Version is lancens's, the resource's service.version.
	Version string
	// Getenv reads the environment (os.Getenv in the binary).
	Getenv func(string) string
}

// Enabled reports whether cfg asks for tracing (see the package comment).
func (cfg Config) Enabled() bool {
	env := cfg.Getenv
	if strings.EqualFold(env("OTEL_SDK_DISABLED"), "true") || strings.EqualFold(env("OTEL_TRACES_EXPORTER"), "none") {
		return false
	}
	return cfg.Endpoint != "" || env("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "" ||
		strings.EqualFold(env("OTEL_TRACES_EXPORTER"), "otlp")
}

// protocol returns the protocol cfg names, or an error for one it does not
// know.
func (cfg Config) protocol() (string, error) {
	p := cfg.Protocol
	for _, key := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if p == "" {
			p = cfg.Getenv(key)
		}
	}
	switch p {
	case "", ProtocolHTTP:
		return ProtocolHTTP, nil
	case ProtocolGRPC:
		return ProtocolGRPC, nil
	}
	return "", fmt.Errorf("OTLP protocol %q: lancens sends %s or %s", p, ProtocolHTTP, ProtocolGRPC)
}

// CheckEndpoint returns an error for an --otlp-endpoint that is not an
// http(s) URL.
func CheckEndpoint(endpoint string) error {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("--otlp-endpoint %q: want the collector's URL, such as http://127.0.0.1:4318", endpoint)
	}
	return nil
}

// Start installs a tracer provider exporting as cfg says, when cfg asks
// for tracing. It returns the function that flushes the spans not yet
// sent and removes the provider (a no-op when tracing is off), and
// whether tracing is on. Returns an error for a bad endpoint or protocol.
// Spans that cannot be sent later are dropped and reported by the SDK's
// error handler, never failing a request.
func Start(ctx context.Context, cfg Config) (shutdown func(context.Context) error, enabled bool, err error) {
	nothing := func(context.Context) error { return nil }
	if !cfg.Enabled() {
		return nothing, false, nil
	}
	protocol, err := cfg.protocol()
	if err != nil {
		return nil, false, err
	}
	if cfg.Endpoint != "" {
		if err := CheckEndpoint(cfg.Endpoint); err != nil {
			return nil, false, err
		}
	}
	var exporter *otlptrace.Exporter
	switch protocol {
	case ProtocolGRPC:
		var opts []otlptracegrpc.Option
		if cfg.Endpoint != "" {
			opts = append(opts, otlptracegrpc.WithEndpointURL(cfg.Endpoint))
		}
		exporter, err = otlptracegrpc.New(ctx, opts...)
	default:
		var opts []otlptracehttp.Option
		if cfg.Endpoint != "" {
			opts = append(opts, otlptracehttp.WithEndpointURL(tracesURL(cfg.Endpoint)))
		}
		exporter, err = otlptracehttp.New(ctx, opts...)
	}
	if err != nil {
		return nil, false, fmt.Errorf("OTLP exporter: %w", err)
	}
	res, err := resource.Merge(resource.Default(), resource.NewWithAttributes(semconv.SchemaURL,
		semconv.ServiceName("lancens"), semconv.ServiceVersion(cfg.Version)))
	if err != nil {
		return nil, false, err
	}
	// The environment's service name and attributes win over lancens's.
	if env, err := resource.New(ctx, resource.WithFromEnv()); err == nil {
		if merged, err := resource.Merge(res, env); err == nil {
			res = merged
		}
	}
	provider := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter), sdktrace.WithResource(res))
	previous := otel.GetTracerProvider()
	otel.SetTracerProvider(provider)
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	return func(ctx context.Context) error {
		err := provider.Shutdown(ctx)
		otel.SetTracerProvider(previous)
		return err
	}, true, nil
}

// tracesURL returns the URL spans are posted to: endpoint, with the OTLP
// traces path when it has no path (as for OTEL_EXPORTER_OTLP_ENDPOINT).
func tracesURL(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Path != "" && u.Path != "/") {
		return endpoint
	}
	u.Path = "/v1/traces"
	return u.String()
}
