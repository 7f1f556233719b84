package server

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/lancens/lancens/gen"
	"github.com/lancens/lancens/store"
)

// The operational endpoints live outside /v1 and outside the spec: neither
// the request validator nor the LanceDB dialect adapter sees them.
const (
	// HealthPath answers 200 while the process serves: a liveness probe.
	// No credentials are needed and nothing is revealed.
	HealthPath = "/healthz"
	// ReadyPath answers 200 when the database answers and is migrated and
	// the warehouse can be reached, else 503 (code 17): a readiness probe.
	// No credentials are needed; the reason for a 503 goes to the log
	// only.
	ReadyPath = "/readyz"
	// MetricsPath serves the Prometheus metrics, behind the API's
	// authentication (see MetricsHandler for a listener of its own).
	MetricsPath = "/metrics"
)

// IsOperationalPath reports whether path is one of the operational
// endpoints, which are not spec operations (and of GET /auth/principal
// and the MCP endpoint, which answer JSON of their own but ErrorResponses
// for errors).
func IsOperationalPath(path string) bool {
	return path == HealthPath || path == ReadyPath || path == MetricsPath || path == PrincipalPath || path == MCPPath
}

// readyTimeout bounds a readiness check: a database that takes longer to
// answer is not ready.
const readyTimeout = 5 * time.Second

// ProbeHandler serves the health and readiness endpoints alone, without
// authentication: what ServeHTTP answers for them before anything else
// runs, for a listener of its own.
func (s *Server) ProbeHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case HealthPath:
			s.serveProbe(w, r, nil)
		case ReadyPath:
			s.serveProbe(w, r, s.ready)
		default:
			writeProbeError(w, r, http.StatusNotFound, store.CodeUnsupported, "no such route")
		}
	})
}

// serveProbe answers a probe: 200 {"status":"ok"} when check (nil: none)
// passes, else 503 with code 17. Only GET and HEAD are allowed.
func (s *Server) serveProbe(w http.ResponseWriter, r *http.Request, check func(context.Context) error) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeProbeError(w, r, http.StatusMethodNotAllowed, store.CodeUnsupported, "method not allowed on this route")
		return
	}
	if check != nil {
		ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
		defer cancel()
		if err := check(ctx); err != nil {
			writeProbeError(w, r, http.StatusServiceUnavailable, store.CodeServiceUnavailable, "not ready")
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write([]byte(`{"status":"ok"}` + "\n"))
	}
}

func writeProbeError(w http.ResponseWriter, r *http.Request, status int, code store.Code, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	if r.Method == http.MethodHead {
		return
	}
	instance := r.URL.Path
	_ = json.NewEncoder(w).Encode(gen.ErrorResponse{Code: int(code), Error: &message, Instance: &instance})
}

// readiness remembers the last readiness result, so that a failure is
// logged when it starts and when it ends, not at every probe.
type readiness struct{ failing atomic.Bool }

// ready checks the store (its store.Probe) and the warehouse. The
// first failure after a success is logged at level warn with its cause,
// and the recovery at level info.
func (s *Server) ready(ctx context.Context) error {
	err := s.warehouse.Ready(ctx)
	if err == nil {
		err = s.cfg.Store.Ready(ctx)
	}
	if err != nil {
		if !s.readiness.failing.Swap(true) {
			s.log.Warn("not ready", slog.Any("error", err))
		}
		return err
	}
	if s.readiness.failing.Swap(false) {
		s.log.Info("ready again")
	}
	return nil
}
