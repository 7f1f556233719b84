package coord_test

import (
	"fmt"
	"testing"

	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/store/sqlite"
	"github.com/lancens/lancens/warehouse"
)

// BenchmarkCommit commits one version after another of a declared table
// on local disk, as a Lance client in namespace mode does through
// version/create: the manifest it staged is published under its final
// name and the version recorded, with each commit durability. Staging the
// manifest (the client's work) is timed too.
func BenchmarkCommit(b *testing.B) {
	for _, d := range []store.CommitDurability{store.DurabilityFull, store.DurabilityProcess} {
		b.Run(d.String(), func(b *testing.B) {
			e := newEnv(b, sqlite.Options{CommitDurability: d})
			e.wh.SetCommitDurability(d)
			loc := e.declare(b, "t")
			id := []string{"t"}
			v := int64(0)
			for b.Loop() {
				v++
				staged := stage(b, loc, v, fmt.Sprintf("v%d", v))
				if _, _, err := e.c.Commit(b.Context(), id, commit(v, staged), warehouse.NamingV2); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
