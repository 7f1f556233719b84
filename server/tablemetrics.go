package server

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/lancens/lancens/store"
)

// Per-table metrics: rows, bytes and versions of each table, and the rows
// each index does not cover yet with how long it has been behind. They are
// gathered in the background every Config.TableMetricsInterval, table by
// table through the store's interfaces, and a scrape answers the last
// gathering: a scrape never waits for the store. To keep the series a
// scrape returns bounded, the first Config.TableMetricsLimit tables (in
// identifier order, the order of ListAllTables, so that the set is
// stable) have series of their own; the others are summed into series
// labelled table="(other)". Declared tables without data are left out.

// otherTables labels the series that sum the tables past the limit.
const otherTables = "(other)"

// Defaults of the per-table metrics.
const (
	DefaultTableMetricsLimit    = 100
	DefaultTableMetricsInterval = time.Minute
)

var (
	descTableRows = prometheus.NewDesc("lancens_table_rows",
		"Rows of the latest version of each managed table (tables past --table-metrics-limit are summed under table=\"(other)\").", []string{"table"}, nil)
	descTableBytes = prometheus.NewDesc("lancens_table_bytes",
		"Bytes the latest version of each managed table stores, deleted rows included.", []string{"table"}, nil)
	descTableVersions = prometheus.NewDesc("lancens_table_versions",
		"Versions each table keeps (of its main branch).", []string{"table"}, nil)
	descIndexUnindexed = prometheus.NewDesc("lancens_table_index_unindexed_rows",
		"Rows an index does not cover yet (searched exactly until it is rebuilt), by table and index.", []string{"table", "index"}, nil)
	descIndexLag = prometheus.NewDesc("lancens_table_index_lag_seconds",
		"How long an index has had unindexed rows, as this server's refreshes have seen it (0 when it covers every row), by table and index.",
		[]string{"table", "index"}, nil)
	descTableMetricsTables = prometheus.NewDesc("lancens_table_metrics_tables",
		"Tables the last gathering of per-table metrics covered.", nil, nil)
	descTableMetricsDuration = prometheus.NewDesc("lancens_table_metrics_refresh_seconds",
		"How long the last gathering of per-table metrics took.", nil, nil)
	descTableMetricsTime = prometheus.NewDesc("lancens_table_metrics_refresh_timestamp_seconds",
		"When the last gathering of per-table metrics ended (Unix time).", nil, nil)
)

// tableFigures are the figures of one table, or of the tables summed
// under otherTables.
type tableFigures struct {
	// hasData: rows and bytes are known (a managed table).
	hasData     bool
	rows, bytes int64
	versions    int64
	indexes     map[string]indexFigures
}

// indexFigures are the figures of one index.
type indexFigures struct {
	unindexed int64
	lag       time.Duration
}

// tableSnapshot is one gathering.
type tableSnapshot struct {
	tables map[string]*tableFigures // by label
	count  int
	took   time.Duration
	at     time.Time
}

// tableMetrics gathers the per-table metrics in the background and
// reports the last gathering.
type tableMetrics struct {
	s        *Server
	limit    int
	interval time.Duration
	mu       sync.Mutex
	last     *tableSnapshot
	// behindSince remembers, by table and index, since when an index has
	// been seen with unindexed rows (the gathering goroutine's alone).
	behindSince map[[2]string]time.Time
	stop        context.CancelFunc
	done        chan struct{}
}

func newTableMetrics(s *Server, limit int, interval time.Duration) *tableMetrics {
	return &tableMetrics{s: s, limit: limit, interval: interval, behindSince: map[[2]string]time.Time{}}
}

// start gathers now and then every interval, until stopped.
func (tm *tableMetrics) start() {
	ctx, cancel := context.WithCancel(context.Background())
	tm.stop = cancel
	tm.done = make(chan struct{})
	go func() {
		defer close(tm.done)
		t := time.NewTimer(0)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			tm.refresh(ctx)
			t.Reset(tm.interval)
		}
	}()
}

// close stops the gathering, waiting for one in progress.
func (tm *tableMetrics) close() {
	if tm.stop != nil {
		tm.stop()
		<-tm.done
	}
}

// refresh gathers the figures of every table and keeps them as the last
// gathering. A table the store fails on is logged and left out.
func (tm *tableMetrics) refresh(ctx context.Context) {
	start := time.Now()
	snap := &tableSnapshot{tables: map[string]*tableFigures{}}
	seen := map[[2]string]bool{}
	page := store.Page{Limit: store.MaxPageSize}
	for {
		ids, next, err := tm.s.store.ListAllTables(ctx, false, page)
		if err != nil {
			if ctx.Err() == nil {
				tm.s.log.Warn("table metrics: list tables", slog.Any("error", err))
			}
			return
		}
		for _, id := range ids {
			label := strings.Join(id, DefaultDelimiter)
			if snap.count >= tm.limit {
				label = otherTables
			}
			f, err := tm.gather(ctx, id, label, start, seen)
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				if c := store.ErrorCode(err); c != store.CodeTableNotFound {
					tm.s.log.Warn("table metrics", slog.String("table", strings.Join(id, DefaultDelimiter)), slog.Any("error", err))
				}
				continue
			}
			snap.count++
			if sum, ok := snap.tables[label]; ok {
				sum.add(f)
			} else {
				snap.tables[label] = f
			}
		}
		if next == "" {
			break
		}
		page.Token = next
	}
	snap.at = time.Now()
	snap.took = snap.at.Sub(start)
	for k := range tm.behindSince {
		if !seen[k] {
			delete(tm.behindSince, k)
		}
	}
	tm.mu.Lock()
	tm.last = snap
	tm.mu.Unlock()
}

// gather returns the figures of table id, whose series are labelled
// label; now is the time of the gathering, seen collects the indexes
// behind. Returns the store's error.
func (tm *tableMetrics) gather(ctx context.Context, id []string, label string, now time.Time, seen map[[2]string]bool) (*tableFigures, error) {
	f := &tableFigures{indexes: map[string]indexFigures{}}
	stats, err := tm.s.store.Stats(ctx, id)
	switch {
	case err == nil:
		f.hasData, f.rows, f.bytes = true, stats.NumRows, stats.TotalBytes
	case notManaged(err):
	default:
		return nil, err
	}
	page := store.Page{Limit: store.MaxPageSize}
	for {
		versions, next, err := tm.s.store.ListVersions(ctx, id, "", false, page)
		if err != nil {
			return nil, err
		}
		f.versions += int64(len(versions))
		if next == "" {
			break
		}
		page.Token = next
	}
	if !f.hasData {
		return f, nil
	}
	page = store.Page{Limit: store.MaxPageSize}
	for {
		indexes, next, err := tm.s.store.ListIndices(ctx, id, nil, page)
		if err != nil {
			return nil, err
		}
		for _, ix := range indexes {
			key := [2]string{strings.Join(id, DefaultDelimiter), ix.Name}
			fig := indexFigures{unindexed: ix.NumUnindexedRows}
			if ix.NumUnindexedRows > 0 {
				seen[key] = true
				since, ok := tm.behindSince[key]
				if !ok {
					since = now
					tm.behindSince[key] = now
				}
				fig.lag = now.Sub(since)
			}
			name := ix.Name
			if label == otherTables {
				name = otherTables
			}
			f.indexes[name] = f.indexes[name].plus(fig)
		}
		if next == "" {
			break
		}
		page.Token = next
	}
	return f, nil
}

// notManaged reports whether err says the table's rows are not kept by
// lancens (an external table, or a store without managed tables).
func notManaged(err error) bool {
	c := store.ErrorCode(err)
	return c == store.CodeUnsupported || c == store.CodeInvalidTableState
}

// add sums o into f.
func (f *tableFigures) add(o *tableFigures) {
	f.hasData = f.hasData || o.hasData
	f.rows += o.rows
	f.bytes += o.bytes
	f.versions += o.versions
	for name, ix := range o.indexes {
		f.indexes[name] = f.indexes[name].plus(ix)
	}
}

// plus sums two indexes' figures: the rows behind add up, the lag is the
// longest.
func (a indexFigures) plus(b indexFigures) indexFigures {
	return indexFigures{unindexed: a.unindexed + b.unindexed, lag: max(a.lag, b.lag)}
}

// Describe implements prometheus.Collector.
func (tm *tableMetrics) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descTableRows, descTableBytes, descTableVersions, descIndexUnindexed, descIndexLag,
		descTableMetricsTables, descTableMetricsDuration, descTableMetricsTime} {
		ch <- d
	}
}

// Collect implements prometheus.Collector: it reports the last gathering,
// nothing before the first.
func (tm *tableMetrics) Collect(ch chan<- prometheus.Metric) {
	tm.mu.Lock()
	snap := tm.last
	tm.mu.Unlock()
	if snap == nil {
		return
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	for label, f := range snap.tables {
		if f.hasData {
			gauge(descTableRows, float64(f.rows), label)
			gauge(descTableBytes, float64(f.bytes), label)
		}
		gauge(descTableVersions, float64(f.versions), label)
		for name, ix := range f.indexes {
			gauge(descIndexUnindexed, float64(ix.unindexed), label, name)
			gauge(descIndexLag, ix.lag.Seconds(), label, name)
		}
	}
	gauge(descTableMetricsTables, float64(snap.count))
	gauge(descTableMetricsDuration, snap.took.Seconds())
	gauge(descTableMetricsTime, float64(snap.at.UnixNano())/1e9)
}
