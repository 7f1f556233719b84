package convert

import (
	"net/url"
	"path"
	"path/filepath"
	"strings"

	"github.com/lancens/lancens/warehouse"
)

// manifestPath returns the path the catalog records for the manifest at
// rel below the root of branch ("" for main) of the dataset at location:
// an object-store path, as lancens records the manifests it publishes
// (the absolute path without its leading "/" on local disk, the key in the
// bucket on object storage).
func manifestPath(location, branch, rel string) string {
	key := rel
	if branch != "" {
		key = "tree/" + strings.Trim(branch, "/") + "/" + rel
	}
	if dir, ok := warehouse.LocalPath(location); ok {
		return warehouse.ObjectPath(filepath.Join(dir, filepath.FromSlash(key)))
	}
	u, err := url.Parse(location)
	if err != nil {
		return location + "/" + key
	}
	return path.Join(strings.TrimPrefix(u.Path, "/"), key)
}
