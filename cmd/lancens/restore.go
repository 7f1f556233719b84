package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/lancens/lancens/store/sqlite"
)

// restore runs `lancens restore`: a backup put back in place as the
// database, after checks.
func restore(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("lancens restore", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, `Usage: lancens restore --from FILE --db FILE [--force]

Puts the backup --from (written by lancens backup) in place as the database
--db. The backup is checked first: SQLite's quick_check, and a schema this
lancens knows (a backup from a newer lancens is refused; one from an older
lancens is upgraded when serve opens it). A database that a server has open
is never replaced; an existing database is replaced only with --force. Stop
the server, restore, start it again. Table files in the warehouse are not
part of the database: see the README. A PostgreSQL catalog is restored with
PostgreSQL's tools (pg_restore, psql).

`)
		fs.PrintDefaults()
	}
	db := getenv("LANCENS_DB")
	if db == "" {
		db = "./data/lancens.db"
	}
	fs.StringVar(&db, "db", db, "the database to restore (env LANCENS_DB)")
	from := fs.String("from", "", "the backup to restore (required)")
	force := fs.Bool("force", false, "replace the database if it exists (never one in use)")
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
	if *from == "" {
		fmt.Fprintln(stderr, "--from is required")
		fs.Usage()
		return errUsage
	}
	if isPostgresURL(db) {
		return fmt.Errorf("lancens restore restores a SQLite database; restore the PostgreSQL catalog %s with PostgreSQL's tools: pg_restore for a pg_dump archive (pg_dump -Fc), psql for a plain SQL dump", displayDB(db))
	}
	start := time.Now()
	res, err := sqlite.Restore(ctx, *from, db, sqlite.RestoreOptions{Force: *force})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "restored %s to %s (%d bytes) in %s", *from, db, res.Bytes, time.Since(start).Round(time.Millisecond))
	if res.Pending > 0 {
		fmt.Fprintf(stdout, "; the backup is from an older lancens: serve applies %d schema migration(s) when it opens it", res.Pending)
	}
	fmt.Fprintln(stdout)
	return nil
}
