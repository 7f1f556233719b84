package convert

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/store/sqlcatalog"
	"github.com/lancens/lancens/store/sqlite/legacy"
	"github.com/lancens/lancens/warehouse"
)

// Options configure a conversion.
type Options struct {
	// Warehouse allocates the datasets' locations and reaches their
	// files. Required.
	Warehouse *warehouse.Warehouse
	// Indexes builds the index definitions of converted tables again on
	// their datasets (the engine: vector builds are queued, the others
	// built at once). Nil, or an engine that answers Unsupported (0),
	// keeps them for a later run.
	Indexes store.Indexes
	// Logger receives a line per table converted and what is left alone.
	// Default: discard.
	Logger *slog.Logger
	// Progress, when set, is called after each version written, about
	// every second while rows are read, and once per table done.
	Progress func(Progress)
	// MaxRowsPerFile starts a new fragment after this many rows of one
	// version; 0 is Lance's default.
	MaxRowsPerFile uint64

	// step, when set (tests), is called after each durable step.
	step func(what string)
}

// Progress is where a conversion stands.
type Progress struct {
	// Table is the table being converted, the Index-th (from 1) of Total.
	Table        []string
	Index, Total int
	// Branch and Version are the version being written (0 once the
	// table is done); Rows counts the rows the table's conversion has
	// read so far.
	Branch  string
	Version int64
	Rows    int64
	// Elapsed is the time since the table's conversion started.
	Elapsed time.Duration
	Done    bool
}

// Summary is what a conversion did.
type Summary struct {
	// Tables were converted, with Versions versions and Rows rows
	// written in all, in Elapsed.
	Tables, Versions int
	Rows             int64
	Elapsed          time.Duration
	// Failed are the tables left as they were, with why.
	Failed []Failure
	// IndexesBuilt are the index definitions handed to the engine;
	// IndexesPending those kept for a later run.
	IndexesBuilt, IndexesPending int
}

// Failure is a table a conversion left in the row store.
type Failure struct {
	Table []string
	Err   error
}

// Run converts every managed table of st into a Lance dataset in the
// warehouse, one table after the other, and hands their index
// definitions to the engine. A table that fails is left as it was and
// reported in Summary.Failed (and the log); the others go on. It returns
// the error that stopped it before it could try every table: the
// database's, the warehouse's, a cancelled ctx.
func Run(ctx context.Context, st legacy.Store, opts Options) (Summary, error) {
	if opts.Warehouse == nil {
		return Summary{}, errors.New("convert: a warehouse is required")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.step == nil {
		opts.step = func(string) {}
	}
	start := time.Now()
	var sum Summary
	abandoned, err := legacy.Abandoned(ctx, st)
	if err != nil {
		return sum, err
	}
	for _, loc := range abandoned {
		if err := opts.Warehouse.Remove(ctx, loc); err != nil {
			return sum, fmt.Errorf("remove the files of an abandoned conversion at %s: %w", loc, err)
		}
		if err := legacy.Forget(ctx, st, loc); err != nil {
			return sum, err
		}
	}
	refs, err := legacy.Managed(ctx, st)
	if err != nil {
		return sum, err
	}
	for i, r := range refs {
		if err := ctx.Err(); err != nil {
			return sum, err
		}
		versions, rows, err := convertTable(ctx, st, r, i+1, len(refs), opts)
		if err != nil {
			if ctx.Err() != nil {
				return sum, ctx.Err()
			}
			opts.Logger.Error("table not converted: it stays in the row store, and is not served until it is converted",
				"table", sqlcatalog.DisplayID(r.ID), "error", err)
			sum.Failed = append(sum.Failed, Failure{Table: r.ID, Err: err})
			continue
		}
		sum.Tables++
		sum.Versions += versions
		sum.Rows += rows
	}
	if err := rebuildIndexes(ctx, st, opts, &sum); err != nil {
		return sum, err
	}
	if err := legacy.Finish(ctx, st); err != nil {
		return sum, err
	}
	if sum.Tables > 0 {
		// The rows dropped leave free pages in the database file.
		if err := legacy.GiveBackSpace(ctx, st); err != nil {
			return sum, err
		}
	}
	sum.Elapsed = time.Since(start)
	return sum, nil
}

// convertTable writes the dataset of table r (the index-th of total) and
// records it. It returns how many versions and rows it wrote.
func convertTable(ctx context.Context, st legacy.Store, r legacy.Ref, index, total int, opts Options) (int, int64, error) {
	start := time.Now()
	t, err := legacy.Load(ctx, st, r)
	if err != nil {
		return 0, 0, err
	}
	if err := checkTypes(t); err != nil {
		return 0, 0, err
	}
	wh := opts.Warehouse
	loc, earlier, err := legacy.Reserve(ctx, st, r, func() (string, error) { return wh.Allocate(r.ID[:len(r.ID)-1], r.ID[len(r.ID)-1]) })
	if err != nil {
		return 0, 0, err
	}
	if earlier {
		// A conversion stopped before recording the dataset: its files
		// are nobody's, and it starts over.
		if err := wh.Remove(ctx, loc); err != nil {
			return 0, 0, fmt.Errorf("remove the files of an unfinished conversion at %s: %w", loc, err)
		}
	}
	opts.step("reserved " + loc)
	root, ok, err := wh.Blobs(loc)
	if err != nil {
		return 0, 0, err
	}
	if !ok {
		return 0, 0, fmt.Errorf("the warehouse allocated %s, which it does not reach", loc)
	}
	if err := legacy.PrepareReads(ctx, st, t); err != nil {
		return 0, 0, err
	}
	d := &dataset{st: st, root: root, location: loc, maxRows: opts.MaxRowsPerFile, format: fileFormat(t), forks: map[forkPoint]*lineState{}}
	report := func(branch string, version int64) {
		if opts.Progress != nil {
			opts.Progress(Progress{Table: r.ID, Index: index, Total: total, Branch: branch, Version: version, Rows: d.rows, Elapsed: time.Since(start)})
		}
	}
	d.progress = report
	d.step = func(what string) {
		opts.step(what)
		m := d.manifests[len(d.manifests)-1]
		report(m.Branch, m.Version)
	}
	for _, l := range t.Lines {
		if err := d.writeLine(ctx, t, l); err != nil {
			return 0, 0, err
		}
	}
	if err := legacy.Record(ctx, st, t, loc, d.manifests); err != nil {
		return 0, 0, err
	}
	opts.step("recorded " + loc)
	elapsed := time.Since(start)
	opts.Logger.Info("table converted into a Lance dataset", "table", sqlcatalog.DisplayID(r.ID), "table_number", index, "tables", total,
		"location", loc, "versions", len(d.manifests), "rows", d.rows, "rows_per_second", int64(float64(d.rows)/max(elapsed.Seconds(), 1e-3)),
		"elapsed", elapsed.Round(time.Millisecond))
	if opts.Progress != nil {
		opts.Progress(Progress{Table: r.ID, Index: index, Total: total, Rows: d.rows, Elapsed: elapsed, Done: true})
	}
	return len(d.manifests), d.rows, nil
}

// rebuildIndexes hands the index definitions of converted tables to the
// engine, which queues or runs their builds; a definition it took is
// removed. A definition the engine cannot build yet (Unsupported) is
// kept for a later run; one it refuses (its column is gone or no longer
// fits) is dropped with a warning, as no later run would build it.
func rebuildIndexes(ctx context.Context, st legacy.Store, opts Options, sum *Summary) error {
	defs, err := legacy.PendingIndexes(ctx, st)
	if err != nil {
		return err
	}
	for _, d := range defs {
		if opts.Indexes == nil {
			sum.IndexesPending++
			continue
		}
		_, err := opts.Indexes.CreateIndex(ctx, d.Table, d.Spec)
		switch code := store.ErrorCode(err); {
		case err == nil:
			sum.IndexesBuilt++
		case code == store.CodeUnsupported:
			sum.IndexesPending++
			opts.Logger.Info("index kept to be built once the engine builds indexes", "table", sqlcatalog.DisplayID(d.Table),
				"index", d.Spec.Name, "reason", err.Error())
			continue
		case code == store.CodeTableColumnNotFound || code == store.CodeInvalidInput || code == store.CodeTableSchemaValidationError:
			opts.Logger.Warn("index definition dropped: its column cannot have it on the converted table", "table", sqlcatalog.DisplayID(d.Table),
				"index", d.Spec.Name, "column", d.Spec.Column, "error", err.Error())
		default:
			if ctx.Err() != nil {
				return ctx.Err()
			}
			sum.IndexesPending++
			opts.Logger.Warn("index not built; the next start tries again", "table", sqlcatalog.DisplayID(d.Table), "index", d.Spec.Name, "error", err.Error())
			continue
		}
		if err := legacy.IndexRebuilt(ctx, st, d); err != nil {
			return err
		}
	}
	return nil
}
