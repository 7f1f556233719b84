// Package buildinfo reports which build of lancens is running: the module
// version and the version-control revision the Go toolchain recorded in the
// binary.
package buildinfo

import (
	"runtime"
	"runtime/debug"
	"strings"
)

// version and revision are set by the Makefile with -ldflags -X, from git,
// for builds the toolchain cannot stamp itself (from a git worktree, or
// with -buildvcs=false); what the toolchain records wins.
var version, revision string

// Info describes one build.
type Info struct {
	// Version is the module version ("v1.2.3" for `go install …@v1.2.3`,
	// a pseudo-version for a build in a git checkout), what `git describe`
	// said for `make build`, or else "devel".
	Version string
	// Revision is the VCS commit the binary was built from, with
	// "-modified" appended when the checkout had uncommitted changes; ""
	// when the toolchain recorded none (`go run`, tests, -buildvcs=false).
	Revision string
	// Time is the commit time of Revision (RFC 3339), or "".
	Time string
	// GoVersion is the toolchain that built the binary.
	GoVersion string
}

// Read returns the build information of the running binary.
func Read() Info {
	info := Info{Version: "devel", GoVersion: runtime.Version()}
	if bi, ok := debug.ReadBuildInfo(); ok {
		info.fromBuild(bi)
	}
	info.linkerDefaults()
	return info
}

// linkerDefaults fills in, from the values the Makefile sets, what the
// toolchain did not record.
func (info *Info) linkerDefaults() {
	if info.Version == "devel" && version != "" {
		info.Version = version
	}
	if info.Revision == "" {
		info.Revision = revision
	}
}

// fromBuild fills in what the toolchain recorded.
func (info *Info) fromBuild(bi *debug.BuildInfo) {
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		info.Version = v
	}
	modified := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			info.Revision = s.Value
		case "vcs.time":
			info.Time = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if modified && info.Revision != "" {
		info.Revision += "-modified"
	}
}

// String renders the information on one line:
// "lancens v1.2.3 (revision abc123, 2026-01-02T03:04:05Z, go1.26.8)".
func (i Info) String() string {
	var details []string
	if i.Revision != "" {
		details = append(details, "revision "+i.Revision)
	}
	if i.Time != "" {
		details = append(details, i.Time)
	}
	details = append(details, i.GoVersion)
	return "lancens " + i.Version + " (" + strings.Join(details, ", ") + ")"
}
