package server

import (
	"strings"

	"github.com/labstack/echo/v4"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// Tracing: each routed request is a span named by its route label (the
// spec's operationId, or the label of a route beyond the spec: see
// metrics.go), child of the span a W3C traceparent header names. The
// store's calls, the commit coordinator's manifest publications and the
// object store's requests made while serving it are its children (see
// store/storetrace, coord, objstore). Spans go to the global tracer
// provider, a no-op unless tracing is on (internal/telemetry); the request
// log line then names the trace (trace_id).

// Attributes of the request spans beyond the semantic conventions'.
const (
	attrOperation = attribute.Key("lancens.operation")
	attrRequestID = attribute.Key("lancens.request_id")
	attrTable     = attribute.Key("lancens.table")
	attrNamespace = attribute.Key("lancens.namespace")
	attrPrincipal = attribute.Key("lancens.principal")
)

// tracer returns the tracer of the package's spans, from the global
// provider as it is now: one taken once would keep the provider installed
// first (otel delegates once), though another may replace it.
func tracer() trace.Tracer { return otel.Tracer("github.com/lancens/lancens/server") }

// traceRequests makes the span of each request. It runs before
// logRequests, which renders errors: the status it records is the one
// sent (499 for a client that went away).
func (s *Server) traceRequests(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		ctx := otel.GetTextMapPropagator().Extract(req.Context(), propagation.HeaderCarrier(req.Header))
		route := s.routeLabel(c)
		ctx, span := tracer().Start(ctx, route, trace.WithSpanKind(trace.SpanKindServer))
		if !span.IsRecording() {
			span.End()
			return next(c)
		}
		span.SetAttributes(attrOperation.String(route), semconv.HTTPRequestMethodKey.String(req.Method),
			semconv.HTTPRoute(c.Path()), semconv.URLPath(req.URL.Path), attrRequestID.String(requestID(c)))
		s.traceTarget(c, span)
		c.SetRequest(req.WithContext(ctx))
		defer func() {
			status := c.Response().Status
			if clientGone(c) && !c.Response().Committed {
				status = statusClientClosed
			}
			span.SetAttributes(semconv.HTTPResponseStatusCode(status))
			if p, ok := principalOf(c); ok {
				span.SetAttributes(attrPrincipal.String(p.Name))
			}
			if status >= 500 {
				span.SetStatus(codes.Error, codeLabel(status))
			}
			span.End()
		}()
		return next(c)
	}
}

// traceTarget names on span the table or namespace the request's path
// names, for the operations that name one there.
func (s *Server) traceTarget(c echo.Context, span trace.Span) {
	op := s.ops.lookup(c)
	if op == nil {
		return
	}
	key := attrNamespace
	switch operationRules[op.id].target {
	case inPathTable:
		key = attrTable
	case inPathNamespace:
	default:
		return
	}
	d := delimiterOf(optionalQuery(c, "delimiter"))
	if readings, err := pathReadings(c, d); err == nil {
		span.SetAttributes(key.String(strings.Join(readings[0], DefaultDelimiter)))
	}
}
