package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/lancens/lancens/coord"
	"github.com/lancens/lancens/engine"
	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/store/sqlite"
	"github.com/lancens/lancens/store/sqlite/legacy/convert"
	"github.com/lancens/lancens/warehouse"
)

// migrateUsage is the text of lancens migrate -h.
const migrateUsage = `Usage: lancens migrate [flags of lancens serve]

Converts the tables that lancens releases before the Lance engine kept inside
their SQLite file (managed tables, location lancens://…) into Lance datasets
in the warehouse, every version of every branch, and drops their rows from the
file. It takes the flags, the configuration file (--config) and the
environment of lancens serve, so that it runs with the server's configuration;
it uses --db, --warehouse, --storage-option(-file), --external-root, --sync,
--log-level and --log-format, and ignores the others. The server must not be
running on the database (the command takes its lock). It can be stopped and
run again at any point: it goes on where it stopped. lancens serve does the
same at start-up, before it serves; run this first on a large database to see
its progress.
`

// migrate runs `lancens migrate`: the managed tables an earlier lancens
// kept in its SQLite file become Lance datasets in the warehouse.
func migrate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if slices.ContainsFunc(args, func(a string) bool { return a == "-h" || a == "-help" || a == "--help" }) {
		fmt.Fprint(stdout, migrateUsage)
		return nil
	}
	cfg, err := parseServeFlags(args, getenv, stderr)
	if err != nil {
		return err
	}
	if isPostgresURL(cfg.dbPath) {
		return fmt.Errorf("a PostgreSQL catalog (%s) never held managed tables: there is nothing to migrate", displayDB(cfg.dbPath))
	}
	if _, err := os.Stat(cfg.dbPath); err != nil {
		return fmt.Errorf("--db %s: %w", cfg.dbPath, err)
	}
	opts := &slog.HandlerOptions{Level: cfg.logLevel}
	logger := slog.New(slog.NewTextHandler(stderr, opts))
	if cfg.logFormat == "json" {
		logger = slog.New(slog.NewJSONHandler(stderr, opts))
	}
	st, err := sqlite.Open(ctx, cfg.dbPath, sqlite.Options{Synchronous: cfg.synchronous})
	if err != nil {
		return err
	}
	defer st.Close()
	if !strings.Contains(cfg.warehouse, "://") {
		if err := makeDir(cfg.warehouse, "warehouse", "--warehouse"); err != nil {
			return err
		}
	}
	w, err := warehouse.OpenStore(ctx, cfg.warehouse, cfg.storageOptions, cfg.externalRoots...)
	if err != nil {
		return fmt.Errorf("--warehouse: %w", err)
	}
	e, err := engine.New(engine.Options{Catalog: st, Warehouse: w, Commits: coord.NewCommitter(st, w, logger), Logger: logger})
	if err != nil {
		return err
	}
	sum, err := convertManaged(ctx, st, w, e, logger)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "converted %d tables (%d versions, %d rows) into Lance datasets in %s, in %s\n", sum.Tables, sum.Versions, sum.Rows,
		w.Root(), sum.Elapsed.Round(time.Millisecond))
	if len(sum.Failed) > 0 {
		errs := make([]error, len(sum.Failed))
		for i, f := range sum.Failed {
			errs[i] = fmt.Errorf("%s: %w", strings.Join(f.Table, "$"), f.Err)
		}
		return fmt.Errorf("%d tables were not converted and stay as they were:\n%w", len(sum.Failed), errors.Join(errs...))
	}
	return nil
}

// convertManaged converts the managed tables of db into Lance datasets in
// wh, with their index definitions handed to indexes, logging a line per
// table and, every few seconds, how far the table being converted is. A
// database without managed tables takes one query. It returns the
// conversion's summary and error (see convert.Run): the tables that did
// not convert are in the summary.
func convertManaged(ctx context.Context, db *sqlite.DB, wh *warehouse.Warehouse, indexes store.Indexes, logger *slog.Logger) (convert.Summary, error) {
	var last time.Time
	progress := func(p convert.Progress) {
		if p.Done || time.Since(last) < 5*time.Second {
			return
		}
		last = time.Now()
		logger.Info("converting a managed table into a Lance dataset", "table", strings.Join(p.Table, "$"), "table_number", p.Index,
			"tables", p.Total, "branch", store.BranchName(p.Branch), "version", p.Version, "rows", p.Rows,
			"rows_per_second", int64(float64(p.Rows)/max(p.Elapsed.Seconds(), 1e-3)))
	}
	sum, err := convert.Run(ctx, db, convert.Options{Warehouse: wh, Indexes: indexes, Logger: logger, Progress: progress})
	if sum.Tables > 0 || sum.IndexesBuilt > 0 {
		logger.Info("managed tables converted into Lance datasets", "tables", sum.Tables, "versions", sum.Versions, "rows", sum.Rows,
			"rows_per_second", int64(float64(sum.Rows)/max(sum.Elapsed.Seconds(), 1e-3)), "elapsed", sum.Elapsed.Round(time.Millisecond),
			"indexes_rebuilt", sum.IndexesBuilt, "indexes_pending", sum.IndexesPending, "not_converted", len(sum.Failed))
	}
	return sum, err
}
