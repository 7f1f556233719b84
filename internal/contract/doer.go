package contract

import (
	"bytes"
	"io"
	"net/http"
	"strings"

	"github.com/lancens/lancens/internal/conformance"
)

// Transport sends the kit's requests: it adds the API key, and checks every
// answer against the spec, reporting a violation as a failure of the case
// that sent the request.
type Transport struct {
	Client    *http.Client
	APIKey    string
	Validator *Validator
}

// For returns a request sender that reports to case t. Every exchange is
// logged to t (shown with a failed case).
func (tr *Transport) For(t conformance.T) conformance.Doer {
	return caseDoer{tr: tr, t: t}
}

type caseDoer struct {
	tr *Transport
	t  conformance.T
}

// Do sends req and returns the answer with its body read into memory. It
// returns the transport's error when no answer came.
func (d caseDoer) Do(req *http.Request) (*http.Response, error) {
	if d.tr.APIKey != "" && req.Header.Get("x-api-key") == "" && req.Header.Get("Authorization") == "" {
		req.Header.Set("x-api-key", d.tr.APIKey)
	}
	client := d.tr.Client
	if client == nil {
		client = http.DefaultClient
	}
	res, err := client.Do(req)
	if err != nil {
		d.t.Logf("%s %s: %v", req.Method, req.URL.RequestURI(), err)
		return nil, err
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		return nil, err
	}
	res.Body = io.NopCloser(bytes.NewReader(body))
	if res.StatusCode >= 300 {
		d.t.Logf("%s %s → %d %.200s", req.Method, req.URL.RequestURI(), res.StatusCode, body)
	} else {
		d.t.Logf("%s %s → %d", req.Method, req.URL.RequestURI(), res.StatusCode)
	}
	if err := d.tr.Validator.Check(req, res.StatusCode, res.Header, body); err != nil {
		d.t.Helper()
		d.t.Errorf("the answer to %s %s violates openapi.yaml: %s\nanswer: %d %.300s", req.Method, req.URL.RequestURI(), brief(err), res.StatusCode, body)
	}
	return res, nil
}

// brief returns the message of a validation error without the schema and
// value dumps kin-openapi appends to each part.
func brief(err error) string {
	var parts []string
	for _, p := range strings.Split(err.Error(), " | ") {
		if i := strings.Index(p, "\nSchema:"); i >= 0 {
			p = p[:i]
		}
		parts = append(parts, strings.TrimSpace(p))
	}
	return strings.Join(parts, " | ")
}
