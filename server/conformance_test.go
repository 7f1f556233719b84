package server_test

import (
	"testing"

	"github.com/lancens/lancens/internal/conformance"
	"github.com/lancens/lancens/internal/testkit/apitest"
	"github.com/lancens/lancens/store"
)

// TestConformance runs the whole suite over HTTP: client → server → store,
// with every response validated against openapi.yaml. The cases share one
// server, emptied before each case (a server per case cost most of the
// run: 47 s against 3 s on the shared machine).
func TestConformance(t *testing.T) {
	s := apitest.Start(t, apitest.Options{ExternalRoots: []string{"s3://conformance-bucket"}})
	conformance.Run(t, conformance.Config{
		New: func(t conformance.T) store.Catalog {
			tg, err := conformance.NewHTTPTarget(s.URL, s.HTTP)
			if err != nil {
				t.Fatalf("target: %v", err)
			}
			if err := conformance.Empty(t.Context(), tg); err != nil {
				t.Fatalf("empty the catalog: %v", err)
			}
			return tg
		},
		Capabilities: conformance.Data(),
	})
}
