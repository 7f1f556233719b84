package server_test

import (
	"testing"

	"github.com/lancens/lancens/internal/apitest"
	"github.com/lancens/lancens/internal/conformance"
)

// httpTarget starts a server for one case and returns the suite's target
// over HTTP: client → server → store, with every response validated
// against openapi.yaml.
func httpTarget(t conformance.T) conformance.Target {
	tt := t.(*testing.T)
	s := apitest.Start(tt, apitest.Options{})
	tg, err := conformance.NewHTTPTarget(s.URL, s.HTTP)
	if err != nil {
		t.Fatalf("target: %v", err)
	}
	return tg
}

// TestConformance runs the whole suite over HTTP.
func TestConformance(t *testing.T) {
	conformance.Run(t, conformance.Config{New: httpTarget, Capabilities: conformance.Full()})
}
