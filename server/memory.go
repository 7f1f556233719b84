package server

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strconv"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/lancens/lancens/internal/budget"
	"github.com/lancens/lancens/store"
)

// Memory per request
//
// What a request costs in memory is bounded before it is spent. One
// server-wide decode budget (Config.DecodeBudget, --decode-budget) counts
// the memory requests are about to spend decoding what they sent:
//
//   - Arrow bodies, batch by batch: arrowin reserves each message's bytes
//     as sent (its metadata says how many) before reading them, and as
//     decompressed (its buffers' prefixes say) before decompressing them;
//     a batch's decoded bytes stay reserved until the write has written
//     its rows and released it (store.Data).
//   - JSON bodies over smallJSONBody: jsonCost times their size (at most
//     the whole budget), reserved before the body is read. Reading,
//     validating and binding a JSON document holds several copies of it.
//   - SQL texts (filters, predicates, expressions, column names) together
//     over smallSQL: sqlCost times their size, reserved before the store
//     parses them.
//
// A request's reservations outside its Arrow body are one pool, held
// until it ends: it holds the most any of its phases needs.
//
// A reservation that does not fit waits up to Config.DecodeWait for others
// to return theirs (returned bytes go to the waiters that fit, in arrival
// order, so large requests do not hold up small ones), then the request
// answers 503 (ServiceUnavailable, 17) with Retry-After; one larger than
// the whole budget can never fit and answers 413 (code 13). Small requests reserve
// nothing, so a budget taken by large uploads does not refuse ordinary
// traffic: their cost is bounded by their size limits and the connections.
//
// Each SQL text is also capped at Config.MaxFilterBytes
// (--max-filter-bytes), and expr parses token by token with a nesting
// limit, so parsing one costs memory in proportion to its tree.
//
// After a peak the memory goes back to the operating system: when the
// budget becomes idle after holding more than releaseAfter, the Go heap is
// collected and returned (debug.FreeOSMemory), at most once every
// releaseEvery; a soft memory limit (--memory-limit, GOMEMLIMIT, set by
// the command) makes the collector keep the heap near what is live
// meanwhile.

// Defaults of the memory bounds.
const (
	DefaultDecodeBudget   = 1 << 30
	DefaultDecodeWait     = 2 * time.Second
	DefaultMaxFilterBytes = 256 << 10
)

// Costs and thresholds of the reservations (see above).
const (
	// jsonCost is how many times its size a JSON body costs while read,
	// checked, validated (a decoded copy) and bound (another), with the
	// slack of buffers that grow by doubling: a 30 MB body took 244 MB of
	// heap at its peak.
	jsonCost = 10
	// smallJSONBody is the largest JSON body that reserves nothing.
	smallJSONBody = 256 << 10
	// sqlCost is how many times its size an SQL text costs once parsed,
	// compiled and run: a predicate of 32,768 terms (320 KB) took 67 MB of
	// heap at its peak.
	sqlCost = 256
	// smallSQL is the most SQL text a request may send without reserving.
	smallSQL = 64 << 10
	// releaseAfter is the peak after which memory is returned to the
	// operating system; releaseEvery bounds how often.
	releaseAfter = 64 << 20
	releaseEvery = 5 * time.Second
	// retryAfter is what a request refused for want of budget is told to
	// wait.
	retryAfter = 2 * time.Second
)

// contextReservations holds a request's reservations (requestBudget).
const contextReservations = "lancens.reservations"

// requestBudget is what one request holds of the decode budget, outside
// Arrow bodies (whose reader keeps its own account).
type requestBudget struct {
	b    *budget.Budget
	ctx  context.Context
	held int64
}

// ensure makes the request hold at least n bytes until it ends: one pool
// for all its phases, since what reading its body held is garbage by the
// time it parses its SQL. Returns the budget's refusal (see
// budgetRefusal).
func (r *requestBudget) ensure(n int64, what string) error {
	if n <= r.held {
		return nil
	}
	if err := r.b.Reserve(r.ctx, n-r.held); err != nil {
		return budgetRefusal(err, what, r.b.Limit())
	}
	r.held = n
	return nil
}

// reservations returns the request's account of the decode budget,
// starting one (returned when the request ends, see holdBudget) if needed.
func (s *Server) reservations(c echo.Context) *requestBudget {
	if r, ok := c.Get(contextReservations).(*requestBudget); ok {
		return r
	}
	r := &requestBudget{b: s.decode, ctx: c.Request().Context()}
	c.Set(contextReservations, r)
	return r
}

// holdBudget returns what a request reserved of the decode budget once the
// request is done.
func (s *Server) holdBudget(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		defer func() {
			if r, ok := c.Get(contextReservations).(*requestBudget); ok {
				s.decode.Return(r.held)
				r.held = 0
			}
		}()
		return next(c)
	}
}

// reserveJSON reserves what reading a JSON body of n bytes costs, when it
// is large enough to count: at most the whole budget, since a body within
// --max-json-body may always be sent (it then waits for the budget to be
// free, and runs alone). Returns the budget's refusal.
func (s *Server) reserveJSON(c echo.Context, n int64) error {
	if n <= smallJSONBody {
		return nil
	}
	return s.reservations(c).ensure(min(jsonCost*n, s.decode.Limit()), fmt.Sprintf("a JSON body of %d bytes", n))
}

// sqlText is one SQL text of a request and what the request calls it.
type sqlText struct{ what, text string }

// checkSQL checks the SQL texts of a request against Config.MaxFilterBytes
// and, when together they are large enough to count, reserves what parsing
// them costs. Returns InvalidInput (13) naming the part and the flag, or
// the budget's refusal.
func (s *Server) checkSQL(c echo.Context, texts ...sqlText) error {
	total := 0
	for _, t := range texts {
		if len(t.text) > s.cfg.MaxFilterBytes {
			return invalidInput("%s is %d bytes, more than this server's limit of %d bytes for one SQL text (--max-filter-bytes)",
				t.what, len(t.text), s.cfg.MaxFilterBytes)
		}
		total += len(t.text)
	}
	if total <= smallSQL {
		return nil
	}
	return s.reservations(c).ensure(sqlCost*int64(total), fmt.Sprintf("%d bytes of SQL", total))
}

// queryTexts are the SQL texts of a query: its filter, columns, column
// expressions, sort keys and vector column.
func queryTexts(q store.Query) []sqlText {
	out := []sqlText{{"filter", q.Filter}}
	for _, col := range q.Projection.Columns {
		out = append(out, sqlText{"a column name", col})
	}
	for _, a := range q.Projection.Aliases {
		out = append(out, sqlText{"a column alias", a.Name}, sqlText{"the expression of column " + a.Name, a.Expr})
	}
	for _, k := range q.OrderBy {
		out = append(out, sqlText{"an order_by column", k.Column})
	}
	if q.Vector != nil {
		out = append(out, sqlText{"vector_column", q.Vector.Column})
	}
	return out
}

// retryLater is a refusal for want of decode budget: 503 with Retry-After.
type retryLater struct{ err *store.Error }

func (e *retryLater) Error() string { return e.err.Error() }
func (e *retryLater) Unwrap() error { return e.err }

// budgetRefusal turns a refused reservation (of what) into the answer:
// 503 (17) with Retry-After when the budget is busy, 413 (13) when what is
// larger than the whole budget (limit bytes), the context's error when the
// client went away.
func budgetRefusal(err error, what string, limit int64) error {
	switch {
	case errors.Is(err, budget.ErrBusy):
		return &retryLater{store.Errorf(store.CodeServiceUnavailable,
			"the server is decoding other requests and has no memory for %s now; send it again shortly", what)}
	case errors.Is(err, budget.ErrTooLarge):
		return &tooLargeError{store.Errorf(store.CodeInvalidInput,
			"%s needs more memory to decode than this server's whole decode budget of %d bytes (--decode-budget); send it in smaller parts", what, limit)}
	}
	return err
}

// setRetryAfter adds Retry-After to the answer of a request refused for
// want of budget.
func setRetryAfter(c echo.Context, err error) {
	var rl *retryLater
	if errors.As(err, &rl) {
		c.Response().Header().Set("Retry-After", strconv.Itoa(int(retryAfter/time.Second)))
	}
}

// arrowBudget is the decode budget as an Arrow body's reader reserves from
// it, for one request.
type arrowBudget struct {
	b   *budget.Budget
	ctx context.Context
}

func (a arrowBudget) Reserve(n int64) error {
	if err := a.b.Reserve(a.ctx, n); err != nil {
		return budgetRefusal(err, fmt.Sprintf("a message of %d bytes of this Arrow body", n), a.b.Limit())
	}
	return nil
}

func (a arrowBudget) Return(n int64) { a.b.Return(n) }

// memoryReturner gives memory back to the operating system after peaks, at
// most once every `every`: a peak inside that time is released when it
// ends.
type memoryReturner struct {
	every time.Duration
	free  func() // debug.FreeOSMemory
	// after runs f after d (time.AfterFunc); now tells the time. Tests
	// replace both.
	after func(d time.Duration, f func())
	now   func() time.Time

	mu      sync.Mutex
	last    time.Time // of the last release
	pending bool      // a release is scheduled
}

func newMemoryReturner() *memoryReturner {
	return &memoryReturner{every: releaseEvery, free: debug.FreeOSMemory, now: time.Now,
		after: func(d time.Duration, f func()) { time.AfterFunc(d, f) }}
}

// peaked is the decode budget's idle hook: it schedules a release after a
// peak above releaseAfter.
func (m *memoryReturner) peaked(peak int64) {
	if peak < releaseAfter {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.pending {
		return
	}
	m.pending = true
	m.after(max(m.last.Add(m.every).Sub(m.now()), 0), func() {
		m.mu.Lock()
		m.pending = false
		m.last = m.now()
		m.mu.Unlock()
		m.free()
	})
}
