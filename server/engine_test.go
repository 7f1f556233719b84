package server_test

import "github.com/lancens/lancens/internal/testkit/apitest"

// lanceEngine reports whether the tests run against the Lance engine
// (LANCENS_ENGINE=lance), where a few answers differ by nature: locations
// are real, _rowid is Lance's row address, types Lance cannot store are
// refused.
func lanceEngine() bool { return apitest.EngineFromEnv() == "lance" }

// lanceOr returns rows, or lance when the tests run against the Lance
// engine.
func lanceOr[T any](rows, lance T) T {
	if lanceEngine() {
		return lance
	}
	return rows
}
