package server

import (
	"bufio"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/lancens/lancens/auth"
	"github.com/lancens/lancens/store"
)

// A web page on any origin can make the browser that shows it send
// requests to any address the browser reaches, 127.0.0.1 included: a form
// or a fetch in "no-cors" mode is sent without asking the server first
// (no CORS preflight) as long as its body is text/plain, a form or
// multipart, or has no type at all (a Blob or ArrayBuffer). The page cannot
// read the answer, but the request has done its work. A server without
// credentials would act on it: every request is an admin's. Three checks,
// each one sufficient for the attack it covers, close that door:
//
//   - Origin (checkOrigin, before authentication). Browsers send Origin with every request that
//     is not a GET or HEAD, whatever its mode; SDKs and curl send none. A
//     state-changing operation whose Origin is neither the server's own
//     (the web console) nor a --cors-origin is PermissionDenied (15).
//   - Content type (checkContentType, after authentication). A JSON route reads only
//     application/json and an Arrow route only the Arrow media types;
//     anything else is 415 with InvalidInput (13). Those are the types a
//     page cannot send without a preflight, so this alone stops every
//     cross-site request with a body, even from a browser that sent no
//     Origin. An Arrow body may come without a type, as the spec's
//     generated Rust client (Lance's RestNamespace) sends it; a body-less
//     request needs no type (the LanceDB SDK sends its body-less POSTs so):
//     those two stay covered by the Origin check.
//   - Host (checkHost), on a server without credentials only. DNS
//     rebinding points a name the page's origin owns at 127.0.0.1, which
//     makes the page same-origin with the server: its Origin matches the
//     Host, and it may even read the answers. Such a request carries the
//     attacker's name in Host, so a keyless server answers only Hosts that
//     are IP addresses (an address cannot be rebound), loopback names, or
//     names given with --allowed-host. A server with keys or JWTs serves
//     any Host: a rebound page has no credentials to send, and reverse
//     proxies pass names of their own.

// crossSitePolicy is what checkHost and checkCrossSite compare requests
// with, read once from the Config.
type crossSitePolicy struct {
	// hosts are the names of Config.AllowedHosts (canonicalHost).
	hosts map[string]bool
	// origins are the CORS origins, lower-case without a trailing slash;
	// anyOrigin when one of them is "*".
	origins   map[string]bool
	anyOrigin bool
}

func newCrossSitePolicy(cfg Config) crossSitePolicy {
	p := crossSitePolicy{hosts: map[string]bool{}, origins: map[string]bool{}, anyOrigin: slices.Contains(cfg.CORSOrigins, "*")}
	for _, h := range cfg.AllowedHosts {
		p.hosts[canonicalHost(h)] = true
	}
	for _, o := range cfg.CORSOrigins {
		p.origins[strings.ToLower(strings.TrimSuffix(o, "/"))] = true
	}
	return p
}

// checkHost refuses, on a server without credentials, a request whose Host
// is a name the server was not told it answers to (see above). Returns
// PermissionDenied (15) naming --allowed-host.
func (s *Server) checkHost(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if s.auth.Enabled() {
			return next(c)
		}
		host := canonicalHost(hostOnly(c.Request().Host))
		if host == "" || s.crossSite.hosts[host] || isLoopbackName(host) || net.ParseIP(host) != nil {
			return next(c)
		}
		return store.Errorf(store.CodePermissionDenied,
			"this server has no credentials and answers only requests for its addresses or loopback names, not for host %q; "+
				"name it with --allowed-host %s, or configure API keys", host, host)
	}
}

// hostOnly returns the host of a Host header ("name:port", "[::1]:port"
// or a bare name or address) without its port and brackets.
func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]")
}

// canonicalHost lower-cases a host name and drops a trailing dot, so that
// "LOCALHOST." and "localhost" compare equal.
func canonicalHost(h string) string {
	return strings.TrimSuffix(strings.ToLower(h), ".")
}

// isLoopbackName reports whether a host name always resolves to loopback:
// "localhost" and names under it (RFC 6761; browsers resolve them
// themselves).
func isLoopbackName(h string) bool {
	return h == "localhost" || strings.HasSuffix(h, ".localhost")
}

// refuseForeignOrigins runs checkOrigin on every state-changing operation
// (one that needs more than the read role), before its body is read.
func (s *Server) refuseForeignOrigins(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if _, r, ok := s.ruleOf(c); ok && r.role > auth.RoleRead && !s.crossSite.anyOrigin {
			if err := checkOrigin(c.Request(), s.crossSite.origins); err != nil {
				return err
			}
		}
		return next(c)
	}
}

// refuseOtherMediaTypes runs checkContentType on every request a route
// serves, before its body is read.
func (s *Server) refuseOtherMediaTypes(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if op, _, ok := s.ruleOf(c); ok {
			if err := checkContentType(c.Request(), op.body); err != nil {
				return err
			}
		}
		return next(c)
	}
}

// checkOrigin returns PermissionDenied (15) when the request carries an
// Origin that is neither the server's own (the Host it was sent to) nor
// one of origins (lower-case, without a trailing slash).
func checkOrigin(req *http.Request, origins map[string]bool) error {
	origin := req.Header.Get(echo.HeaderOrigin)
	if origin == "" || origins[strings.ToLower(origin)] || sameOrigin(origin, req.Host) {
		return nil
	}
	return store.Errorf(store.CodePermissionDenied,
		"a page on %s may not change anything here: this server accepts changes from its own pages and the origins given with --cors-origin", origin)
}

// sameOrigin reports whether origin ("scheme://host[:port]") names host (a
// Host header), the port defaulting to the origin's scheme's on both sides.
// The scheme itself is not compared: behind a proxy that ends TLS, the
// console's https origin reaches the server over http.
func sameOrigin(origin, host string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || u.Path != "" || (u.Scheme != "http" && u.Scheme != "https") {
		return false // "null" (sandboxed pages, file: URLs) and the like
	}
	port := "80"
	if u.Scheme == "https" {
		port = "443"
	}
	withPort := func(hp string) string {
		h, p, err := net.SplitHostPort(hp)
		if err != nil {
			h, p = strings.TrimSuffix(strings.TrimPrefix(hp, "["), "]"), port
		}
		return net.JoinHostPort(canonicalHost(h), p)
	}
	return withPort(u.Host) == withPort(host)
}

// Media types of request bodies.
const mimeJSON = "application/json"

// checkContentType returns InvalidInput (13), answered 415, when the
// request declares a body of a type its route does not read: a route
// reading Arrow (kind bodyArrow) takes the Arrow stream or file media type
// or none, every other route application/json (any parameters, such as
// charset, allowed). A request without a Content-Type passes only if its
// body is empty, unless its route reads Arrow.
func checkContentType(req *http.Request, kind bodyKind) error {
	ct := req.Header.Get(echo.HeaderContentType)
	if ct == "" {
		if kind == bodyArrow || !hasBody(req) {
			return nil
		}
		return unsupportedMediaType("a request body needs the header Content-Type: application/json")
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return unsupportedMediaType("the Content-Type %q cannot be read", ct)
	}
	switch {
	case kind == bodyArrow && (mt == mimeArrowStream || mt == mimeArrowFile):
		return nil
	case kind == bodyArrow:
		return unsupportedMediaType("this route reads an Arrow IPC stream, sent as Content-Type: %s, not %s", mimeArrowStream, mt)
	case mt == mimeJSON:
		return nil
	}
	return unsupportedMediaType("this route reads JSON, sent as Content-Type: application/json, not %s", mt)
}

// hasBody reports whether the request has a body of at least one byte. A
// body of unknown length (chunked) is peeked at: its first byte is read
// and put back.
func hasBody(req *http.Request) bool {
	switch {
	case req.ContentLength > 0:
		return true
	case req.ContentLength == 0 || req.Body == nil || req.Body == http.NoBody:
		return false
	}
	br := bufio.NewReaderSize(req.Body, 16)
	_, err := br.Peek(1)
	req.Body = struct {
		io.Reader
		io.Closer
	}{br, req.Body}
	return err == nil
}

// unsupportedMediaTypeError is the error of a request body of a type its
// route does not read: bad input (13), answered 415 so that clients know
// the body was not looked at.
type unsupportedMediaTypeError struct{ err *store.Error }

func (e *unsupportedMediaTypeError) Error() string { return e.err.Error() }
func (e *unsupportedMediaTypeError) Unwrap() error { return e.err }

func unsupportedMediaType(format string, args ...any) error {
	return &unsupportedMediaTypeError{store.Errorf(store.CodeInvalidInput, format, args...)}
}
