package store

import (
	"context"
	"net/url"
	"path"
	"path/filepath"
	"strings"
)

// Two tables never share a location nor nest one inside the other, so that
// dropping one never deletes the other's files. Every backend records each
// table's location with a normalised key and refuses a table whose key
// equals, contains or lies inside another's.

// LocationKey returns the normalised form of a table location: scheme, host
// and cleaned path, always ending in "/", so that two spellings of one place
// get one key and a location inside another has the other's key as a
// prefix. Local paths and file:// URIs share the "file" scheme; a relative
// path (recorded only by callers that bypass the server) gets "relative".
func LocationKey(loc string) string {
	scheme, host, p := "file", "", filepath.ToSlash(loc)
	if i := strings.Index(loc, "://"); i > 0 && !strings.ContainsAny(loc[:i], `/\`) {
		scheme, p = strings.ToLower(loc[:i]), loc[i+3:]
		if u, err := url.Parse(loc); err == nil {
			host, p = u.Host, u.Path
		} else if j := strings.IndexByte(p, '/'); j >= 0 {
			host, p = p[:j], p[j:]
		} else {
			host, p = p, ""
		}
		if scheme == "file" && host == "localhost" {
			host = ""
		}
	} else if !path.IsAbs(p) {
		scheme = "relative"
	}
	c := path.Clean("/" + p)
	if c != "/" {
		c += "/"
	}
	return scheme + "://" + host + c
}

// LocationKeyAncestors returns the keys of the places that contain key (a
// LocationKey), from the outermost: for file:///a/b/ these are file:/// and
// file:///a/.
func LocationKeyAncestors(key string) []string {
	i := strings.Index(key, "://") + len("://")
	j := strings.IndexByte(key[i:], '/')
	if j < 0 {
		return nil
	}
	var out []string
	for k := i + j; k < len(key)-1; k++ {
		if key[k] == '/' {
			out = append(out, key[:k+1])
		}
	}
	return out
}

// LocationKeyRangeEnd returns the smallest string above every key that has
// key (a LocationKey, which ends in "/") as a prefix: "0" follows "/".
func LocationKeyRangeEnd(key string) string { return key[:len(key)-1] + "0" }

// ClashMessage describes how location clashes with other, the location of
// another table: the same, inside it, or containing it. otherTable names
// that table; when it is "", neither the table nor its location is named,
// for an answer to a caller who may not see that table.
func ClashMessage(location, other, otherTable string) string {
	mine, theirs := LocationKey(location), LocationKey(other)
	if otherTable == "" {
		switch {
		case mine == theirs:
			return "location " + location + " is the location of another table"
		case strings.HasPrefix(mine, theirs):
			return "location " + location + " lies inside the location of another table"
		default:
			return "location " + location + " contains the location of another table"
		}
	}
	switch {
	case mine == theirs:
		return "location " + location + " is the location of table " + otherTable
	case strings.HasPrefix(mine, theirs):
		return "location " + location + " lies inside " + other + ", the location of table " + otherTable
	default:
		return "location " + location + " contains " + other + ", the location of table " + otherTable
	}
}

// LocationHistory is implemented by every backend: it remembers where dropped
// and deregistered tables lay, and in which namespace: the server lets a
// principal place a table where another namespace's table lay only if it
// may write that namespace, so that dropping or deregistering a table does
// not hand its files to whoever registers the location next.
type LocationHistory interface {
	// ReleasedLocationNamespaces returns the namespaces of the dropped,
	// deregistered or replaced tables whose location is location, lies
	// inside it or contains it (see LocationKey), each once. Returns an
	// error if the catalog cannot be read.
	ReleasedLocationNamespaces(ctx context.Context, location string) ([][]string, error)
}

// ReleasedKeysQuery is what a LocationHistory looks up for location: the
// keys of the places containing it (Ancestors, LocationKeyAncestors) and
// the range [From, To) of keys at or inside it.
type ReleasedKeysQuery struct {
	Ancestors []string
	From, To  string
}

// ReleasedKeys returns the keys a LocationHistory looks up for location.
func ReleasedKeys(location string) ReleasedKeysQuery {
	key := LocationKey(location)
	return ReleasedKeysQuery{Ancestors: LocationKeyAncestors(key), From: key, To: LocationKeyRangeEnd(key)}
}
