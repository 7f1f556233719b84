package server

import (
	"errors"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/lancens/lancens/store"
)

// A client that sends its body slowly holds a connection, a goroutine and
// whatever the handler has allocated until --read-timeout (minutes, sized
// for large uploads) ends it. Config.MinBodyRate cuts it off much sooner:
// once the handler has waited BodyRateGrace in reads of the body, the body
// must keep arriving at an average of at least MinBodyRate bytes per
// second of that waiting. The default, 32 KiB/s, is below
// what any network that can usefully upload Arrow data sustains (a 1 GiB
// upload at that rate takes nine hours), while a client must spend that
// much bandwidth per connection it holds: a thousand held connections cost
// it 32 MiB/s instead of a few bytes each.

// Defaults of the body rate.
const (
	// DefaultMinBodyRate is Config.MinBodyRate's default, in bytes per
	// second.
	DefaultMinBodyRate = 32 << 10
	// BodyRateGrace is the time a body may take before its rate counts:
	// connection set-up, TCP slow start, a client that computes before it
	// streams.
	BodyRateGrace = 5 * time.Second
)

// enforceBodyRate makes the request's body fail, and the connection stop
// reading, as soon as the body falls below Config.MinBodyRate (see above).
// The refusal is InvalidInput (13). It wraps the body before limitBodies
// does, so the reading of what a handler left is watched too.
func (s *Server) enforceBodyRate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		if s.cfg.MinBodyRate <= 0 || req.Body == nil || req.Body == http.NoBody {
			return next(c)
		}
		w := newRateWatch(req.Body, s.cfg.MinBodyRate, http.NewResponseController(c.Response()))
		body := req.Body
		req.Body = w
		// net/http decides by the body's type whether the rest of a body
		// the handler left unread can be discarded or the connection must
		// close instead: it must see its own body again.
		defer func() { req.Body = body }()
		err := next(c)
		if w.cutOffSlow() {
			// The cut-off read also cancelled the request's context, as
			// when a client goes away; this one is still there to be told.
			c.Set(contextBodyTooSlow, true)
		}
		return err
	}
}

// errBodyTooSlow is what a body read answers once its client fell below
// the minimum rate.
var errBodyTooSlow = errors.New("too slow")

// rateWatch is a request body whose reads fail once its client keeps the
// server waiting too long: after BodyRateGrace of waiting in reads, fewer
// than rate bytes per second of that wait have arrived. Only time spent
// waiting in a read counts: a handler busy between reads does not make
// its client slow. A timer runs while a read waits; when the allowance
// runs out it sets the connection's read deadline to now, which ends the
// read at once.
type rateWatch struct {
	body io.ReadCloser
	rate int64
	rc   *http.ResponseController

	mu     sync.Mutex
	n      int64         // bytes read so far
	waited time.Duration // time spent in reads so far
	slow   bool
	timer  *time.Timer
}

func newRateWatch(body io.ReadCloser, rate int64, rc *http.ResponseController) *rateWatch {
	return &rateWatch{body: body, rate: rate, rc: rc}
}

// allowance returns how much longer reads may wait with n bytes read and
// waited spent waiting.
func (w *rateWatch) allowance() time.Duration {
	return BodyRateGrace + time.Duration(float64(w.n)/float64(w.rate)*float64(time.Second)) - w.waited
}

// Read reads the body; it returns InvalidInput (13) once the client has
// fallen below the rate.
func (w *rateWatch) Read(p []byte) (int, error) {
	w.mu.Lock()
	if w.slow || w.allowance() <= 0 {
		w.slow = true
		w.mu.Unlock()
		return 0, tooSlow(w.rate)
	}
	w.timer = time.AfterFunc(w.allowance(), w.cutOff)
	w.mu.Unlock()
	start := time.Now()
	n, err := w.body.Read(p)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.timer.Stop()
	w.timer = nil
	w.n += int64(n)
	w.waited += time.Since(start)
	if w.slow {
		return n, tooSlow(w.rate)
	}
	return n, err
}

// cutOff ends the read that has waited past the allowance.
func (w *rateWatch) cutOff() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.timer == nil {
		return // the read ended meanwhile
	}
	w.slow = true
	_ = w.rc.SetReadDeadline(time.Now()) // unsupported (a test's recorder): the read ends when the client sends
}

func (w *rateWatch) Close() error { return w.body.Close() }

// cutOffSlow reports whether the client was cut off for its rate.
func (w *rateWatch) cutOffSlow() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.slow
}

// contextBodyTooSlow marks a request whose client was cut off for its
// body's rate (see clientGone).
const contextBodyTooSlow = "lancens.body_too_slow"

// tooSlow is the error of a body that arrived slower than rate bytes per
// second.
func tooSlow(rate int64) error {
	return &store.Error{Code: store.CodeInvalidInput, Cause: errBodyTooSlow,
		Message: "the request body arrived slower than this server's minimum of " + strconv.FormatInt(rate, 10) + " bytes per second; the connection is closed"}
}
