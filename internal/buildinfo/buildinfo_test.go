package buildinfo

import (
	"runtime/debug"
	"strings"
	"testing"
)

// TestFromBuild reads the build information the toolchain records in the
// forms it takes: a released module, a build from a modified checkout, and
// a build with nothing recorded, where the Makefile's values apply.
func TestFromBuild(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		bi                    *debug.BuildInfo
		ldVersion, ldRevision string
		want                  Info
	}{
		{"Released", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.time", Value: "2026-01-02T03:04:05Z"}, {Key: "vcs.modified", Value: "false"}}},
			"ignored", "ignored", Info{Version: "v1.2.3", Revision: "abc", Time: "2026-01-02T03:04:05Z"}},
		{"ModifiedCheckout", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "def"}, {Key: "vcs.modified", Value: "true"}}},
			"", "", Info{Version: "devel", Revision: "def-modified"}},
		{"NothingRecorded", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}},
			"v0.1.0-3-gabc", "abc123", Info{Version: "v0.1.0-3-gabc", Revision: "abc123"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			version, revision = tc.ldVersion, tc.ldRevision
			defer func() { version, revision = "", "" }()
			got := Info{Version: "devel"}
			got.fromBuild(tc.bi)
			got.linkerDefaults()
			if got != tc.want {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
			if s := got.String(); !strings.HasPrefix(s, "lancens "+tc.want.Version) {
				t.Fatalf("String() = %q", s)
			}
		})
	}
}
