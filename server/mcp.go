package server

import (
	"bytes"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/lancens/lancens/internal/buildinfo"
	"github.com/lancens/lancens/server/mcptools"
	"github.com/lancens/lancens/store"
)

// MCPPath is the MCP endpoint (streamable HTTP: one JSON-RPC message per
// POST, answered in JSON). It is behind the API's authentication: a
// request without valid credentials answers 401 (code 16) before the MCP
// server reads it. Each tool then performs one operation of the API,
// through the API itself with the request's credentials, so that the
// access decision for a tool is the one for its operation (see
// internal/mcptools.Operations).
const MCPPath = "/mcp"

// routeMCP labels the MCP endpoint in the metrics and in refusals.
const routeMCP = "MCP"

// mcpRoutes registers the MCP endpoint: POST only (other methods answer
// 405).
func (s *Server) mcpRoutes(e *echo.Echo) {
	h := mcptools.New(mcptools.Config{API: http.HandlerFunc(s.ServeHTTP), Version: buildinfo.Read().Version,
		Logger: s.log, MaxBodyBytes: s.cfg.MaxJSONBody})
	e.POST(MCPPath, func(c echo.Context) error {
		w := &mcpErrors{w: c.Response().Writer}
		req := c.Request()
		h.ServeHTTP(w, req.WithContext(mcptools.WithHost(req.Context(), req.Host)))
		return w.err(s.cfg.MaxJSONBody)
	})
}

// mcpErrors passes the MCP transport's answer through, except a refusal in
// plain text, which it holds back so that it can be answered as every
// error of the API is: an ErrorResponse with its Lance code.
type mcpErrors struct {
	w      http.ResponseWriter
	status int
	held   bool
	text   bytes.Buffer
}

func (m *mcpErrors) Header() http.Header { return m.w.Header() }

func (m *mcpErrors) WriteHeader(status int) {
	if m.status != 0 {
		return
	}
	m.status = status
	if status >= 400 && strings.HasPrefix(m.w.Header().Get(echo.HeaderContentType), "text/plain") {
		m.held = true
		return
	}
	m.w.WriteHeader(status)
}

func (m *mcpErrors) Write(b []byte) (int, error) {
	if m.status == 0 {
		m.WriteHeader(http.StatusOK)
	}
	if m.held {
		return m.text.Write(b)
	}
	return m.w.Write(b)
}

func (m *mcpErrors) Flush() {
	if f, ok := m.w.(http.Flusher); ok && !m.held {
		f.Flush()
	}
}

// err returns the refusal held back as an error of the API: InvalidInput
// (13) for a malformed request (413 for a body over maxBody),
// PermissionDenied (15) for a forbidden one, Internal (18) for a failure;
// nil when the transport answered.
func (m *mcpErrors) err(maxBody int64) error {
	if !m.held {
		return nil
	}
	for _, h := range []string{echo.HeaderContentType, echo.HeaderContentLength, "X-Content-Type-Options"} {
		m.w.Header().Del(h)
	}
	msg := "MCP endpoint: " + strings.TrimSpace(m.text.String())
	switch {
	case m.status == http.StatusRequestEntityTooLarge:
		return bodyTooLarge(maxBody, flagMaxJSONBody)
	case m.status == http.StatusForbidden:
		return store.Errorf(store.CodePermissionDenied, "%s", msg)
	case m.status == http.StatusMethodNotAllowed || m.status == http.StatusNotFound:
		return &routingError{status: m.status, message: msg}
	case m.status < 500:
		return store.Errorf(store.CodeInvalidInput, "%s", msg)
	}
	return store.Errorf(store.CodeInternal, "%s", msg)
}
