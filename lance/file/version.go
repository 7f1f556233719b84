package file

import (
	"fmt"

	"github.com/lancens/lancens/lance/file/internal/encoding"
)

// Version is a data file format version: 2.0, 2.1 or 2.2.
type Version struct {
	Major, Minor uint16
}

// The format versions this package reads.
var (
	V2_0 = Version{2, 0}
	V2_1 = Version{2, 1}
	V2_2 = Version{2, 2}
)

func (v Version) String() string { return fmt.Sprintf("%d.%d", v.Major, v.Minor) }

// footerVersion returns the numbers a file of version v carries in its
// footer: 2.0 files keep the numbering 0.3 they were first written with.
func (v Version) footerVersion() (major, minor uint16) {
	if v == V2_0 {
		return 0, 3
	}
	return v.Major, v.Minor
}

// versionOfFooter returns the format version of a footer's numbers, or an
// error wrapping ErrUnsupported for the legacy 0.1 format and versions this
// package does not know (2.3 and later are unstable).
func versionOfFooter(major, minor uint16) (Version, error) {
	switch {
	case major == 0 && minor == 3, major == 2 && minor == 0:
		return V2_0, nil
	case major == 2 && (minor == 1 || minor == 2):
		return Version{major, minor}, nil
	case major == 0 && minor < 3:
		return Version{}, encoding.Unsupportedf("the legacy Lance file format (%d.%d) is not read", major, minor)
	}
	return Version{}, encoding.Unsupportedf("Lance file format version %d.%d is not known", major, minor)
}
