package warehouse

import (
	"context"
	"fmt"
)

// Ready returns nil when the warehouse can be reached: its directory
// exists and is a directory, or, on object storage, the store answers and
// its bucket exists and admits lancens' credentials (nothing is written).
// Otherwise it returns the reason.
func (w *Warehouse) Ready(ctx context.Context) error {
	if w.objects != nil {
		if err := w.objects.Reachable(ctx, w.roots[0].host); err != nil {
			return fmt.Errorf("warehouse %s: %w", w.root, err)
		}
		return nil
	}
	if err := disk.Reachable(ctx, w.root); err != nil {
		return fmt.Errorf("warehouse: %w", err)
	}
	return nil
}
