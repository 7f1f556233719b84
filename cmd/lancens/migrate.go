package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/lancens/lancens/coord"
	"github.com/lancens/lancens/engine"
	"github.com/lancens/lancens/objstore"
	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/store/sqlite"
	"github.com/lancens/lancens/store/sqlite/legacy/convert"
	"github.com/lancens/lancens/warehouse"
)

// migrate runs `lancens migrate`: the managed tables an earlier lancens
// kept in its SQLite file become Lance datasets in the warehouse.
func migrate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("lancens migrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, `Usage: lancens migrate --db FILE [--warehouse DIR|s3://bucket/prefix] [flags]

Converts the tables that lancens releases before the Lance engine kept inside
their SQLite file (managed tables, location lancens://…) into Lance datasets
in the warehouse, every version of every branch, and drops their rows from the
file. The server must not be running on the database (the command takes its
lock). It can be stopped and run again at any point: it goes on where it
stopped. lancens serve --engine lance does the same at start-up, before it
serves; run this first on a large database to see its progress.

`)
		fs.PrintDefaults()
	}
	envOr := func(key, def string) string {
		if v := getenv(key); v != "" {
			return v
		}
		return def
	}
	db := fs.String("db", envOr("LANCENS_DB", "./data/lancens.db"), "the SQLite database to convert (env LANCENS_DB)")
	wh := fs.String("warehouse", envOr("LANCENS_WAREHOUSE", "./data/warehouse"),
		"where the datasets go: the server's warehouse, a directory or an object-store prefix such as s3://bucket/prefix (env LANCENS_WAREHOUSE)")
	sync := fs.String("sync", envOr("LANCENS_SYNC", "FULL"), "SQLite synchronous mode: FULL or NORMAL (env LANCENS_SYNC)")
	storageOptions := map[string]string{}
	var envErr error
	for _, kv := range strings.Split(getenv("LANCENS_STORAGE_OPTIONS"), ",") {
		if kv = strings.TrimSpace(kv); kv != "" {
			if err := setStorageOption(storageOptions, kv); err != nil {
				envErr = errors.Join(envErr, fmt.Errorf("bad LANCENS_STORAGE_OPTIONS: %w", err))
			}
		}
	}
	fs.Func("storage-option", "a storage option KEY=VALUE for an object-store warehouse, as lancens serve takes it; repeatable (env LANCENS_STORAGE_OPTIONS, comma-separated)",
		func(kv string) error { return setStorageOption(storageOptions, kv) })
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return errUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "unexpected argument %q\n", fs.Arg(0))
		return errUsage
	}
	if envErr != nil {
		return envErr
	}
	if isPostgresURL(*db) {
		return fmt.Errorf("a PostgreSQL catalog (%s) never held managed tables: there is nothing to migrate", displayDB(*db))
	}
	if _, err := os.Stat(*db); err != nil {
		return fmt.Errorf("--db %s: %w", *db, err)
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	st, err := sqlite.Open(ctx, *db, sqlite.Options{Synchronous: strings.ToUpper(*sync), CacheBytes: 1 << 20})
	if err != nil {
		return err
	}
	defer st.Close()
	if !strings.Contains(*wh, "://") {
		if err := makeDir(*wh, "warehouse", "--warehouse"); err != nil {
			return err
		}
	}
	w, err := warehouse.OpenStore(ctx, *wh, storageOptions)
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

// setStorageOption adds the storage option kv (KEY=VALUE) to opts. It
// returns an error for a malformed option or an unknown key.
func setStorageOption(opts map[string]string, kv string) error {
	k, v, ok := strings.Cut(kv, "=")
	if k = strings.TrimSpace(k); !ok || k == "" {
		return fmt.Errorf("storage option %q: want KEY=VALUE", kv)
	}
	if err := objstore.CheckKey(k); err != nil {
		return err
	}
	opts[k] = v
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
