package server

import (
	"testing"

	"github.com/lancens/lancens/server/mcptools"
)

// TestMCPToolOperations checks that every MCP tool names an operation of
// the spec, whose access rule then decides it.
func TestMCPToolOperations(t *testing.T) {
	for tool, op := range mcptools.Operations {
		if _, ok := operationRules[op]; !ok {
			t.Errorf("tool %s performs %s, which is no operation of the spec", tool, op)
		}
	}
}
