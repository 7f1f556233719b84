package storetrace_test

import (
	"context"
	"path/filepath"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/lancens/lancens/engine"
	"github.com/lancens/lancens/internal/conformance"
	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/store/sqlite"
	"github.com/lancens/lancens/store/storetrace"
	"github.com/lancens/lancens/warehouse"
)

// open returns a SQLite catalog in t.TempDir() with the Lance engine
// serving its tables from a warehouse there.
func open(t *testing.T) store.ManagedBackend {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "lancens.db"), sqlite.Options{Synchronous: "NORMAL"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	wh, err := warehouse.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(engine.Options{Catalog: db, Warehouse: wh})
	if err != nil {
		t.Fatal(err)
	}
	return engine.WithBackend(db, e)
}

// TestConformance runs the whole conformance suite through the wrappers:
// they pass every call through unchanged.
func TestConformance(t *testing.T) {
	db := open(t)
	traced, ok := storetrace.Wrap(db).(store.ManagedBackend)
	if !ok {
		t.Fatal("a wrapped ManagedBackend is not one")
	}
	conformance.Run(t, conformance.Config{
		New: func(t conformance.T) store.Catalog {
			if err := conformance.Empty(t.Context(), db); err != nil {
				t.Fatalf("empty the catalog: %v", err)
			}
			return conformance.InlineJobs(traced)
		},
		Capabilities: conformance.Full(),
	})
}

// TestSpans checks the spans of calls: one per call inside a recorded
// span, named after the method, with the identifier and the Lance code of
// a failure; none outside one; branches traced too.
func TestSpans(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	provider := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	previous := otel.GetTracerProvider()
	otel.SetTracerProvider(provider)
	t.Cleanup(func() { otel.SetTracerProvider(previous) })

	db := open(t)
	st := storetrace.Wrap(db)
	if u, ok := st.(interface{ Unwrap() store.Backend }); !ok || u.Unwrap() != store.Backend(db) {
		t.Fatal("Unwrap does not return the store wrapped")
	}
	ctx := t.Context()
	if _, err := st.CreateNamespace(ctx, []string{"quiet"}, store.ModeCreate, nil); err != nil {
		t.Fatal(err)
	}
	if n := len(rec.Ended()); n != 0 {
		t.Fatalf("%d spans outside a recorded span", n)
	}

	ctx, root := provider.Tracer("test").Start(ctx, "request")
	if _, err := st.CreateNamespace(ctx, []string{"a"}, store.ModeCreate, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := st.DescribeNamespace(ctx, []string{"missing"}); err == nil {
		t.Fatal("described a missing namespace")
	}
	branch := st.(store.ManagedBackend).OnBranch("dev")
	if _, err := branch.Stats(ctx, []string{"a", "nope"}); err == nil {
		t.Fatal("stats of a missing table")
	}
	root.End()
	spans := rec.Ended()
	want := []struct {
		name, id string
		code     int64 // -1: succeeded
	}{{"store.CreateNamespace", "a", -1}, {"store.DescribeNamespace", "missing", 1}, {"store.Stats", "a$nope", 4}, {"request", "", -1}}
	if len(spans) != len(want) {
		t.Fatalf("%d spans, want %d", len(spans), len(want))
	}
	for i, w := range want {
		s := spans[i]
		attrs := map[string]any{}
		for _, kv := range s.Attributes() {
			attrs[string(kv.Key)] = kv.Value.AsInterface()
		}
		if s.Name() != w.name || (w.id != "" && attrs["lancens.id"] != w.id) {
			t.Errorf("span %d: %s %v, want %s about %s", i, s.Name(), attrs, w.name, w.id)
		}
		if w.name != "request" && s.Parent().SpanID() != root.SpanContext().SpanID() {
			t.Errorf("span %s is not the request's child", s.Name())
		}
		failed := s.Status().Code == codes.Error
		if (w.code >= 0) != failed || (w.code >= 0 && attrs["lancens.error.code"] != w.code) {
			t.Errorf("span %s: status %v, attributes %v, want code %d", s.Name(), s.Status(), attrs, w.code)
		}
	}
}
