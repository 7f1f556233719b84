package warehouse

import (
	"context"
	"fmt"
	"os"
)

// Ready returns nil when the warehouse can be reached: its directory
// exists and is a directory, or, on object storage, the store answers and
// its bucket exists and admits lancens' credentials (nothing is written).
// Otherwise it returns the reason.
func (w *Warehouse) Ready(ctx context.Context) error {
	if w.s3 != nil {
		if err := w.s3.Bucket(w.roots[0].host).Reachable(ctx); err != nil {
			return fmt.Errorf("warehouse %s: %w", w.root, err)
		}
		return nil
	}
	fi, err := os.Stat(w.root)
	if err != nil {
		return fmt.Errorf("warehouse: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("warehouse: %s is not a directory", w.root)
	}
	return nil
}
