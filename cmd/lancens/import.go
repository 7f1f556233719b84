package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancens/lancens/client"
	"github.com/lancens/lancens/internal/progress"
	"github.com/lancens/lancens/internal/tableio"
)

// importConfig is the configuration of `lancens import`.
type importConfig struct {
	api         *apiConfig
	table       []string
	path        string
	format      tableio.Format
	mode        string
	read        tableio.Options
	commitRows  int64
	commitBytes int64
	dryRun      bool
	progress    progress.DisplayMode
}

// Defaults of the import flags that size commits.
const (
	defaultCommitRows  = 1_000_000
	defaultCommitBytes = 256 << 20
)

// parseFlagsAround parses fs from args, letting the one positional
// argument (named what) come before, between or after the flags. Returns
// errUsage after printing a message for none, or more than one.
func parseFlagsAround(fs *flag.FlagSet, args []string, what string, stderr io.Writer) (string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return "", errUsage
		}
		if fs.NArg() == 0 {
			break
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(positional) != 1 {
		fmt.Fprintf(stderr, "give one %s (got %d)\n", what, len(positional))
		fs.Usage()
		return "", errUsage
	}
	return positional[0], nil
}

func parseImportFlags(args []string, getenv func(string) string, stderr io.Writer) (*importConfig, error) {
	cfg := &importConfig{}
	fs := flag.NewFlagSet("lancens import", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, `Usage: lancens import --table ID [flags] FILE

Loads the rows of a CSV, JSON-lines or Parquet file (- reads CSV or JSON
lines from standard input) into a table over the API, in batches: a new table
(--mode create), or an existing one (--mode append, --mode overwrite). The
columns get their types from the file (Parquet), or from its first rows (CSV,
JSON lines); an existing table's columns keep their types, and --schema names
any column's type, such as 'id:int64,vec:vector[768]'. Every commit of
--commit-rows rows makes a version; a failed import drops the table it
created, or restores the table it appended to.

Types of --schema: bool, int8..int64, uint8..uint64, float16, float32,
float64, string, large_string, binary, large_binary, date32,
timestamp[us] (or [s], [ms], [ns], with a zone: timestamp[us, UTC]),
list<T>, large_list<T>, fixed_size_list<T>[N], vector[N] (the same as
fixed_size_list<float32>[N]), struct<name:T,...>.

Flags:
`)
		fs.PrintDefaults()
	}
	cfg.api = addAPIFlags(fs, getenv)
	table := fs.String("table", "", "the table: its namespaces and name joined by $, such as docs or 'prod$docs' (required)")
	format := fs.String("format", "", "csv, jsonl or parquet; default: from the file's extension")
	fs.StringVar(&cfg.mode, "mode", "create", "create (a new table), append (to an existing one) or overwrite (replace the table's rows and schema, or create it)")
	schema := fs.String("schema", "", "column types: name:type,... (see above)")
	fs.IntVar(&cfg.read.InferRows, "infer-rows", tableio.DefaultInferRows, "rows of a CSV or JSON-lines file read to infer the column types")
	fs.IntVar(&cfg.read.BatchRows, "batch-rows", tableio.DefaultBatchRows, "rows per Arrow record batch sent")
	fs.Int64Var(&cfg.commitRows, "commit-rows", defaultCommitRows, "most rows per request; each request commits a version")
	cfg.commitBytes = defaultCommitBytes
	fs.Var(byteSize{&cfg.commitBytes}, "commit-bytes", "most Arrow bytes per request (a request ends at the batch that reaches it); keep it under the server's --max-arrow-body")
	comma := fs.String("csv-delimiter", ",", "the character between the fields of a CSV file")
	fs.BoolVar(&cfg.dryRun, "dry-run", false, "read and convert the whole file and print its schema and rows, sending nothing")
	display := fs.String("progress", "auto", "progress on standard error: auto (a bar on a terminal, lines otherwise), bar, lines or none")
	var err error
	if cfg.path, err = parseFlagsAround(fs, args, "FILE", stderr); err != nil {
		return nil, err
	}
	if cfg.table, err = parseTableID(*table); err != nil {
		return nil, err
	}
	if *format != "" {
		cfg.format, err = tableio.ParseFormat(*format)
	} else if cfg.path == "-" {
		err = errors.New("standard input has no extension to tell its format: give --format csv or jsonl")
	} else {
		cfg.format, err = tableio.FormatOf(cfg.path)
	}
	if err != nil {
		return nil, err
	}
	switch cfg.mode {
	case "create", "append", "overwrite":
	default:
		return nil, fmt.Errorf("bad --mode %q: create, append or overwrite", cfg.mode)
	}
	if *schema != "" {
		if cfg.read.Overrides, err = tableio.ParseSchema(*schema); err != nil {
			return nil, fmt.Errorf("--schema: %w", err)
		}
	}
	if r := []rune(*comma); len(r) != 1 {
		return nil, fmt.Errorf("bad --csv-delimiter %q: one character", *comma)
	} else {
		cfg.read.Comma = r[0]
	}
	if cfg.read.InferRows < 1 || cfg.read.BatchRows < 1 || cfg.commitRows < 1 || cfg.commitBytes < 1 {
		return nil, errors.New("--infer-rows, --batch-rows, --commit-rows and --commit-bytes must be positive")
	}
	if cfg.progress, err = progress.ParseDisplayMode(*display, stderr); err != nil {
		return nil, err
	}
	return cfg, nil
}

// importData runs `lancens import`: it reads the file batch by batch and
// sends the batches in requests of at most --commit-rows rows and
// --commit-bytes bytes, each streamed as it is read. It returns the first
// error: the file's (a value that does not fit, with its line) or the
// server's; the table is then dropped (if this run created it) or
// restored to the version it had (if nothing else has written to it
// since).
func importData(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := parseImportFlags(args, getenv, stderr)
	if err != nil {
		return err
	}
	c, err := cfg.api.connect()
	if err != nil {
		return err
	}
	table := c.Table(cfg.table...)
	name := strings.Join(cfg.table, "$")
	var desc *client.TableDescription
	exists := false
	if !cfg.dryRun || cfg.mode == "append" {
		// A dry run needs the server only for the schema of the table
		// it would append to.
		desc, err = c.DescribeTable(ctx, cfg.table, &client.DescribeTableOptions{LoadDetailedMetadata: true})
		exists = err == nil
		if err != nil && !errors.Is(err, client.ErrTableNotFound) {
			return fmt.Errorf("describe table %s: %w", name, err)
		}
	}
	var before *int64
	switch {
	case cfg.mode == "create" && exists:
		return fmt.Errorf("table %s exists: give --mode append to add rows to it, or --mode overwrite to replace them", name)
	case cfg.mode == "append" && !exists:
		return fmt.Errorf("table %s does not exist: give --mode create to create it", name)
	case cfg.mode == "append":
		if desc.Schema == nil {
			return fmt.Errorf("table %s has no schema the server describes: rows can only be imported into a table whose rows the server keeps", name)
		}
		cfg.read.Table = desc.Schema
	}
	if exists {
		before = desc.Version
	}

	src, err := tableio.Open(cfg.path, cfg.format, cfg.read)
	if err != nil {
		return err
	}
	defer src.Close()
	fmt.Fprintf(stderr, "schema: %s\n", tableio.FormatSchema(src.Schema().Fields()))

	f := &feeder{src: src}
	display := progress.Show(stderr, cfg.progress, "import "+name, f.status)
	start := time.Now()
	var versions []int64
	if cfg.dryRun {
		err = f.drain()
	} else {
		versions, err = f.commitAll(ctx, table, cfg)
	}
	display.Finish()
	if err != nil {
		if !cfg.dryRun && len(versions) > 0 {
			fmt.Fprintln(stderr, undoImport(ctx, c, cfg.table, name, exists, before, versions[len(versions)-1]))
		}
		return fmt.Errorf("import into %s: %w", name, err)
	}
	rows := f.sent.Load()
	took := time.Since(start)
	if cfg.dryRun {
		fmt.Fprintf(stdout, "read %d rows in %s (dry run: nothing sent)\n", rows, took.Round(time.Millisecond))
		return nil
	}
	fmt.Fprintf(stdout, "imported %d rows into %s in %s (%.0f rows/s), %s\n", rows, name, took.Round(time.Millisecond),
		float64(rows)/took.Seconds(), describeVersions(versions))
	return nil
}

func describeVersions(versions []int64) string {
	switch len(versions) {
	case 0:
		return "no version"
	case 1:
		return fmt.Sprintf("version %d", versions[0])
	}
	return fmt.Sprintf("versions %d to %d", versions[0], versions[len(versions)-1])
}

// undoImport takes back what a failed import committed: it drops a table
// the import created, and restores one it wrote to to version before,
// if the import's last version (last) is still the table's latest. It
// returns what it did, for the user.
func undoImport(ctx context.Context, c *client.Client, id []string, name string, existed bool, before *int64, last int64) string {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if !existed {
		if _, err := c.DropTable(ctx, id); err != nil {
			return fmt.Sprintf("the import created table %s and could not drop it: %v", name, err)
		}
		return fmt.Sprintf("dropped table %s, which the import had created", name)
	}
	if before == nil {
		return fmt.Sprintf("table %s keeps the rows the import committed (up to version %d)", name, last)
	}
	latest, err := c.Table(id...).Version(ctx)
	if err != nil || latest != last {
		return fmt.Sprintf("table %s keeps the rows the import committed (up to version %d), as it has been written to since: restore version %d to take them back",
			name, last, *before)
	}
	if err := c.Table(id...).Restore(ctx, *before); err != nil {
		return fmt.Sprintf("table %s keeps the rows the import committed (up to version %d): restoring version %d failed: %v", name, last, *before, err)
	}
	return fmt.Sprintf("restored table %s to version %d, as it was before the import", name, *before)
}

// feeder reads a source one batch ahead, so that a request starts only
// when there are rows for it, and counts what it hands out.
type feeder struct {
	src  tableio.Source
	mu   sync.Mutex
	next arrow.RecordBatch
	err  error
	eof  bool
	sent atomic.Int64
}

// more reports whether a batch is waiting, reading one if needed; false
// at the end of the file or after an error (f.err).
func (f *feeder) more() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.next != nil {
		return true
	}
	if f.eof || f.err != nil {
		return false
	}
	rec, err := f.src.Next()
	switch {
	case errors.Is(err, io.EOF):
		f.eof = true
	case err != nil:
		f.err = err
	default:
		f.next = rec
	}
	return f.next != nil
}

// take hands out the waiting batch (more returned true).
func (f *feeder) take() arrow.RecordBatch {
	f.mu.Lock()
	defer f.mu.Unlock()
	rec := f.next
	f.next = nil
	f.sent.Add(rec.NumRows())
	return rec
}

func (f *feeder) failure() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

func (f *feeder) status() progress.Status {
	done, total, unit := f.src.Progress()
	return progress.Status{Done: done, Total: total, Unit: unit, Rows: f.sent.Load()}
}

// drain reads every batch and drops it (a dry run).
func (f *feeder) drain() error {
	for f.more() {
		f.take().Release()
	}
	return f.failure()
}

// commitAll sends the source in requests: the first creates the table
// (modes create and overwrite), each other appends. It returns the
// versions committed, and the first error.
func (f *feeder) commitAll(ctx context.Context, t *client.Table, cfg *importConfig) ([]int64, error) {
	var versions []int64
	for first := true; first || f.more(); first = false {
		chunk := &chunkReader{f: f, schema: f.src.Schema(), rowsLeft: cfg.commitRows, bytesLeft: cfg.commitBytes}
		chunk.refs.Store(1)
		data := client.FromReader(chunk)
		var version int64
		var err error
		if first && cfg.mode != "append" {
			mode := client.ModeCreate
			if cfg.mode == "overwrite" {
				mode = client.ModeOverwrite
			}
			var created *client.CreatedTable
			if created, err = t.Create(ctx, data, &client.CreateTableOptions{Mode: mode}); err == nil {
				version = created.Version
			}
		} else {
			if first && !f.more() {
				break // nothing to append
			}
			var res *client.WriteResult
			if res, err = t.Add(ctx, data); err == nil {
				version = res.Version
			}
		}
		if ferr := f.failure(); ferr != nil {
			// The file failed in the middle of the request, whose body
			// was cut off: the server committed nothing of it.
			return versions, ferr
		}
		if err != nil {
			return versions, err
		}
		versions = append(versions, version)
	}
	return versions, f.failure()
}

// chunkReader hands the batches of one request to the client: batches of
// the feeder until the request holds --commit-rows rows or
// --commit-bytes bytes (it ends with the batch that reaches either).
type chunkReader struct {
	f                   *feeder
	schema              *arrow.Schema
	rowsLeft, bytesLeft int64
	cur                 arrow.RecordBatch
	refs                atomic.Int64
}

func (c *chunkReader) Retain()               { c.refs.Add(1) }
func (c *chunkReader) Schema() *arrow.Schema { return c.schema }

func (c *chunkReader) Release() {
	if c.refs.Add(-1) == 0 && c.cur != nil {
		c.cur.Release()
		c.cur = nil
	}
}

func (c *chunkReader) Next() bool {
	if c.cur != nil {
		c.cur.Release()
		c.cur = nil
	}
	if c.rowsLeft <= 0 || c.bytesLeft <= 0 || !c.f.more() {
		return false
	}
	c.cur = c.f.take()
	c.rowsLeft -= c.cur.NumRows()
	c.bytesLeft -= batchBytes(c.cur)
	return true
}

func (c *chunkReader) RecordBatch() arrow.RecordBatch { return c.cur }

// Record is RecordBatch, for the deprecated half of the interface.
func (c *chunkReader) Record() arrow.RecordBatch { return c.cur }

func (c *chunkReader) Err() error { return c.f.failure() }

// batchBytes returns the bytes of the buffers of rec's columns (all of
// each buffer, for a slice).
func batchBytes(rec arrow.RecordBatch) int64 {
	var n int64
	var add func(d arrow.ArrayData)
	add = func(d arrow.ArrayData) {
		for _, b := range d.Buffers() {
			if b != nil {
				n += int64(b.Len())
			}
		}
		for _, c := range d.Children() {
			add(c)
		}
	}
	for _, col := range rec.Columns() {
		add(col.Data())
	}
	return n
}
