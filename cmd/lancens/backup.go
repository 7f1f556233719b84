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

// backup runs `lancens backup`: a consistent copy of a database, taken
// while a server may be writing to it.
func backup(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("lancens backup", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, `Usage: lancens backup --db FILE --out FILE

Writes a consistent copy of the database --db to the new file --out: every
write the server acknowledged before the copy began, and nothing of any write
after. The server may keep running and writing; the backup only reads the
database (it opens it read-only and does not take the server's lock). Table
files in the warehouse are not part of the database: see the README.

`)
		fs.PrintDefaults()
	}
	db := getenv("LANCENS_DB")
	if db == "" {
		db = "./data/lancens.db"
	}
	fs.StringVar(&db, "db", db, "the database to copy (env LANCENS_DB)")
	out := fs.String("out", "", "the file to write the copy to; it must not exist")
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
	if *out == "" {
		fmt.Fprintln(stderr, "--out is required")
		fs.Usage()
		return errUsage
	}
	if isPostgresURL(db) {
		return fmt.Errorf("lancens backup copies a SQLite database; back up the PostgreSQL catalog %s with PostgreSQL's tools (pg_dump)", displayDB(db))
	}
	start := time.Now()
	size, err := sqlite.Backup(ctx, db, *out)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "backed up %s to %s (%d bytes) in %s\n", db, *out, size, time.Since(start).Round(time.Millisecond))
	return nil
}
