package conformance

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/warehouse"
)

// A server under test may choose where its tables lie (lancens gives each
// a place in its warehouse, and takes no other without an external root).
// The cases name locations and staged manifests under the suite's own root
// (remote); ScopeLocatedByServer runs them against such a server:
//
//   - A declared table takes the location the server answers.
//   - A registered table, or one a batch declares, takes a location the
//     server gave a scratch table, declared and deregistered at once: a
//     place the server accepts, and known before the request (a batch may
//     commit a version of the table it declares).
//   - A staged manifest is written where the server reaches it, inside the
//     table's location, when that is a local path (the kit runs on the
//     server's machine): its size is the commit's manifest size, its
//     content follows from its name, so a retry stages the same bytes. On
//     another machine, or an object store, the server must record staged
//     paths as given, or the kit be run with a location root it accepts
//     (Scope).
//
// Answers are translated back: the server's locations and manifest paths
// read as the suite's names, so the cases check the same facts either way.

// located holds the translation of one scoped target.
type located struct {
	mu        sync.Mutex
	locations map[string]string // suite location → the server's
	suiteOf   map[string]string // the server's location → the suite's
	manifests map[string]string // a manifest path the server answered → the suite's staged path
	scratch   atomic.Int64
}

// ScopeLocatedByServer is Scope for a server that chooses table locations
// (see above).
func ScopeLocatedByServer(inner store.Catalog, prefix []string) DataTarget {
	return &scoped{inner: inner, prefix: slices.Clone(prefix), located: &located{
		locations: map[string]string{}, suiteOf: map[string]string{}, manifests: map[string]string{},
	}}
}

// isSuiteLocation reports whether loc is one of the cases' locations.
func isSuiteLocation(loc string) bool { return strings.HasPrefix(loc, suiteLocations+"/") }

// remember records that the suite's location suite is the server's server.
func (l *located) remember(suite, server string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.locations[suite] = server
	l.suiteOf[server] = suite
}

func (l *located) serverLocation(suite string) (string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	loc, ok := l.locations[suite]
	return loc, ok
}

// suiteLocation returns the suite's name of a location the server
// answered, or the location itself.
func (l *located) suiteLocation(server string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if s, ok := l.suiteOf[server]; ok {
		return s
	}
	return server
}

// suiteManifest returns the suite's staged path of a manifest path the
// server answered, or the path itself.
func (l *located) suiteManifest(server string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if s, ok := l.manifests[server]; ok {
		return s
	}
	return server
}

// allocate returns a location the server gives a table, now free: it
// declares a scratch table in the scope's namespace and deregisters it.
func (s *scoped) allocate(ctx context.Context) (string, error) {
	name := fmt.Sprintf("lancens_conformance_location_%d", s.located.scratch.Add(1))
	id := append(slices.Clone(s.prefix), name)
	t, _, err := s.inner.DeclareTable(ctx, id, store.TableDeclaration{})
	if err != nil {
		return "", fmt.Errorf("declare a scratch table for a location: %w", err)
	}
	if _, _, err := s.inner.DeregisterTable(ctx, id); err != nil {
		return "", fmt.Errorf("deregister the scratch table: %w", err)
	}
	if t.Location == "" {
		return "", errors.New("the server declared a table without a location")
	}
	return t.Location, nil
}

// placeFor returns the server location for a suite location loc that a
// table is registered (or batch-declared) at: the one it stands for
// already, or a new one.
func (s *scoped) placeFor(ctx context.Context, loc string) (string, error) {
	if !isSuiteLocation(loc) {
		return loc, nil
	}
	if server, ok := s.located.serverLocation(loc); ok {
		return server, nil
	}
	server, err := s.allocate(ctx)
	if err != nil {
		return "", err
	}
	s.located.remember(loc, server)
	return server, nil
}

// stage readies commit c of table id (inner identifier), whose server
// location is location ("" to look it up): its staged manifest named
// inside the table's location, and written there when that is a local
// path. It returns the commit to send and the suite's staged path. A
// table it cannot find is left for the server to report.
func (s *scoped) stage(ctx context.Context, id []string, location string, c store.VersionCommit) (store.VersionCommit, string) {
	suite := c.StagedPath
	if suite == "" {
		return c, suite
	}
	if location == "" {
		t, err := s.inner.DescribeTable(ctx, id)
		if err != nil || t.Location == "" {
			return c, suite
		}
		location = t.Location
	}
	size := int64(64)
	if c.ManifestSize != nil {
		size = *c.ManifestSize
	}
	path := StageManifest(location, "_versions/"+strings.NewReplacer("/", "_", "\\", "_").Replace(suite), size)
	c.StagedPath, c.ManifestPath = path, path
	return c, suite
}

// StageManifest returns the path of a staged manifest at rel (a
// slash-separated path) inside the table location, and writes it there,
// size bytes whose content follows from rel, when the location is a local
// path. A write that fails shows as the server's refusal of the commit.
func StageManifest(location, rel string, size int64) string {
	dir, ok := warehouse.LocalPath(location)
	if !ok {
		return strings.TrimSuffix(location, "/") + "/" + rel
	}
	path := filepath.Join(dir, filepath.FromSlash(rel))
	content := []byte(strings.Repeat(rel+"\n", int(size)/(len(rel)+1)+1))[:size]
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err == nil {
		_ = os.WriteFile(path, content, 0o644)
	}
	return path
}

// committed records the manifest path the server answered for a commit
// staged as suite, and returns v as the suite knows it.
func (l *located) committed(v *store.TableVersion, suite string) *store.TableVersion {
	if v == nil {
		return nil
	}
	l.mu.Lock()
	l.manifests[v.ManifestPath] = suite
	l.mu.Unlock()
	out := *v
	out.ManifestPath = suite
	return &out
}

// version returns v as the suite knows it.
func (l *located) version(v store.TableVersion) store.TableVersion {
	v.ManifestPath = l.suiteManifest(v.ManifestPath)
	return v
}
