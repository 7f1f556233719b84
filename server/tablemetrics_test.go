package server_test

import (
	"fmt"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/lancens/lancens/client"
	"github.com/lancens/lancens/internal/testkit/apitest"
	"github.com/lancens/lancens/server"
)

type metricsRow struct {
	ID  int64     `arrow:"id"`
	Vec []float32 `arrow:"vec,fixed_size=2"`
}

func metricsRows(from, n int) []metricsRow {
	rows := make([]metricsRow, n)
	for i := range rows {
		rows[i] = metricsRow{ID: int64(from + i), Vec: []float32{float32(i % 7), float32(i % 5)}}
	}
	return rows
}

// waitMetrics scrapes s until ok accepts what it reports, failing t after
// 30 s with the last scrape's figures of the family named for the message.
func waitMetrics(t *testing.T, s *apitest.Server, what string, ok func(map[string]*dto.MetricFamily) bool) map[string]*dto.MetricFamily {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		families := scrape(t, s, keyHeader)
		if ok(families) {
			return families
		}
		if time.Now().After(deadline) {
			t.Fatalf("the per-table metrics never showed %s; the last scrape had %v", what, families["lancens_table_rows"])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestTableMetrics checks the per-table metrics of a real server: rows,
// versions and bytes of each table appear and follow writes after a
// refresh, unindexed rows and the lag of an index appear when rows are
// written after its build, and past --table-metrics-limit tables are
// summed into table="(other)".
func TestTableMetrics(t *testing.T) {
	s := apitest.Start(t, apitest.Options{APIKeys: []string{"k"}, Tune: func(c *server.Config) {
		c.TableMetricsLimit = 2
		c.TableMetricsInterval = 50 * time.Millisecond
	}})
	ctx := t.Context()
	if _, err := s.Client.CreateNamespace(ctx, []string{"ns"}, nil); err != nil {
		t.Fatal(err)
	}
	for i, id := range [][]string{{"a"}, {"b"}, {"c"}, {"ns", "d"}} {
		if _, err := s.Client.Table(id...).Create(ctx, client.Structs(metricsRows(0, 10*(i+1))), nil); err != nil {
			t.Fatal(err)
		}
	}
	// Tables a and b have series of their own; c (30 rows) and ns$d (40)
	// are summed.
	rows := func(table string) func(map[string]*dto.MetricFamily) float64 {
		return func(f map[string]*dto.MetricFamily) float64 {
			return sample(f, "lancens_table_rows", map[string]string{"table": table})
		}
	}
	families := waitMetrics(t, s, "the four tables", func(f map[string]*dto.MetricFamily) bool {
		return rows("a")(f) == 10 && rows("b")(f) == 20 && rows("(other)")(f) == 70
	})
	if n := len(families["lancens_table_rows"].GetMetric()); n != 3 {
		t.Errorf("%d series of lancens_table_rows, want 3 (two tables and the others)", n)
	}
	for _, name := range []string{"lancens_table_versions", "lancens_table_bytes"} {
		if n := len(families[name].GetMetric()); n != 3 {
			t.Errorf("%d series of %s, want 3", n, name)
		}
	}
	if v := sample(families, "lancens_table_versions", map[string]string{"table": "(other)"}); v != 2 {
		t.Errorf("the other tables keep %v versions, want 2", v)
	}
	if v := sample(families, "lancens_table_bytes", map[string]string{"table": "a"}); v <= 0 {
		t.Errorf("table a has %v bytes", v)
	}
	if v := sample(families, "lancens_table_metrics_tables", nil); v != 4 {
		t.Errorf("the gathering covered %v tables, want 4", v)
	}

	// Writes show after a refresh.
	if _, err := s.Client.Table("a").Add(ctx, client.Structs(metricsRows(10, 5))); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Client.Table("ns", "d").Add(ctx, client.Structs(metricsRows(40, 1))); err != nil {
		t.Fatal(err)
	}
	waitMetrics(t, s, "the writes", func(f map[string]*dto.MetricFamily) bool {
		return rows("a")(f) == 15 && rows("(other)")(f) == 71 &&
			sample(f, "lancens_table_versions", map[string]string{"table": "a"}) == 2
	})

	// An index built, then rows written: unindexed rows, and a lag that
	// grows.
	b := s.Client.Table("b")
	if err := b.CreateIndex(ctx, "vec", client.IVFFlat{NumPartitions: 1}, nil); err != nil {
		t.Fatal(err)
	}
	if err := b.WaitForIndex(ctx, "vec_idx"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Add(ctx, client.Structs(metricsRows(20, 3))); err != nil {
		t.Fatal(err)
	}
	ix := map[string]string{"table": "b", "index": "vec_idx"}
	families = waitMetrics(t, s, "3 unindexed rows with a lag", func(f map[string]*dto.MetricFamily) bool {
		return sample(f, "lancens_table_index_unindexed_rows", ix) == 3 && sample(f, "lancens_table_index_lag_seconds", ix) > 0
	})
	lag := sample(families, "lancens_table_index_lag_seconds", ix)
	waitMetrics(t, s, fmt.Sprintf("a lag past %vs", lag), func(f map[string]*dto.MetricFamily) bool {
		return sample(f, "lancens_table_index_lag_seconds", ix) > lag
	})
}

// TestTableMetricsOff checks that a negative interval gathers nothing.
func TestTableMetricsOff(t *testing.T) {
	s := apitest.Start(t, apitest.Options{APIKeys: []string{"k"}, Tune: func(c *server.Config) { c.TableMetricsInterval = -1 }})
	if _, err := s.Client.Table("a").Create(t.Context(), client.Structs(metricsRows(0, 1)), nil); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	if f := scrape(t, s, keyHeader); f["lancens_table_rows"] != nil || f["lancens_table_metrics_tables"] != nil {
		t.Errorf("per-table metrics while off: %v", f["lancens_table_rows"])
	}
}

// TestTableMetricsNotOnScrape checks that a scrape reports the last
// gathering and never gathers itself: a table created after it does not
// show until the next one.
func TestTableMetricsNotOnScrape(t *testing.T) {
	s := apitest.Start(t, apitest.Options{APIKeys: []string{"k"}, Tune: func(c *server.Config) { c.TableMetricsInterval = time.Hour }})
	waitMetrics(t, s, "the first gathering", func(f map[string]*dto.MetricFamily) bool {
		return sample(f, "lancens_table_metrics_tables", nil) == 0
	})
	if _, err := s.Client.Table("a").Create(t.Context(), client.Structs(metricsRows(0, 1)), nil); err != nil {
		t.Fatal(err)
	}
	if f := scrape(t, s, keyHeader); f["lancens_table_rows"] != nil || sample(f, "lancens_table_metrics_tables", nil) != 0 {
		t.Errorf("a scrape gathered: %v", f["lancens_table_rows"])
	}
}
