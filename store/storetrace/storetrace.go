// Package storetrace wraps a store backend so that each call of its
// methods is an OpenTelemetry span: "store.<Method>", with the identifier
// the call is about and, for a failed call, its Lance code. It wraps the
// interfaces of the store contract (store/doc.go), not any backend's
// insides, so it traces every backend the same way.
//
// A call becomes a span only inside a span that is being recorded (a
// request's, a job's): the background polling of a store (job claims,
// metrics) makes none. Tracing is off unless a tracer provider is
// installed (otel.SetTracerProvider, see internal/telemetry); the
// wrappers are then only a call through.
//
// The wrappers' methods are generated from the interfaces by
// tools/storetracegen (make generate): one per method.
package storetrace

//go:generate go run ../../tools/storetracegen -out wrappers.gen.go

import (
	"context"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/lancens/lancens/store"
)

// instrumentation names the tracer of the wrappers.
const instrumentation = "github.com/lancens/lancens/store/storetrace"

// Attributes of the spans.
const (
	attrID   = attribute.Key("lancens.id")
	attrCode = attribute.Key("lancens.error.code")
)

// Wrap returns b with its calls traced. A store.ManagedBackend stays one
// (wrapped whole); Unwrap returns b.
func Wrap(b store.Backend) store.Backend {
	if m, ok := b.(store.ManagedBackend); ok {
		return &managedBackend{backend: backend{b: b}, data: data{d: m}, managed: managed{m: m}}
	}
	return &backend{b: b}
}

// backend wraps a store.Backend.
type backend struct{ b store.Backend }

// Unwrap returns the backend wrapped, for callers looking for its
// optional interfaces (a read cache's size).
func (tr *backend) Unwrap() store.Backend { return tr.b }

// data wraps the store.ManagedData of a managed backend or a branch.
type data struct{ d store.ManagedData }

// managed wraps the rest of store.ManagedTables.
type managed struct{ m store.ManagedTables }

// managedBackend wraps a store.ManagedBackend.
type managedBackend struct {
	backend
	data
	managed
}

var (
	_ store.Backend        = (*backend)(nil)
	_ store.ManagedBackend = (*managedBackend)(nil)
)

// start starts the span of a call of method about identifier id (nil:
// none), when ctx is inside a recorded span; otherwise it returns a span
// that records nothing.
func start(ctx context.Context, method string, id []string) (context.Context, trace.Span) {
	if !trace.SpanFromContext(ctx).IsRecording() {
		return ctx, noop.Span{}
	}
	ctx, span := otel.Tracer(instrumentation).Start(ctx, "store."+method, trace.WithSpanKind(trace.SpanKindInternal))
	if id != nil {
		span.SetAttributes(attrID.String(strings.Join(id, "$")))
	}
	return ctx, span
}

// end ends span, recording err (nil: none) with its Lance code.
func end(span trace.Span, err error) {
	if err != nil && span.IsRecording() {
		code := store.ErrorCode(err)
		span.SetAttributes(attrCode.Int(int(code)))
		span.SetStatus(codes.Error, code.String())
	}
	span.End()
}
