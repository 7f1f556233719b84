package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/lancens/lancens/server"
	"github.com/lancens/lancens/store/sqlite"
	"github.com/lancens/lancens/warehouse"
)

// serveConfig is the configuration of `lancens serve`, from flags with
// environment variables as defaults.
type serveConfig struct {
	addr        string
	dbPath      string
	warehouse   string
	apiKeys     []string
	logLevel    slog.Level
	logFormat   string
	synchronous string
	cacheMB     int64
}

func parseServeFlags(args []string, getenv func(string) string, stderr io.Writer) (*serveConfig, error) {
	cfg := &serveConfig{}
	fs := flag.NewFlagSet("lancens serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	envOr := func(key, def string) string {
		if v := getenv(key); v != "" {
			return v
		}
		return def
	}
	fs.StringVar(&cfg.addr, "addr", envOr("LANCENS_ADDR", ":2333"), "listen address (env LANCENS_ADDR)")
	fs.StringVar(&cfg.dbPath, "db", envOr("LANCENS_DB", "./data/lancens.db"), "SQLite database file (env LANCENS_DB)")
	fs.StringVar(&cfg.warehouse, "warehouse", envOr("LANCENS_WAREHOUSE", "./data/warehouse"), "root directory for table data written by Lance clients (env LANCENS_WAREHOUSE)")
	fs.StringVar(&cfg.logFormat, "log-format", envOr("LANCENS_LOG_FORMAT", "text"), "log format: text or json (env LANCENS_LOG_FORMAT)")
	fs.StringVar(&cfg.synchronous, "sync", envOr("LANCENS_SYNC", "FULL"), "SQLite synchronous mode: FULL (durable across power loss) or NORMAL (env LANCENS_SYNC)")
	cacheMB, err := strconv.ParseInt(envOr("LANCENS_CACHE_MB", strconv.FormatInt(sqlite.DefaultCacheBytes()>>20, 10)), 10, 64)
	if err != nil {
		return nil, fmt.Errorf("bad LANCENS_CACHE_MB: %w", err)
	}
	fs.Int64Var(&cfg.cacheMB, "cache-mb", cacheMB, "memory for cached row sets, filter columns, vectors, vector indexes and posting lists, in MiB; the default is a quarter of the machine's (or cgroup's) memory (env LANCENS_CACHE_MB)")
	level := envOr("LANCENS_LOG_LEVEL", "info")
	fs.Func("log-level", "log level: debug, info, warn or error (env LANCENS_LOG_LEVEL)", func(v string) error {
		level = v
		return nil
	})
	for _, k := range strings.Split(getenv("LANCENS_API_KEYS"), ",") {
		if k = strings.TrimSpace(k); k != "" {
			cfg.apiKeys = append(cfg.apiKeys, k)
		}
	}
	fs.Func("api-key", "an API key clients must send; repeatable (env LANCENS_API_KEYS, comma-separated); none means open access", func(v string) error {
		if v == "" {
			return errors.New("empty API key")
		}
		cfg.apiKeys = append(cfg.apiKeys, v)
		return nil
	})
	if err := fs.Parse(args); err != nil {
		return nil, errUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "unexpected argument %q\n", fs.Arg(0))
		return nil, errUsage
	}
	if err := cfg.logLevel.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("bad log level %q", level)
	}
	if cfg.logFormat != "text" && cfg.logFormat != "json" {
		return nil, fmt.Errorf("bad log format %q (text or json)", cfg.logFormat)
	}
	cfg.synchronous = strings.ToUpper(cfg.synchronous)
	if cfg.cacheMB < 1 {
		return nil, fmt.Errorf("bad cache size %d MiB (at least 1)", cfg.cacheMB)
	}
	return cfg, nil
}

// serve runs the server until ctx is cancelled, then shuts it down
// gracefully. It prints the address it listens on to stdout.
func serve(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := parseServeFlags(args, getenv, stderr)
	if err != nil {
		return err
	}
	opts := &slog.HandlerOptions{Level: cfg.logLevel}
	var logger *slog.Logger
	if cfg.logFormat == "json" {
		logger = slog.New(slog.NewJSONHandler(stderr, opts))
	} else {
		logger = slog.New(slog.NewTextHandler(stderr, opts))
	}

	if err := os.MkdirAll(filepath.Dir(cfg.dbPath), 0o755); err != nil {
		return fmt.Errorf("create database directory: %w", err)
	}
	db, err := sqlite.Open(ctx, cfg.dbPath, sqlite.Options{Synchronous: cfg.synchronous, CacheBytes: cfg.cacheMB << 20})
	if err != nil {
		return err
	}
	defer db.Close()

	wh, err := warehouse.Open(cfg.warehouse)
	if err != nil {
		return err
	}
	srv, err := server.New(server.Config{Store: db, Warehouse: wh, APIKeys: cfg.apiKeys, Logger: logger})
	if err != nil {
		return err
	}
	defer srv.Close()
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return err
	}
	httpServer := &http.Server{Handler: srv, ReadHeaderTimeout: 30 * time.Second}
	fmt.Fprintf(stdout, "lancens listening on http://%s (database %s, warehouse %s)\n", ln.Addr(), cfg.dbPath, wh.Root())
	logger.Info("listening", slog.String("addr", ln.Addr().String()), slog.Bool("auth", len(cfg.apiKeys) > 0))

	errc := make(chan error, 1)
	go func() { errc <- httpServer.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := httpServer.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}
