package warehouse

import (
	"context"
	"fmt"
	"os"
)

// Ready returns nil when the warehouse directory can be reached: it exists
// and is a directory. Otherwise it returns the reason.
func (w *Warehouse) Ready(context.Context) error {
	fi, err := os.Stat(w.root)
	if err != nil {
		return fmt.Errorf("warehouse: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("warehouse: %s is not a directory", w.root)
	}
	return nil
}
