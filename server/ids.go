package server

import (
	"net/url"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/lancens/lancens/store"
)

// DefaultDelimiter joins the names of a string identifier when the request
// gives no delimiter.
const DefaultDelimiter = "$"

func delimiterOf(d *string) string {
	if d == nil || *d == "" {
		return DefaultDelimiter
	}
	return *d
}

// splitID turns the decoded {id} path value into a list identifier: the
// delimiter alone is the root namespace; empty parts are dropped.
func splitID(value, delimiter string) []string {
	if value == delimiter {
		return []string{}
	}
	parts := strings.Split(value, delimiter)
	out := parts[:0]
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

// pathValues returns the ways the {id} path segment can be read. Clients
// generated from the spec form-encode each segment (space as "+", a literal
// "+" as "%2B"), so the first reading decodes "+" as a space; the second keeps
// "+" literal, as clients that do not encode their paths mean it.
func pathValues(c echo.Context, name string) (form, literal string, err error) {
	raw := c.Param(name)
	if c.Request().URL.RawPath == "" {
		// Echo matched on the decoded path: the value holds no escapes.
		return strings.ReplaceAll(raw, "+", " "), raw, nil
	}
	form, err = url.QueryUnescape(raw)
	if err != nil {
		return "", "", invalidInput("malformed %s in path: %v", name, err)
	}
	literal, err = url.PathUnescape(raw)
	if err != nil {
		return "", "", invalidInput("malformed %s in path: %v", name, err)
	}
	return form, literal, nil
}

// resolveID returns the identifier of the object a request is about. The
// route's {id} is split on the delimiter; when the JSON body carries an id
// too, it must name the same object (under either reading of "+", see
// pathValues) and is then used as given, since it holds the exact names.
// Returns InvalidInput (13) when the two differ, the path is malformed, or a
// name is not valid UTF-8 or holds a control character, and
// PermissionDenied (15) for an identifier access control did not approve.
func resolveID(c echo.Context, delimiter *string, bodyID *[]string) ([]string, error) {
	form, literal, err := pathValues(c, "id")
	if err != nil {
		return nil, err
	}
	d := delimiterOf(delimiter)
	id := splitID(form, d)
	if bodyID != nil {
		if !slices.Equal(*bodyID, id) && !slices.Equal(*bodyID, splitID(literal, d)) {
			return nil, invalidInput("the id in the request body %q does not match the id in the path %q", *bodyID, id)
		}
		id = *bodyID
	}
	if err := checkNames(id); err != nil {
		return nil, err
	}
	if err := checkApproved(c, id); err != nil {
		return nil, err
	}
	return id, nil
}

// checkNames returns InvalidInput (13) when a name of id is not valid UTF-8
// or holds a control character: no object can have such a name, so a
// request naming one is malformed rather than about a missing object.
func checkNames(id []string) error {
	for _, name := range id {
		if err := store.ValidateText("name", name); err != nil {
			return err
		}
	}
	return nil
}
