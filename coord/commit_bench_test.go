package coord_test

import (
	"fmt"
	"testing"

	"github.com/lancens/lancens/internal/cputime"
	"github.com/lancens/lancens/lance/manifestname"
	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/store/sqlite"
)

// BenchmarkCommit commits one version after another of a declared table
// on local disk, as a Lance client in namespace mode does through
// version/create: the manifest it staged is published under its final
// name and the version recorded, with each commit durability. The
// manifests are staged (the client's work) before the timer starts. Besides
// the time, it reports the CPU time of the process per commit (cpu-ns/op),
// which a busy machine stretches less than the time.
func BenchmarkCommit(b *testing.B) {
	for _, d := range []store.CommitDurability{store.DurabilityFull, store.DurabilityProcess} {
		b.Run(d.String(), func(b *testing.B) {
			e := newEnv(b, sqlite.Options{CommitDurability: d})
			e.wh.SetCommitDurability(d)
			loc := e.declare(b, "t")
			id := []string{"t"}
			staged := make([]string, b.N)
			for i := range staged {
				staged[i] = stage(b, loc, int64(i+1), fmt.Sprintf("v%d", i+1))
			}
			cpu := cputime.Process()
			b.ResetTimer()
			for i := range b.N {
				if _, _, err := e.c.Commit(b.Context(), id, commit(int64(i+1), staged[i]), manifestname.V2); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			if cpu >= 0 {
				b.ReportMetric(float64(cputime.Process()-cpu)/float64(b.N), "cpu-ns/op")
			}
		})
	}
}
