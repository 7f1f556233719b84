package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"regexp"
	"time"

	"github.com/labstack/echo/v4"
)

// OptimizeTable is a lancens extension of the API (the spec has no such
// operation, and the LanceDB SDK offers optimize() in local mode only):
//
//	POST /v1/table/{id}/optimize[?delimiter=…]
//	{"older_than_seconds": 3600}        (optional body)
//
// It optimizes table {id} now, as LanceDB's optimize() does: it compacts
// the table (small fragments are merged, and rows deleted are dropped from
// the fragments that have many, as one new version), then cleans it up as the background retention does on its
// own: it removes the versions older than older_than_seconds (default:
// the server's --retain-versions-for) that nothing keeps — the latest
// version of each branch, tagged versions and the versions branches fork
// from stay — then the rows and files no remaining version needs, and
// gives the space back. It answers 200 with an OptimizeTableResponse;
// errors are ErrorResponses: 404 code 4 for a missing table, 400 code 19
// for a table whose rows lancens does not keep, 406 code 0 on a
// catalog-only server.

// OptimizeTableRequest is the optional body of OptimizeTable.
type OptimizeTableRequest struct {
	// OlderThanSeconds, when set, replaces the server's retention period
	// for this cleanup; 0 removes every version nothing keeps.
	OlderThanSeconds *int64 `json:"older_than_seconds,omitempty"`
}

// OptimizeTableResponse is the answer of OptimizeTable.
type OptimizeTableResponse struct {
	// TransactionID records the cleanup.
	TransactionID   string `json:"transaction_id"`
	VersionsRemoved int64  `json:"versions_removed"`
	RowsRemoved     int64  `json:"rows_removed"`
	BytesFreed      int64  `json:"bytes_freed"`
	// FragmentsRemoved and FragmentsAdded count what the compaction
	// rewrote: the fragments it replaced and those it wrote instead.
	FragmentsRemoved int64 `json:"fragments_removed"`
	FragmentsAdded   int64 `json:"fragments_added"`
}

// extensionRoutes registers the routes lancens serves beyond the spec and
// the dialect (see IsExtensionRoute).
func (s *Server) extensionRoutes(e *echo.Echo) {
	e.POST(optimizeRoute, s.OptimizeTable)
}

// optimizeRoute is the Echo path of the optimize route, and routeOptimize
// its label in the metrics.
const (
	optimizeRoute = "/v1/table/:id/optimize"
	routeOptimize = "OptimizeTable"
)

// optimizePath matches the escaped paths of the optimize route.
var optimizePath = regexp.MustCompile(`^/v1/table/[^/]+/optimize/?$`)

// IsExtensionRoute reports whether a request (its method and escaped path)
// is for one of lancens's own routes beyond the spec: POST
// /v1/table/{id}/optimize. They answer a JSON object on success and an
// ErrorResponse otherwise.
func IsExtensionRoute(method, escapedPath string) bool {
	return method == http.MethodPost && optimizePath.MatchString(escapedPath)
}

// OptimizeTable handles POST /v1/table/{id}/optimize (see above).
func (s *Server) OptimizeTable(c echo.Context) error {
	id, err := resolveID(c, optionalQuery(c, "delimiter"), nil)
	if err != nil {
		return err
	}
	body, err := readBody(c.Request().Body, s.cfg.MaxJSONBody)
	if err != nil {
		return err
	}
	var req OptimizeTableRequest
	if len(bytes.TrimSpace(body)) > 0 {
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			return invalidInput("malformed optimize request: %v", err)
		}
	}
	keep := s.services.RetainVersionsFor()
	if req.OlderThanSeconds != nil {
		if *req.OlderThanSeconds < 0 {
			return invalidInput("older_than_seconds must not be negative")
		}
		keep = time.Duration(*req.OlderThanSeconds) * time.Second
	}
	res, txID, err := s.store.Optimize(c.Request().Context(), id, time.Now().Add(-keep))
	if err != nil {
		return err
	}
	return ok(c, OptimizeTableResponse{TransactionID: txID, VersionsRemoved: res.Versions, RowsRemoved: res.Rows, BytesFreed: res.BytesFreed,
		FragmentsRemoved: res.FragmentsRemoved, FragmentsAdded: res.FragmentsAdded})
}
