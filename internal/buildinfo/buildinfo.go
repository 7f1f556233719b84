// Package buildinfo reports which build of lancens is running: the module
// version and the version-control revision the Go toolchain recorded in the
// binary.
package buildinfo

import (
	"runtime"
	"runtime/debug"
	"strings"
)

// Info describes one build.
type Info struct {
	// Version is the module version ("v1.2.3" for `go install …@v1.2.3`),
	// or "devel" for a build from a checkout.
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
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return info
	}
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
	return info
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
