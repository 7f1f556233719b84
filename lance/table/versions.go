package table

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lancens/lancens/lance/blob"
)

// Naming is a scheme of manifest file names.
type Naming int

const (
	// NamingV2 names version v's manifest after u64::MAX − v, in 20
	// digits, so that a sorted listing starts with the newest
	// ("18446744073709551614.manifest" is version 1). Lance writes it for
	// new datasets.
	NamingV2 Naming = iota
	// NamingV1 names it after v ("1.manifest"), as older datasets do.
	NamingV1
)

const (
	versionsDir     = "_versions/"
	manifestExt     = ".manifest"
	versionHintPath = versionsDir + "latest_version_hint.json"
)

// ManifestPath returns the path of version v's manifest below its dataset
// (or branch) root.
func ManifestPath(v uint64, n Naming) string {
	if n == NamingV1 {
		return versionsDir + formatUint(v) + manifestExt
	}
	return fmt.Sprintf("%s%020d%s", versionsDir, math.MaxUint64-v, manifestExt)
}

// parseManifestName returns the version and naming of a manifest file
// name (the base name, below _versions/), and false for any other name
// (the version hint, manifests being staged, detached versions).
func parseManifestName(name string) (uint64, Naming, bool) {
	digits, ok := strings.CutSuffix(name, manifestExt)
	if !ok || digits == "" || strings.TrimLeft(digits, "0123456789") != "" {
		return 0, 0, false
	}
	n, err := strconv.ParseUint(digits, 10, 64)
	if err != nil {
		return 0, 0, false
	}
	if len(digits) == 20 {
		if n == math.MaxUint64 {
			return 0, 0, false // version 0 does not exist
		}
		return math.MaxUint64 - n, NamingV2, true
	}
	if n == 0 {
		return 0, 0, false
	}
	return n, NamingV1, true
}

func formatUint(v uint64) string { return strconv.FormatUint(v, 10) }

// VersionInfo describes one stored version.
type VersionInfo struct {
	Version uint64
	// Path is the manifest's path below the dataset (or branch) root.
	Path   string
	Naming Naming
	// Size is the manifest file's size; ModTime when it was stored.
	Size    int64
	ModTime time.Time
}

// listVersions returns the versions whose manifests are in s, oldest
// first. It returns an error wrapping ErrCorrupt when one version has
// manifests under both names.
func listVersions(ctx context.Context, s blob.Store) ([]VersionInfo, error) {
	var out []VersionInfo
	for info, err := range s.List(ctx, versionsDir) {
		if err != nil {
			return nil, err
		}
		name := strings.TrimPrefix(info.Path, versionsDir)
		if strings.Contains(name, "/") {
			continue
		}
		v, n, ok := parseManifestName(name)
		if !ok {
			continue
		}
		out = append(out, VersionInfo{Version: v, Path: info.Path, Naming: n, Size: info.Size, ModTime: info.ModTime})
	}
	slices.SortFunc(out, func(a, b VersionInfo) int {
		switch {
		case a.Version < b.Version:
			return -1
		case a.Version > b.Version:
			return 1
		}
		return 0
	})
	for i := 1; i < len(out); i++ {
		if out[i].Version == out[i-1].Version {
			return nil, corruptf("version %d has two manifests: %s and %s", out[i].Version, out[i-1].Path, out[i].Path)
		}
	}
	return out, nil
}

// versionHint is the content of _versions/latest_version_hint.json, which
// Lance rewrites after each commit so that readers can find the newest
// version without listing every manifest. It may lag behind.
type versionHint struct {
	Version uint64 `json:"version"`
}

// readVersionHint returns the version the hint file of s names, 0 when it
// is missing or unreadable (it is only a hint).
func readVersionHint(ctx context.Context, s blob.Store) uint64 {
	data, err := blob.ReadAll(ctx, s, versionHintPath, 4<<10)
	if err != nil {
		return 0
	}
	var h versionHint
	if json.Unmarshal(data, &h) != nil {
		return 0
	}
	return h.Version
}

// writeVersionHint records v as the newest version of s. A failure is
// returned but harmless: readers fall back to probing and listing.
func writeVersionHint(ctx context.Context, s blob.Store, v uint64) error {
	data, _ := json.Marshal(versionHint{Version: v})
	return blob.Put(ctx, s, versionHintPath, data)
}

// findVersion returns where version v's manifest is in s, trying the V2
// name, then the V1 name. It returns an error wrapping ErrNotFound when
// neither exists.
func findVersion(ctx context.Context, s blob.Store, v uint64) (VersionInfo, error) {
	for _, n := range []Naming{NamingV2, NamingV1} {
		p := ManifestPath(v, n)
		info, err := s.Stat(ctx, p)
		if err == nil {
			return VersionInfo{Version: v, Path: p, Naming: n, Size: info.Size, ModTime: info.ModTime}, nil
		}
		if !errors.Is(err, blob.ErrNotFound) {
			return VersionInfo{}, err
		}
	}
	return VersionInfo{}, fmt.Errorf("%w: version %d", ErrNotFound, v)
}

// latestVersion returns the newest version in s: from the hint, checked
// and followed forward while newer manifests exist, or else from a full
// listing. It returns an error wrapping ErrNotFound when s holds no
// version.
func latestVersion(ctx context.Context, s blob.Store) (VersionInfo, error) {
	if hint := readVersionHint(ctx, s); hint > 0 {
		if info, err := findVersion(ctx, s, hint); err == nil {
			for {
				next, err := findVersion(ctx, s, info.Version+1)
				if errors.Is(err, ErrNotFound) {
					return info, nil
				}
				if err != nil {
					return VersionInfo{}, err
				}
				info = next
			}
		} else if !errors.Is(err, ErrNotFound) {
			return VersionInfo{}, err
		}
	}
	all, err := listVersions(ctx, s)
	if err != nil {
		return VersionInfo{}, err
	}
	if len(all) == 0 {
		return VersionInfo{}, fmt.Errorf("%w: no dataset version", ErrNotFound)
	}
	return all[len(all)-1], nil
}
