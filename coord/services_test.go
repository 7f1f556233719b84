package coord_test

import (
	"slices"
	"testing"
	"time"

	"github.com/lancens/lancens/coord"
	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/store/sqlite"
)

// TestNewServices: the services of a store the Lance engine serves tables
// of have a retention of old versions; those of the catalog alone do not. Both
// run the store's job kinds, data deletions first, and start and stop.
func TestNewServices(t *testing.T) {
	e := newEnv(t, sqlite.Options{})
	b := e.withEngine(t)
	for _, tc := range []struct {
		name      string
		store     store.Backend
		retain    time.Duration
		retention bool
		keep      time.Duration
	}{
		{"Engine", b, 0, true, store.DefaultRetainVersionsFor},
		{"EngineKeepNothingExtra", b, -1, true, 0},
		{"CatalogOnly", e.db, time.Hour, false, time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := coord.NewServices(coord.ServicesConfig{Store: tc.store, Warehouse: e.wh, RetainVersionsFor: tc.retain})
			if (s.Retention != nil) != tc.retention || s.Committer == nil || s.RetainVersionsFor() != tc.keep {
				t.Fatalf("services %+v keep %v; want retention %v, a committer, keep %v", s, s.RetainVersionsFor(), tc.retention, tc.keep)
			}
			want := []string{store.JobDeleteTableData, store.JobBackfillColumn, store.JobBuildIndex, store.JobCleanupVersions, store.JobRefreshView}
			if got := s.Jobs.Kinds(); !slices.Equal(got, want) {
				t.Fatalf("job kinds %q, want %q", got, want)
			}
			s.Start()
			s.Stop()
		})
	}
}
