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

// contextSentID holds the {id} path segment as the client sent it, still
// escaped, when the remote dialect adapter rewrote it (remotePaths).
const contextSentID = "lancens.sent_id"

// pathReadings returns the identifiers the {id} path segment can name, split
// on delimiter d. The first is what a request without a body id names:
// clients generated from the spec form-encode each segment (space as "+", a
// literal "+" as "%2B"), so "+" reads as a space, unless the remote dialect
// made it literal (remotePaths). The others keep "+" literal, as clients
// that do not encode their paths mean it, and, when the dialect rewrote the
// segment, read it as sent both ways. Returns InvalidInput (13) for a
// malformed escape.
func pathReadings(c echo.Context, d string) ([][]string, error) {
	raw := c.Param("id")
	if c.Request().URL.RawPath == "" {
		// Echo matched on the decoded path: the value holds no escapes.
		return [][]string{splitID(strings.ReplaceAll(raw, "+", " "), d), splitID(raw, d)}, nil
	}
	segments := []string{raw}
	if sent, ok := c.Get(contextSentID).(string); ok {
		segments = append(segments, sent)
	}
	var out [][]string
	for _, seg := range segments {
		for _, unescape := range []func(string) (string, error){url.QueryUnescape, url.PathUnescape} {
			v, err := unescape(seg)
			if err != nil {
				return nil, invalidInput("malformed id in path: %v", err)
			}
			out = append(out, splitID(v, d))
		}
	}
	return out, nil
}

// resolveID returns the identifier of the object a request is about. The
// route's {id} is split on the delimiter; when the JSON body carries an id
// too, it must name the same object under one of the readings of the path
// (see pathReadings) and is then used as given, since it holds the exact
// names. Returns InvalidInput (13) when the two differ, the path is
// malformed, or a name is not valid UTF-8 or holds a control character,
// and PermissionDenied (15) for an identifier access control did not
// approve.
func resolveID(c echo.Context, delimiter *string, bodyID *[]string) ([]string, error) {
	readings, err := pathReadings(c, delimiterOf(delimiter))
	if err != nil {
		return nil, err
	}
	id := readings[0]
	if bodyID != nil {
		if !slices.ContainsFunc(readings, func(r []string) bool { return slices.Equal(r, *bodyID) }) {
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
