package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/lancens/lancens/store"
)

// readBody reads a whole JSON request body of at most limit bytes
// (MaxJSONBody). Returns the error of a body over its limit (code 13, HTTP
// 413) when it is larger, the decode budget's refusal (memory.go) when it
// has no room for the body, and InvalidInput (13) when reading fails.
func readBody(r io.Reader, limit int64) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(r, limit+1))
	var tooBig *http.MaxBytesError
	var refused *store.Error
	switch {
	case errors.As(err, &tooBig) || int64(len(body)) > limit:
		return nil, bodyTooLarge(limit, flagMaxJSONBody)
	case errors.As(err, &refused):
		return nil, err
	case err != nil:
		return nil, invalidInput("reading the request body: %v", err)
	}
	return body, nil
}

// oneJSONValue returns InvalidInput (13) unless body is one JSON value,
// with nothing but white space after it.
func oneJSONValue(body []byte) error {
	if json.Valid(body) {
		// One value and white space: what the decoder below checks, without
		// its copies; it runs only to word the error.
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	var v json.RawMessage
	if err := dec.Decode(&v); err != nil {
		return invalidInput("malformed JSON body: %v", err)
	}
	if len(bytes.TrimSpace(body[dec.InputOffset():])) != 0 {
		return invalidInput("malformed JSON body: more follows the JSON value at byte %d", dec.InputOffset())
	}
	return nil
}

// jsonBody is a request body validateRequests read whole and checked to be
// one JSON value: bindJSON decodes its bytes without reading them again.
type jsonBody struct {
	*bytes.Reader
	raw []byte
}

func newJSONBody(raw []byte) *jsonBody { return &jsonBody{Reader: bytes.NewReader(raw), raw: raw} }

func (*jsonBody) Close() error { return nil }

// bindJSON decodes the request's JSON body (already validated, and `{}` when
// the client sent none) into v. Returns InvalidInput (13) if it does not
// decode.
func bindJSON(c echo.Context, v any) error {
	var err error
	if b, ok := c.Request().Body.(*jsonBody); ok && b.Len() == len(b.raw) {
		err = json.Unmarshal(b.raw, v)
	} else {
		err = json.NewDecoder(c.Request().Body).Decode(v)
	}
	if err != nil {
		return invalidInput("malformed JSON body: %v", err)
	}
	return nil
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func ptr[T any](v T) *T { return &v }

// ok writes a 200 JSON response.
func ok(c echo.Context, v any) error {
	return c.JSON(http.StatusOK, v)
}
