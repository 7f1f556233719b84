package coord

import (
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/lancens/lancens/store"
)

// The coordinator's spans: a job run (a root span: nothing waits for
// it) and a manifest's publication (inside the commit's request). They
// go to the global tracer provider, a no-op unless tracing is on (see
// internal/telemetry). tracer returns the tracer from the global provider
// as it is now: one taken once would keep the provider installed first
// (otel delegates once), though another may replace it.
func tracer() trace.Tracer { return otel.Tracer("github.com/lancens/lancens/coord") }

// Attributes of the coordinator's spans.
const (
	attrJobKind       = attribute.Key("lancens.job.kind")
	attrTransactionID = attribute.Key("lancens.transaction_id")
	attrTable         = attribute.Key("lancens.table")
	attrVersion       = attribute.Key("lancens.version")
	attrManifest      = attribute.Key("lancens.manifest")
	attrCode          = attribute.Key("lancens.error.code")
)

// endSpan ends span, recording err (nil: none) with its Lance code.
func endSpan(span trace.Span, err error) {
	if err != nil {
		code := store.ErrorCode(err)
		span.SetAttributes(attrCode.Int(int(code)))
		span.SetStatus(codes.Error, code.String())
	}
	span.End()
}
