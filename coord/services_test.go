package coord_test

import (
	"slices"
	"testing"
	"time"

	"github.com/lancens/lancens/coord"
	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/store/sqlite"
)

// TestNewServices: the services have a retention of old versions, keeping
// what RetainVersionsFor says, run the store's job kinds, data deletions
// first, and start and stop.
func TestNewServices(t *testing.T) {
	e := newEnv(t, sqlite.Options{})
	b := e.withEngine(t)
	for _, tc := range []struct {
		name   string
		retain time.Duration
		keep   time.Duration
	}{
		{"Default", 0, store.DefaultRetainVersionsFor},
		{"KeepNothingExtra", -1, 0},
		{"KeepAnHour", time.Hour, time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := coord.NewServices(coord.ServicesConfig{Store: b, Warehouse: e.wh, RetainVersionsFor: tc.retain})
			if s.Retention == nil || s.Committer == nil || s.RetainVersionsFor() != tc.keep {
				t.Fatalf("services %+v keep %v; want a retention, a committer, keep %v", s, s.RetainVersionsFor(), tc.keep)
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
