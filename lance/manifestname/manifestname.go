// Package manifestname names the manifest files of Lance versions:
// _versions/<name>.manifest, where name is the version's number under one
// of two schemes. It imports nothing, so that what records manifests (the
// stores) and what publishes them (the warehouse) share the scheme
// without depending on each other.
package manifestname

import (
	"fmt"
	"math"
	"strings"
)

// Scheme says how the final manifest file of a version is named.
type Scheme int

// Manifest naming schemes.
const (
	// V2 names version v's manifest with MaxUint64−v in 20 digits, so a
	// lexical listing is newest first.
	V2 Scheme = iota
	// V1 names it with v in decimal.
	V1
)

// Parse reads "V1" or "V2"; anything else but "V1" is V2, as in Lance
// itself.
func Parse(s string) Scheme {
	if strings.EqualFold(s, "V1") {
		return V1
	}
	return V2
}

// FileName returns the file name of version v's manifest.
func (n Scheme) FileName(v int64) string {
	if n == V1 {
		return fmt.Sprintf("%d.manifest", v)
	}
	return fmt.Sprintf("%020d.manifest", uint64(math.MaxUint64)-uint64(v))
}
