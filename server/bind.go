package server

import (
	"encoding/json"
	"net/http"

	"github.com/labstack/echo/v4"
)

// bindJSON decodes the request's JSON body (already validated, and `{}` when
// the client sent none) into v. Returns InvalidInput (13) if it does not
// decode.
func bindJSON(c echo.Context, v any) error {
	if err := json.NewDecoder(c.Request().Body).Decode(v); err != nil {
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
