package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/lancens/lancens/client"
	"github.com/lancens/lancens/internal/progress"
	"github.com/lancens/lancens/internal/tableio"
)

// exportConfig is the configuration of `lancens export`.
type exportConfig struct {
	api      *apiConfig
	table    []string
	path     string
	format   tableio.Format
	filter   string
	columns  []string
	version  int64
	limit    int64
	pageRows int
	progress progress.DisplayMode
}

// defaultPageRows is the default of --page-rows.
const defaultPageRows = 100_000

func parseExportFlags(args []string, getenv func(string) string, stderr io.Writer) (*exportConfig, error) {
	cfg := &exportConfig{}
	fs := flag.NewFlagSet("lancens export", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, `Usage: lancens export --table ID [flags] FILE

Writes the rows of a table, or of a query of it (--filter, --columns,
--limit), at one version (the latest, or --version) to a CSV, JSON-lines or
Parquet file (- writes to standard output), page by page over the API. The
file is written under a temporary name and renamed when complete. What
export writes, import reads back with the same types (CSV aside: it writes
null strings as empty ones).

Flags:
`)
		fs.PrintDefaults()
	}
	cfg.api = addAPIFlags(fs, getenv)
	table := fs.String("table", "", "the table: its namespaces and name joined by $, such as docs or 'prod$docs' (required)")
	format := fs.String("format", "", "csv, jsonl or parquet; default: from the file's extension")
	fs.StringVar(&cfg.filter, "filter", "", "SQL condition the rows exported meet, such as 'score > 0.5'")
	columns := fs.String("columns", "", "comma-separated columns to export, in that order; default: all")
	fs.Int64Var(&cfg.version, "version", 0, "version to export; default: the latest")
	fs.Int64Var(&cfg.limit, "limit", 0, "most rows to export; default: all")
	fs.IntVar(&cfg.pageRows, "page-rows", defaultPageRows, "rows asked for per request")
	display := fs.String("progress", "auto", "progress on standard error: auto (a bar on a terminal, lines otherwise), bar, lines or none")
	var err error
	if cfg.path, err = parseFlagsAround(fs, args, "FILE", stderr); err != nil {
		return nil, err
	}
	if cfg.table, err = parseTableID(*table); err != nil {
		return nil, err
	}
	switch {
	case *format != "":
		cfg.format, err = tableio.ParseFormat(*format)
	case cfg.path == "-":
		err = errors.New("standard output has no extension to tell the format: give --format csv, jsonl or parquet")
	default:
		cfg.format, err = tableio.FormatOf(cfg.path)
	}
	if err != nil {
		return nil, err
	}
	for _, c := range strings.Split(*columns, ",") {
		if c = strings.TrimSpace(c); c != "" {
			cfg.columns = append(cfg.columns, c)
		}
	}
	if cfg.version < 0 || cfg.limit < 0 || cfg.pageRows < 1 {
		return nil, errors.New("--version and --limit must not be negative, --page-rows must be positive")
	}
	if cfg.progress, err = progress.ParseDisplayMode(*display, stderr); err != nil {
		return nil, err
	}
	return cfg, nil
}

// exportData runs `lancens export`. It pins the version first, so that
// every page reads the same rows, and asks for the rows --page-rows at a
// time, writing each batch as it arrives. It returns the server's error
// (a bad filter, a missing table or version) or the file's; a failed
// export leaves no file behind.
func exportData(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := parseExportFlags(args, getenv, stderr)
	if err != nil {
		return err
	}
	c, err := cfg.api.connect()
	if err != nil {
		return err
	}
	name := strings.Join(cfg.table, "$")
	t := c.Table(cfg.table...)
	version := cfg.version
	if version == 0 {
		if version, err = t.Version(ctx); err != nil {
			return fmt.Errorf("export %s: %w", name, err)
		}
	}
	if t, err = t.Checkout(ctx, version); err != nil {
		return fmt.Errorf("export %s: %w", name, err)
	}
	total, err := c.CountRows(ctx, cfg.table, cfg.filter, &version)
	if err != nil {
		return fmt.Errorf("export %s: %w", name, err)
	}
	if cfg.limit > 0 {
		total = min(total, cfg.limit)
	}

	out, commit, abort, err := createOutput(cfg.path, stdout)
	if err != nil {
		return err
	}
	var written atomic.Int64
	display := progress.Show(stderr, cfg.progress, "export "+name, func() progress.Status {
		n := written.Load()
		return progress.Status{Done: n, Total: total, Unit: "rows", Rows: n}
	})
	start := time.Now()
	err = exportPages(ctx, t, cfg, out, &written)
	display.Finish()
	if err != nil {
		abort()
		return fmt.Errorf("export %s: %w", name, err)
	}
	if err := commit(); err != nil {
		return err
	}
	took := time.Since(start)
	fmt.Fprintf(stderr, "exported %d rows of %s version %d in %s (%.0f rows/s)\n", written.Load(), name, version,
		took.Round(time.Millisecond), float64(written.Load())/took.Seconds())
	return nil
}

// exportPages writes the rows of the query cfg describes on t (checked out
// at a version) to out, a page at a time.
func exportPages(ctx context.Context, t *client.Table, cfg *exportConfig, out io.Writer, written *atomic.Int64) error {
	var w tableio.Writer
	for offset := int64(0); ; {
		want := int64(cfg.pageRows)
		if cfg.limit > 0 {
			want = min(want, cfg.limit-offset)
		}
		if want == 0 && w != nil {
			break
		}
		q := t.Query().Limit(int(max(want, 1))).Offset(int(offset))
		if cfg.filter != "" {
			q = q.Where(cfg.filter)
		}
		if len(cfg.columns) > 0 {
			q = q.Select(cfg.columns...)
		}
		r, err := q.Reader(ctx)
		if err != nil {
			return err
		}
		if w == nil {
			if w, err = tableio.NewWriter(out, cfg.format, r.Schema()); err != nil {
				r.Release()
				return err
			}
		}
		var got int64
		for r.Next() && got < want {
			rec := r.RecordBatch()
			if got+rec.NumRows() > want {
				rec = rec.NewSlice(0, want-got)
				defer rec.Release() // once: the page ends with it
			}
			if err := w.Write(rec); err != nil {
				r.Release()
				return err
			}
			got += rec.NumRows()
			written.Add(rec.NumRows())
		}
		err = r.Err()
		r.Release()
		if err != nil {
			return err
		}
		offset += got
		if got < want {
			break
		}
	}
	return w.Close()
}

// createOutput opens where the export goes: standard output for "-",
// else a temporary file beside path that commit renames to path and abort
// removes.
func createOutput(path string, stdout io.Writer) (out io.Writer, commit func() error, abort func(), err error) {
	if path == "-" {
		return stdout, func() error { return nil }, func() {}, nil
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".partial-*")
	if err != nil {
		return nil, nil, nil, err
	}
	commit = func() error {
		if err := f.Chmod(0o644); err != nil {
			f.Close()
			os.Remove(f.Name())
			return err
		}
		if err := f.Close(); err != nil {
			os.Remove(f.Name())
			return err
		}
		return os.Rename(f.Name(), path)
	}
	abort = func() {
		f.Close()
		os.Remove(f.Name())
	}
	return f, commit, abort, nil
}
