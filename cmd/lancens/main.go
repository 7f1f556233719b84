// Command lancens serves the Lance Namespace REST API from one SQLite file.
//
//	lancens serve --addr 127.0.0.1:2333 --db ./data/lancens.db --warehouse ./data/warehouse
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, errUsage) {
			fmt.Fprintln(os.Stderr, "lancens:", err)
		}
		os.Exit(2)
	}
}

var errUsage = errors.New("usage")

const usage = `lancens serves the Lance Namespace REST API.

Usage:
  lancens serve [flags]   start the server (lancens serve -h lists the flags)
  lancens backup --db FILE --out FILE
                          copy a database consistently, also while a server
                          is writing to it (-h lists the flags)
  lancens restore --from FILE --db FILE [--force]
                          put a backup back in place as the database, after
                          checking it (-h lists the flags)
  lancens import --table ID [flags] FILE
                          load a CSV, JSON-lines or Parquet file into a
                          table over the API (-h lists the flags)
  lancens export --table ID [flags] FILE
                          write a table, or a query of it, to a CSV,
                          JSON-lines or Parquet file (-h lists the flags)
  lancens migrate --db FILE [--warehouse DIR]
                          turn the tables an earlier lancens kept in its
                          SQLite file into Lance datasets (-h lists the flags)
  lancens conformance --url URL [flags]
                          check any Lance Namespace REST server against the
                          conformance suite and openapi.yaml (-h lists the flags)
  lancens version         print the version and the revision built from
  lancens help            show this text
`

// run executes the command line args. It returns errUsage after printing
// usage for a bad command line, or the error that stopped the command.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errUsage
	}
	switch args[0] {
	case "serve":
		return serve(ctx, args[1:], getenv, stdout, stderr)
	case "backup":
		return backup(ctx, args[1:], getenv, stdout, stderr)
	case "restore":
		return restore(ctx, args[1:], getenv, stdout, stderr)
	case "import":
		return importData(ctx, args[1:], getenv, stdout, stderr)
	case "export":
		return exportData(ctx, args[1:], getenv, stdout, stderr)
	case "migrate":
		return migrate(ctx, args[1:], getenv, stdout, stderr)
	case "conformance":
		return conformanceKit(ctx, args[1:], getenv, stdout, stderr)
	case "version", "--version", "-version":
		return version(stdout)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprintf(stderr, "unknown command %q\n\n%s", args[0], usage)
	return errUsage
}
