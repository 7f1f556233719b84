package server_test

import (
	"testing"

	"github.com/lancens/lancens/internal/apitest"
	"github.com/lancens/lancens/internal/conformance"
)

// TestConformance runs the catalog suite over HTTP: client → server → store,
// with every response validated against openapi.yaml. The suite's tables
// live on object storage, which the server must be allowed to record.
func TestConformance(t *testing.T) {
	conformance.Run(t, func(t *testing.T) conformance.Target {
		return conformance.ClientTarget{C: apitest.Start(t, apitest.Options{ExternalRoots: []string{"s3://conformance-bucket"}}).Client}
	})
}
