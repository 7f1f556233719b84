package objstore

import (
	"net/http"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	smithymiddleware "github.com/aws/smithy-go/middleware"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// tracer returns the tracer of the spans of object-store requests: the
// global provider's as it is now (one taken once would keep the provider
// installed first: otel delegates once), a no-op unless tracing is on
// (see internal/telemetry).
func tracer() trace.Tracer { return otel.Tracer("github.com/lancens/lancens/objstore") }

// tracingClient sends the S3 client's HTTP requests, each one a span
// ("S3 PutObject", …; retries are spans of their own) when it is sent
// inside a recorded span: a request's or a job's, not a background
// check's.
type tracingClient struct{ next s3.HTTPClient }

func (c tracingClient) Do(r *http.Request) (*http.Response, error) {
	ctx := r.Context()
	if !trace.SpanFromContext(ctx).IsRecording() {
		return c.next.Do(r)
	}
	op := smithymiddleware.GetOperationName(ctx)
	ctx, span := tracer().Start(ctx, "S3 "+op, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
		semconv.RPCMethod(op), semconv.HTTPRequestMethodKey.String(r.Method), semconv.ServerAddress(r.URL.Hostname()),
		semconv.URLPath(r.URL.Path)))
	defer span.End()
	res, err := c.next.Do(r.WithContext(ctx))
	switch {
	case err != nil:
		span.SetStatus(codes.Error, err.Error())
	case res.StatusCode >= 500:
		span.SetStatus(codes.Error, res.Status)
	}
	if res != nil {
		span.SetAttributes(semconv.HTTPResponseStatusCode(res.StatusCode))
	}
	return res, err
}
