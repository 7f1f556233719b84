package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/lancens/lancens/auth"
	"github.com/lancens/lancens/coord"
	"github.com/lancens/lancens/engine"
	"github.com/lancens/lancens/internal/buildinfo"
	"github.com/lancens/lancens/internal/memcache"
	"github.com/lancens/lancens/internal/sysmem"
	"github.com/lancens/lancens/internal/telemetry"
	"github.com/lancens/lancens/objstore"
	"github.com/lancens/lancens/server"
	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/store/postgres"
	"github.com/lancens/lancens/store/sqlite"
	"github.com/lancens/lancens/store/storetrace"
	"github.com/lancens/lancens/vend"
	"github.com/lancens/lancens/warehouse"
)

// serveConfig is the configuration of `lancens serve`, from flags with
// environment variables as defaults.
type serveConfig struct {
	addr      string
	dbPath    string
	warehouse string
	apiKeys   []string
	// authConfig is the access-control file, if any.
	authConfig     string
	routeDatabases bool
	logLevel       slog.Level
	logFormat      string
	synchronous    string
	// commitDurability is what acknowledged version commits survive.
	commitDurability store.CommitDurability
	cacheMB          int64
	// HTTP timeouts; see the flags.
	readHeaderTimeout, readTimeout, writeTimeout, idleTimeout, queryTimeout time.Duration
	// retainVersionsFor is how long versions of managed tables are kept.
	retainVersionsFor time.Duration
	// Answer bounds; see the flags.
	maxPageSize   int
	maxSearchRows int64
	// Request body bounds; see the flags.
	maxJSONBody, maxArrowBody, maxArrowDecodedBytes, maxArrowRows int64
	// minBodyRate is the least average rate of a request body, in bytes
	// per second (0: none).
	minBodyRate int64
	// maxConnections bounds the connections open at once on --addr.
	maxConnections int
	// Memory bounds; see the flags. memoryLimit 0 leaves the Go runtime's
	// (GOMEMLIMIT, or none).
	decodeBudget, maxFilterBytes, memoryLimit int64

	// metricsAddr, when set, serves /metrics (and the probes) on a
	// listener of its own, without authentication.
	metricsAddr string
	// Per-table metrics; see the flags.
	tableMetricsLimit    int
	tableMetricsInterval time.Duration
	// otlpEndpoint and otlpProtocol say where spans go (tracing is off
	// without them and the OTEL_* variables).
	otlpEndpoint, otlpProtocol string
	// corsOrigins are the origins browsers may call the API from.
	corsOrigins []string
	// allowedHosts are the host names a server without credentials
	// answers requests for, besides addresses and loopback names.
	allowedHosts []string
	// tlsCert and tlsKey are PEM files; both or neither.
	tlsCert, tlsKey string

	// externalRoots are where tables may lie besides the warehouse.
	externalRoots []string
	// storageOptions reach an object-store warehouse (Lance's keys).
	storageOptions map[string]string
	// vending says what storage options clients get; the sts fields
	// configure STS mode.
	vending     vend.Mode
	stsRoleARN  string
	stsDuration time.Duration
	stsEndpoint string

	// config is --config and --print-config, and what the effective
	// configuration is made of.
	config *configFlags
}

// Defaults of the serve flags that bound time.
const (
	defaultReadHeaderTimeout = 10 * time.Second
	defaultReadTimeout       = 5 * time.Minute
	defaultWriteTimeout      = 10 * time.Minute
	defaultIdleTimeout       = 2 * time.Minute
	shutdownGrace            = 30 * time.Second
)

// defaultAddr is where serve listens unless told otherwise: loopback only,
// so that a server started without keys is not open to the network.
const defaultAddr = "127.0.0.1:2333"

func parseServeFlags(args []string, getenv func(string) string, stderr io.Writer) (*serveConfig, error) {
	cfg := &serveConfig{}
	fs := flag.NewFlagSet("lancens serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg.config = addConfigFlags(fs, getenv)
	envOr := func(key, def string) string {
		if v := getenv(key); v != "" {
			return v
		}
		return def
	}
	fs.StringVar(&cfg.addr, "addr", envOr("LANCENS_ADDR", defaultAddr), "listen address: host:port; the default listens on loopback only, :2333 on every interface (env LANCENS_ADDR)")
	fs.StringVar(&cfg.dbPath, "db", envOr("LANCENS_DB", "./data/lancens.db"),
		"SQLite database file, or the postgres:// (postgresql://) URL of a PostgreSQL catalog that several lancens replicas share (env LANCENS_DB)")
	fs.StringVar(&cfg.warehouse, "warehouse", envOr("LANCENS_WAREHOUSE", "./data/warehouse"), "where Lance clients write table data: a directory, or an object-store prefix such as s3://bucket/prefix (env LANCENS_WAREHOUSE)")
	fs.StringVar(&cfg.logFormat, "log-format", envOr("LANCENS_LOG_FORMAT", "text"), "log format: text or json (env LANCENS_LOG_FORMAT)")
	fs.StringVar(&cfg.authConfig, "auth-config", getenv("LANCENS_AUTH_CONFIG"), "access-control file: API keys with roles and namespace scopes, JWT bearer tokens (env LANCENS_AUTH_CONFIG)")
	routeDBs, err := parseBoolEnv(getenv("LANCENS_ROUTE_DATABASES"))
	if err != nil {
		return nil, fmt.Errorf("bad LANCENS_ROUTE_DATABASES: %w", err)
	}
	fs.BoolVar(&cfg.routeDatabases, "route-databases", routeDBs, "serve a LanceDB remote-mode request for db://NAME (x-lancedb-database: NAME) inside top-level namespace NAME (env LANCENS_ROUTE_DATABASES)")
	fs.StringVar(&cfg.synchronous, "sync", envOr("LANCENS_SYNC", "FULL"), "SQLite synchronous mode: FULL (durable across power loss) or NORMAL (env LANCENS_SYNC)")
	durability := envOr("LANCENS_COMMIT_DURABILITY", store.DurabilityFull.String())
	fs.StringVar(&durability, "commit-durability", durability, "what an acknowledged namespace-mode commit (version/create, batch commit) survives: "+
		"full (its manifest and record are synced to disk: a power loss) or process (nothing is synced per commit: a crash of lancens, not of the machine, as Lance's directory namespace) (env LANCENS_COMMIT_DURABILITY)")
	cacheMB, err := strconv.ParseInt(envOr("LANCENS_CACHE_MB", strconv.FormatInt(defaultCacheBytes()>>20, 10)), 10, 64)
	if err != nil {
		return nil, fmt.Errorf("bad LANCENS_CACHE_MB: %w", err)
	}
	fs.Int64Var(&cfg.cacheMB, "cache-mb", cacheMB, "memory for the decoded columns, data files, manifests and indexes of tables kept for reads, in MiB; the default is a quarter of the machine's (or cgroup's) memory (env LANCENS_CACHE_MB)")
	var envErr error
	duration := func(p *time.Duration, name, env string, def time.Duration, usage string) {
		if s := getenv(env); s != "" {
			d, err := time.ParseDuration(s)
			if err != nil {
				envErr = errors.Join(envErr, fmt.Errorf("bad %s %q: want a duration such as 30s or 5m", env, s))
			}
			def = d
		}
		fs.DurationVar(p, name, def, usage+" (env "+env+")")
	}
	duration(&cfg.readHeaderTimeout, "read-header-timeout", "LANCENS_READ_HEADER_TIMEOUT", defaultReadHeaderTimeout,
		"time a client has to send the headers of a request")
	duration(&cfg.readTimeout, "read-timeout", "LANCENS_READ_TIMEOUT", defaultReadTimeout,
		"time a client has to send a whole request, body included (large Arrow uploads); 0: no limit")
	duration(&cfg.writeTimeout, "write-timeout", "LANCENS_WRITE_TIMEOUT", defaultWriteTimeout,
		"time from the end of a request's headers to the end of its answer; 0: no limit")
	duration(&cfg.idleTimeout, "idle-timeout", "LANCENS_IDLE_TIMEOUT", defaultIdleTimeout,
		"time an idle keep-alive connection stays open")
	duration(&cfg.queryTimeout, "query-timeout", "LANCENS_QUERY_TIMEOUT", server.DefaultQueryTimeout,
		"time a query, count_rows, explain_plan or analyze_plan may run before it answers 503 (code 17); 0: no limit")
	duration(&cfg.retainVersionsFor, "retain-versions-for", "LANCENS_RETAIN_VERSIONS_FOR", store.DefaultRetainVersionsFor,
		"how long versions of managed tables stay readable (time travel); older ones are removed in the background, except the latest, tagged versions and versions branches fork from; 0: keep only those")
	maxPage, err := strconv.Atoi(envOr("LANCENS_MAX_PAGE_SIZE", strconv.Itoa(store.MaxPageSize)))
	if err != nil {
		return nil, fmt.Errorf("bad LANCENS_MAX_PAGE_SIZE: %w", err)
	}
	fs.IntVar(&cfg.maxPageSize, "max-page-size", maxPage, fmt.Sprintf("largest limit a listing accepts, at most %d (env LANCENS_MAX_PAGE_SIZE)", store.MaxPageSize))
	maxRows, err := strconv.ParseInt(envOr("LANCENS_MAX_SEARCH_ROWS", strconv.Itoa(server.DefaultMaxSearchRows)), 10, 64)
	if err != nil {
		return nil, fmt.Errorf("bad LANCENS_MAX_SEARCH_ROWS: %w", err)
	}
	fs.Int64Var(&cfg.maxSearchRows, "max-search-rows", maxRows, "most rows one vector or full-text search may answer: k (at most the table's rows) times the query vectors (env LANCENS_MAX_SEARCH_ROWS)")
	level := envOr("LANCENS_LOG_LEVEL", "info")
	fs.StringVar(&level, "log-level", level, "log level: debug, info, warn or error (env LANCENS_LOG_LEVEL)")
	for _, k := range strings.Split(getenv("LANCENS_API_KEYS"), ",") {
		if k = strings.TrimSpace(k); k != "" {
			cfg.apiKeys = append(cfg.apiKeys, k)
		}
	}
	for _, r := range strings.Split(getenv("LANCENS_EXTERNAL_ROOTS"), ",") {
		if r = strings.TrimSpace(r); r != "" {
			cfg.externalRoots = append(cfg.externalRoots, r)
		}
	}
	fs.Func("external-root", "a directory (or object-store prefix such as s3://bucket/prefix) outside the warehouse where tables may be registered or declared; repeatable (env LANCENS_EXTERNAL_ROOTS, comma-separated)", func(v string) error {
		if v == "" {
			return errors.New("empty external root")
		}
		cfg.externalRoots = append(cfg.externalRoots, v)
		return nil
	})
	cfg.storageOptions = map[string]string{}
	storageOption := func(kv string) error {
		k, v, ok := strings.Cut(kv, "=")
		if k = strings.TrimSpace(k); !ok || k == "" {
			return fmt.Errorf("storage option %q: want KEY=VALUE", kv)
		}
		if err := objstore.CheckKey(k); err != nil {
			return err
		}
		cfg.storageOptions[k] = v
		return nil
	}
	for _, kv := range strings.Split(getenv("LANCENS_STORAGE_OPTIONS"), ",") {
		if kv = strings.TrimSpace(kv); kv != "" {
			if err := storageOption(kv); err != nil {
				envErr = errors.Join(envErr, fmt.Errorf("bad LANCENS_STORAGE_OPTIONS: %w", err))
			}
		}
	}
	fs.Func("storage-option", "a storage option KEY=VALUE for an object-store warehouse, with Lance's keys (aws_endpoint, aws_region, aws_access_key_id, aws_secret_access_key, aws_session_token, allow_http, aws_virtual_hosted_style_request); repeatable; put credentials in --storage-option-file or the environment, not on the command line (env LANCENS_STORAGE_OPTIONS, comma-separated)", storageOption)
	envErr = errors.Join(envErr, lineFileFlag(fs, "storage-option-file", "LANCENS_STORAGE_OPTION_FILE",
		"a `FILE` of storage options, KEY=VALUE one a line (# starts a comment line), read at start; repeatable", getenv, storageOption))
	vending := envOr("LANCENS_VEND_CREDENTIALS", string(vend.None))
	fs.StringVar(&vending, "vend-credentials", vending, "storage options handed to clients of tables on object storage: none (endpoint and region only; clients bring credentials), static (the storage options, credentials included) or sts (temporary credentials from STS AssumeRole scoped to the table) (env LANCENS_VEND_CREDENTIALS)")
	fs.StringVar(&cfg.stsRoleARN, "sts-role-arn", getenv("LANCENS_STS_ROLE_ARN"), "role that --vend-credentials sts assumes (env LANCENS_STS_ROLE_ARN)")
	duration(&cfg.stsDuration, "sts-duration", "LANCENS_STS_DURATION", vend.DefaultDuration, "lifetime of credentials vended by STS, 15m to 12h")
	fs.StringVar(&cfg.stsEndpoint, "sts-endpoint", getenv("LANCENS_STS_ENDPOINT"), "STS endpoint URL; default AWS's for the region (env LANCENS_STS_ENDPOINT)")
	apiKey := func(v string) error {
		if v == "" {
			return errors.New("empty API key")
		}
		cfg.apiKeys = append(cfg.apiKeys, v)
		return nil
	}
	fs.Func("api-key", "an API key clients must send; repeatable; none means open access; prefer --api-key-file or the environment to the command line (env LANCENS_API_KEYS, comma-separated)", apiKey)
	envErr = errors.Join(envErr, lineFileFlag(fs, "api-key-file", "LANCENS_API_KEY_FILE",
		"a `FILE` of API keys clients may send, one a line (# starts a comment line), read at start; repeatable", getenv, apiKey))
	size := func(p *int64, name, env string, def int64, usage string) {
		*p = def
		if s := getenv(env); s != "" {
			if err := (byteSize{p}).Set(s); err != nil {
				envErr = errors.Join(envErr, fmt.Errorf("bad %s: %w", env, err))
			}
		}
		fs.Var(byteSize{p}, name, usage+" (env "+env+")")
	}
	size(&cfg.maxJSONBody, "max-json-body", "LANCENS_MAX_JSON_BODY", server.DefaultMaxJSONBody,
		"largest JSON request body; a larger one answers 413 (code 13); bytes, or with KiB, MiB, GiB")
	size(&cfg.maxArrowBody, "max-arrow-body", "LANCENS_MAX_ARROW_BODY", server.DefaultMaxArrowBody,
		"largest Arrow upload (create, insert, merge_insert) as sent; a larger one answers 413 (code 13)")
	size(&cfg.maxArrowDecodedBytes, "max-arrow-decoded-bytes", "LANCENS_MAX_ARROW_DECODED_BYTES", server.DefaultMaxArrowDecodedBytes,
		"most memory one Arrow upload may decode to, after LZ4/ZSTD decompression")
	maxArrowRows, err := strconv.ParseInt(envOr("LANCENS_MAX_ARROW_ROWS", strconv.Itoa(server.DefaultMaxArrowRows)), 10, 64)
	if err != nil {
		return nil, fmt.Errorf("bad LANCENS_MAX_ARROW_ROWS: %w", err)
	}
	fs.Int64Var(&cfg.maxArrowRows, "max-arrow-rows", maxArrowRows, "most rows one Arrow upload may hold (env LANCENS_MAX_ARROW_ROWS)")
	// A rate of 0 turns the minimum off; any other is a size.
	rate := func(v string) (int64, error) {
		if strings.TrimSpace(v) == "0" {
			return 0, nil
		}
		return parseBytes(v)
	}
	cfg.minBodyRate = server.DefaultMinBodyRate
	if v := getenv("LANCENS_MIN_BODY_RATE"); v != "" {
		if cfg.minBodyRate, err = rate(v); err != nil {
			return nil, fmt.Errorf("bad LANCENS_MIN_BODY_RATE: %w", err)
		}
	}
	fs.Func("min-body-rate", fmt.Sprintf("least average rate, in bytes per second, a request body must arrive at after its first %s; a slower client is cut off (code 13). Default %d (32KiB); 0: no minimum (env LANCENS_MIN_BODY_RATE)",
		server.BodyRateGrace, server.DefaultMinBodyRate), func(v string) (err error) {
		cfg.minBodyRate, err = rate(v)
		return err
	})
	maxConns, err := strconv.Atoi(envOr("LANCENS_MAX_CONNECTIONS", strconv.Itoa(defaultMaxConnections)))
	if err != nil {
		return nil, fmt.Errorf("bad LANCENS_MAX_CONNECTIONS: %w", err)
	}
	fs.IntVar(&cfg.maxConnections, "max-connections", maxConns, "most client connections open at once on --addr; more wait to be accepted (env LANCENS_MAX_CONNECTIONS)")
	size(&cfg.decodeBudget, "decode-budget", "LANCENS_DECODE_BUDGET", defaultDecodeBudget(),
		"memory all requests together may hold decoding what they sent: Arrow batches being written, large JSON bodies, SQL being parsed; a request that finds no room within 2s answers 503 (code 17) with Retry-After, one that needs more than all of it 413 (code 13); the default is an eighth of the machine's (or cgroup's) memory, at least 64MiB")
	size(&cfg.maxFilterBytes, "max-filter-bytes", "LANCENS_MAX_FILTER_BYTES", server.DefaultMaxFilterBytes,
		"longest SQL text a request may send (a filter, predicate, column expression, order_by or column name); a longer one answers 400 (code 13)")
	memoryLimit := getenv("LANCENS_MEMORY_LIMIT")
	fs.StringVar(&memoryLimit, "memory-limit", memoryLimit,
		"soft limit of the Go heap (runtime/debug.SetMemoryLimit): the collector works harder as the heap nears it, and memory goes back to the operating system; a size, or none; the default is GOMEMLIMIT when set, else three quarters of the machine's (or cgroup's) memory (env LANCENS_MEMORY_LIMIT)")
	fs.StringVar(&cfg.metricsAddr, "metrics-addr", envOr("LANCENS_METRICS_ADDR", ""),
		"serve /metrics, /healthz and /readyz on this address too, without authentication, and not /metrics on --addr (env LANCENS_METRICS_ADDR)")
	tableMetricsLimit, err := strconv.Atoi(envOr("LANCENS_TABLE_METRICS_LIMIT", strconv.Itoa(server.DefaultTableMetricsLimit)))
	if err != nil {
		return nil, fmt.Errorf("bad LANCENS_TABLE_METRICS_LIMIT: %w", err)
	}
	fs.IntVar(&cfg.tableMetricsLimit, "table-metrics-limit", tableMetricsLimit,
		"how many tables get per-table metrics of their own (the first, by identifier); the rest are summed into table=\"(other)\" (env LANCENS_TABLE_METRICS_LIMIT)")
	duration(&cfg.tableMetricsInterval, "table-metrics-interval", "LANCENS_TABLE_METRICS_INTERVAL", server.DefaultTableMetricsInterval,
		"how often per-table metrics (rows, bytes, versions, unindexed rows) are gathered, in the background; 0: never")
	fs.StringVar(&cfg.otlpEndpoint, "otlp-endpoint", "",
		"send traces over OTLP to this collector URL, such as http://127.0.0.1:4318; without it tracing follows the standard OTEL_* variables, and is off when they name no endpoint (env OTEL_EXPORTER_OTLP_ENDPOINT)")
	fs.StringVar(&cfg.otlpProtocol, "otlp-protocol", "",
		"OTLP protocol: http/protobuf or grpc; default: OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else http/protobuf (env OTEL_EXPORTER_OTLP_PROTOCOL)")
	for _, o := range strings.Split(getenv("LANCENS_CORS_ORIGINS"), ",") {
		if o = strings.TrimSpace(o); o != "" {
			cfg.corsOrigins = append(cfg.corsOrigins, o)
		}
	}
	fs.Func("cors-origin", "an origin (scheme://host[:port], or * for any) browsers may call the API from; repeatable (env LANCENS_CORS_ORIGINS, comma-separated)", func(v string) error {
		if v == "" {
			return errors.New("empty origin")
		}
		cfg.corsOrigins = append(cfg.corsOrigins, v)
		return nil
	})
	for _, h := range strings.Split(getenv("LANCENS_ALLOWED_HOSTS"), ",") {
		if h = strings.TrimSpace(h); h != "" {
			cfg.allowedHosts = append(cfg.allowedHosts, h)
		}
	}
	fs.Func("allowed-host", "a host name clients reach this server by, for a server without credentials: it answers only requests for IP addresses, localhost and these names, which defeats DNS rebinding; repeatable (env LANCENS_ALLOWED_HOSTS, comma-separated)", func(v string) error {
		cfg.allowedHosts = append(cfg.allowedHosts, v)
		return nil
	})
	fs.StringVar(&cfg.tlsCert, "tls-cert", envOr("LANCENS_TLS_CERT", ""), "PEM certificate (chain) file: serve HTTPS; read again on SIGHUP (env LANCENS_TLS_CERT)")
	fs.StringVar(&cfg.tlsKey, "tls-key", envOr("LANCENS_TLS_KEY", ""), "PEM private key file of --tls-cert (env LANCENS_TLS_KEY)")
	if envErr != nil {
		return nil, envErr
	}
	if err := cfg.config.parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "unexpected argument %q\n", fs.Arg(0))
		return nil, errUsage
	}
	if cfg.vending, err = vend.ParseMode(vending); err != nil {
		return nil, fmt.Errorf("bad --vend-credentials: %w", err)
	}
	if err := cfg.logLevel.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("bad log level %q", level)
	}
	if cfg.logFormat != "text" && cfg.logFormat != "json" {
		return nil, fmt.Errorf("bad log format %q (text or json)", cfg.logFormat)
	}
	cfg.synchronous = strings.ToUpper(cfg.synchronous)
	if cfg.commitDurability, err = store.ParseCommitDurability(durability); err != nil {
		return nil, fmt.Errorf("bad --commit-durability: %w", err)
	}
	if cfg.cacheMB < 1 {
		return nil, fmt.Errorf("bad cache size %d MiB (at least 1)", cfg.cacheMB)
	}
	for name, d := range map[string]time.Duration{"read-header-timeout": cfg.readHeaderTimeout, "read-timeout": cfg.readTimeout,
		"write-timeout": cfg.writeTimeout, "idle-timeout": cfg.idleTimeout, "query-timeout": cfg.queryTimeout,
		"retain-versions-for": cfg.retainVersionsFor} {
		if d < 0 {
			return nil, fmt.Errorf("bad --%s %s (not negative)", name, d)
		}
	}
	if cfg.readHeaderTimeout == 0 || cfg.idleTimeout == 0 {
		return nil, errors.New("--read-header-timeout and --idle-timeout must be positive: without them a client can hold a connection forever")
	}
	if cfg.maxPageSize < 1 || cfg.maxPageSize > store.MaxPageSize {
		return nil, fmt.Errorf("bad --max-page-size %d (1 to %d)", cfg.maxPageSize, store.MaxPageSize)
	}
	if cfg.maxSearchRows < 1 {
		return nil, fmt.Errorf("bad --max-search-rows %d (at least 1)", cfg.maxSearchRows)
	}
	if cfg.otlpEndpoint != "" {
		if err := telemetry.CheckEndpoint(cfg.otlpEndpoint); err != nil {
			return nil, err
		}
	}
	if cfg.tableMetricsLimit < 0 || cfg.tableMetricsInterval < 0 {
		return nil, errors.New("--table-metrics-limit and --table-metrics-interval must not be negative")
	}
	if cfg.maxArrowRows < 1 {
		return nil, fmt.Errorf("bad --max-arrow-rows %d (at least 1)", cfg.maxArrowRows)
	}
	if cfg.maxConnections < 1 {
		return nil, fmt.Errorf("bad --max-connections %d (at least 1)", cfg.maxConnections)
	}
	if cfg.maxFilterBytes > math.MaxInt32 {
		return nil, fmt.Errorf("bad --max-filter-bytes %d (at most 2GiB)", cfg.maxFilterBytes)
	}
	if cfg.memoryLimit, err = parseMemoryLimit(memoryLimit, getenv("GOMEMLIMIT")); err != nil {
		return nil, err
	}
	if (cfg.tlsCert == "") != (cfg.tlsKey == "") {
		return nil, errors.New("--tls-cert and --tls-key go together: give both, or neither")
	}
	for _, o := range cfg.corsOrigins {
		if err := checkOrigin(o); err != nil {
			return nil, err
		}
	}
	for _, h := range cfg.allowedHosts {
		if err := checkHostName(h); err != nil {
			return nil, err
		}
	}
	if err := checkAddr("--addr", cfg.addr); err != nil {
		return nil, err
	}
	if cfg.metricsAddr != "" {
		if err := checkAddr("--metrics-addr", cfg.metricsAddr); err != nil {
			return nil, err
		}
	}
	return cfg, nil
}

// defaultDecodeBudget is the default of --decode-budget: an eighth of the
// memory available to the process, in whole MiB, at least 64 MiB.
func defaultDecodeBudget() int64 {
	return max(64<<20, sysmem.Available()/8&^(1<<20-1))
}

// parseMemoryLimit reads --memory-limit: a size, "none", or empty for the
// default, which is GOMEMLIMIT when that is set (the runtime has applied
// it already), else three quarters of the memory available to the
// process. It returns the limit to set (math.MaxInt64 for none), 0 to leave
// the runtime's, or an error naming the flag.
func parseMemoryLimit(flagValue, gomemlimit string) (int64, error) {
	switch {
	case flagValue == "" && gomemlimit != "":
		return 0, nil
	case flagValue == "":
		return sysmem.Available() / 4 * 3, nil
	case strings.EqualFold(flagValue, "none"):
		return math.MaxInt64, nil
	}
	n, err := parseBytes(flagValue)
	if err != nil {
		return 0, fmt.Errorf("bad --memory-limit: %w, or none", err)
	}
	return n, nil
}

// parseBoolEnv reads a boolean environment variable; empty is false.
func parseBoolEnv(v string) (bool, error) {
	if v == "" {
		return false, nil
	}
	return strconv.ParseBool(v)
}

// checkAddr checks a listen address of the form host:port, where host may
// be empty (every interface) and port is a number from 0 to 65535. It
// returns an error naming the flag otherwise.
func checkAddr(flagName, addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err == nil {
		var n uint64
		if n, err = strconv.ParseUint(port, 10, 16); err == nil && port != strconv.FormatUint(n, 10) {
			err = errors.New("the port is not a plain number")
		}
	}
	if err != nil {
		return fmt.Errorf("bad %s %q: want host:port, such as :2333 or 127.0.0.1:2333 (%v)", flagName, addr, err)
	}
	return nil
}

// checkOrigin checks a CORS origin: "*", or scheme://host[:port] with no
// path.
func checkOrigin(o string) error {
	if o == "*" {
		return nil
	}
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return fmt.Errorf("bad --cors-origin %q: want * or scheme://host[:port], such as https://app.example.com", o)
	}
	return nil
}

// checkHostName checks an --allowed-host: a host name alone, without a
// scheme, port or path.
func checkHostName(h string) error {
	if h == "" || strings.ContainsAny(h, ":/ @[]") {
		return fmt.Errorf("bad --allowed-host %q: want a host name alone, such as lancens.internal", h)
	}
	return nil
}

// bodyRate returns the Config's MinBodyRate for --min-body-rate, whose 0
// turns the minimum off.
func bodyRate(flag int64) int64 {
	if flag == 0 {
		return -1
	}
	return flag
}

// listenHosts returns the --allowed-host names plus the host of the listen
// address when it is a name (an address is answered anyway).
func listenHosts(cfg *serveConfig) []string {
	hosts := append([]string(nil), cfg.allowedHosts...)
	if h, _, err := net.SplitHostPort(cfg.addr); err == nil && h != "" && net.ParseIP(h) == nil {
		hosts = append(hosts, h)
	}
	return hosts
}

// serve runs the server until ctx is cancelled, then shuts it down
// gracefully. It prints the address it listens on to stdout. The listen
// addresses, the TLS files and the access-control file are checked before
// the database is opened (or created).
func serve(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := parseServeFlags(args, getenv, stderr)
	if err != nil {
		return err
	}
	if cfg.config.print {
		return cfg.config.printConfig(stdout)
	}
	opts := &slog.HandlerOptions{Level: cfg.logLevel}
	var logger *slog.Logger
	if cfg.logFormat == "json" {
		logger = slog.New(slog.NewJSONHandler(stderr, opts))
	} else {
		logger = slog.New(slog.NewTextHandler(stderr, opts))
	}

	if cfg.memoryLimit > 0 {
		debug.SetMemoryLimit(cfg.memoryLimit)
	}

	var certs *certReloader
	if cfg.tlsCert != "" {
		if certs, err = newCertReloader(cfg.tlsCert, cfg.tlsKey); err != nil {
			return err
		}
	}
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return fmt.Errorf("listen on --addr %s: %w", cfg.addr, err)
	}
	ln = limitConnections(ln, cfg.maxConnections)
	defer ln.Close()
	var metricsLn net.Listener
	if cfg.metricsAddr != "" {
		if metricsLn, err = net.Listen("tcp", cfg.metricsAddr); err != nil {
			return fmt.Errorf("listen on --metrics-addr %s: %w", cfg.metricsAddr, err)
		}
		defer metricsLn.Close()
	}

	// The access-control file is read before anything is created: a
	// mistake in it stops serve with nothing written.
	var authCfg *auth.Config
	if cfg.authConfig != "" {
		if authCfg, err = auth.LoadConfig(cfg.authConfig); err != nil {
			return err
		}
	}

	bi := buildinfo.Read()
	stopTracing, tracing, err := telemetry.Start(ctx, telemetry.Config{Endpoint: cfg.otlpEndpoint, Protocol: cfg.otlpProtocol,
		Version: bi.Version, Getenv: getenv})
	if err != nil {
		return err
	}
	defer func() {
		// Last, after the servers and their jobs: the spans still
		// buffered are sent.
		flushCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := stopTracing(flushCtx); err != nil {
			logger.Warn("tracing: spans not sent at shutdown", slog.Any("error", err))
		}
	}()

	jobsQueued := coord.NewSignal()
	db, closeDB, err := openStore(ctx, cfg, jobsQueued, logger)
	if err != nil {
		return err
	}
	defer closeDB()

	if !strings.Contains(cfg.warehouse, "://") {
		if err := makeDir(cfg.warehouse, "warehouse", "--warehouse"); err != nil {
			return err
		}
	}
	wh, err := warehouse.OpenStore(ctx, cfg.warehouse, cfg.storageOptions, cfg.externalRoots...)
	if err != nil {
		return fmt.Errorf("--warehouse: %w", err)
	}
	wh.SetCommitDurability(cfg.commitDurability)
	if cfg.commitDurability == store.DurabilityProcess && isPostgresURL(cfg.dbPath) && !wh.OnObjectStore(wh.Root()) {
		logger.Warn("--commit-durability process on PostgreSQL leaves version records as durable as PostgreSQL makes them (synchronous_commit) " +
			"and only the manifests on local disk unsynced: after a power loss of this machine a record can outlive its manifest")
	}
	if cfg.vending != vend.None && !wh.OnObjectStore(wh.Root()) {
		return fmt.Errorf("--vend-credentials %s needs a warehouse on object storage (--warehouse s3://bucket/prefix)", cfg.vending)
	}
	vendor, err := vend.New(ctx, vend.Config{Mode: cfg.vending, Options: cfg.storageOptions,
		RoleARN: cfg.stsRoleARN, Duration: cfg.stsDuration, STSEndpoint: cfg.stsEndpoint})
	if err != nil {
		return err
	}
	queryTimeout := cfg.queryTimeout
	if queryTimeout == 0 {
		queryTimeout = -1 // the flag's 0 is no limit; the Config's is the default
	}
	if authCfg != nil {
		if cfg.vending == vend.Static {
			logger.Warn("--vend-credentials static hands every principal allowed to describe a table the configured storage credentials, " +
				"whatever its role and scopes: use --vend-credentials sts to give each principal credentials limited to its tables and access")
		}
	}
	retain := cfg.retainVersionsFor
	if retain == 0 {
		retain = -1 // the flag's 0 keeps nothing extra; the Config's is the default
	}
	// With tracing, the committer's store calls are spans of their own, as
	// the server's are (st is wrapped below, once the engine is on it).
	var committed store.Backend = db
	if tracing {
		committed = storetrace.Wrap(db)
	}
	commits := coord.NewCommitter(committed, wh, logger)
	e, err := engine.New(engine.Options{Catalog: db, Warehouse: wh, Commits: commits, Cache: memcache.New(cfg.cacheMB << 20), Logger: logger})
	if err != nil {
		return err
	}
	var st store.ManagedBackend = engine.WithBackend(db, e)
	if err := convertAtStart(ctx, cfg, db, e, wh, logger); err != nil {
		return err
	}
	if tracing {
		st = storetrace.Wrap(st).(store.ManagedBackend) // a wrapped ManagedBackend stays one
	}
	// The background services (commit coordinator, job runner, retention
	// of old versions) start before the server and stop after it: the
	// deferred Stop runs once the HTTP servers below have shut down.
	services := coord.NewServices(coord.ServicesConfig{Store: st, Warehouse: wh, Committer: commits, JobsQueued: jobsQueued, Logger: logger,
		RetainVersionsFor: retain})
	srv, err := server.New(server.Config{Store: st, Warehouse: wh, Vendor: vendor, Services: services, APIKeys: cfg.apiKeys, Auth: authCfg,
		RouteDatabases: cfg.routeDatabases, Logger: logger, MaxPageSize: cfg.maxPageSize, MaxSearchRows: cfg.maxSearchRows, QueryTimeout: queryTimeout,
		MaxJSONBody: cfg.maxJSONBody, MaxArrowBody: cfg.maxArrowBody, MaxArrowDecodedBytes: cfg.maxArrowDecodedBytes,
		MaxArrowRows: cfg.maxArrowRows, DecodeBudget: cfg.decodeBudget, MaxFilterBytes: int(cfg.maxFilterBytes),
		NoMetricsRoute: metricsLn != nil, CORSOrigins: cfg.corsOrigins,
		AllowedHosts: listenHosts(cfg), MinBodyRate: bodyRate(cfg.minBodyRate), TableMetricsLimit: orNegative(cfg.tableMetricsLimit), TableMetricsInterval: orNegative(cfg.tableMetricsInterval)})
	if err != nil {
		return err
	}
	services.Start()
	defer services.Stop()
	defer srv.Close()
	httpServer := &http.Server{Handler: srv, ReadHeaderTimeout: cfg.readHeaderTimeout, ReadTimeout: cfg.readTimeout,
		WriteTimeout: cfg.writeTimeout, IdleTimeout: cfg.idleTimeout, ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)}
	// A shutdown closes idle connections at once and cuts off bodies still
	// arriving; requests being served get shutdownGrace to finish.
	httpServer.RegisterOnShutdown(srv.StopReading)
	scheme := "http"
	if certs != nil {
		scheme = "https"
		httpServer.TLSConfig = certs.config()
		stopReloads := reloadOnHangup(certs, logger)
		defer stopReloads()
	}
	servers := []*http.Server{httpServer}
	listeners := []net.Listener{ln}
	if metricsLn != nil {
		mux := http.NewServeMux()
		mux.Handle(server.MetricsPath, srv.MetricsHandler())
		mux.Handle(server.HealthPath, srv.ProbeHandler())
		mux.Handle(server.ReadyPath, srv.ProbeHandler())
		servers = append(servers, &http.Server{Handler: mux, ReadHeaderTimeout: cfg.readHeaderTimeout, ReadTimeout: time.Minute,
			WriteTimeout: time.Minute, IdleTimeout: cfg.idleTimeout})
		listeners = append(listeners, metricsLn)
	}

	attrs := []any{slog.String("addr", ln.Addr().String()), slog.Bool("tls", certs != nil), slog.Bool("auth", srv.AccessControlled()),
		slog.Bool("tracing", tracing),
		slog.Bool("route_databases", cfg.routeDatabases), slog.String("version", bi.Version), slog.String("revision", bi.Revision),
		slog.Int64("decode_budget", cfg.decodeBudget), slog.Int64("memory_limit", debug.SetMemoryLimit(-1)),
		slog.String("commit_durability", cfg.commitDurability.String())}
	if metricsLn != nil {
		attrs = append(attrs, slog.String("metrics_addr", metricsLn.Addr().String()))
	}
	logger.Info("listening", attrs...)
	if !srv.AccessControlled() && !isLoopback(ln.Addr()) {
		logger.Warn("serving without credentials on an address other machines can reach: anyone who can connect may read and change every table. " +
			"Set keys with --api-key-file FILE, LANCENS_API_KEYS=key1,key2 or --auth-config FILE, or listen on loopback only with --addr 127.0.0.1:2333")
	}
	fmt.Fprintf(stdout, "lancens listening on %s://%s (database %s, warehouse %s)\n", scheme, ln.Addr(), displayDB(cfg.dbPath), wh.Root())

	errc := make(chan error, len(servers))
	for i, hs := range servers {
		go func() {
			if hs.TLSConfig != nil {
				errc <- hs.ServeTLS(listeners[i], "", "") // the certificate comes from TLSConfig
			} else {
				errc <- hs.Serve(listeners[i])
			}
		}()
	}
	select {
	case err := <-errc:
		for _, hs := range servers {
			hs.Close()
		}
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	var errs []error
	for _, hs := range servers {
		if err := hs.Shutdown(shutdownCtx); err != nil {
			hs.Close()
			errs = append(errs, fmt.Errorf("shutdown: %w", err))
		}
	}
	return errors.Join(errs...)
}

// defaultCacheBytes is the read cache's budget unless --cache-mb sets
// one: a quarter of the memory available to the process (sysmem.Available).
func defaultCacheBytes() int64 { return sysmem.Available() / 4 }

// orNegative maps a flag's 0 (none) to -1, what server.Config says for
// none (its 0 is the default).
func orNegative[T int | time.Duration](v T) T {
	if v == 0 {
		return -1
	}
	return v
}

// isLoopback reports whether addr is a loopback address: one only this
// machine can connect to.
func isLoopback(addr net.Addr) bool {
	tcp, ok := addr.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}

// makeDir creates the directory dir (what names what it is for, flagName
// the flag that sets it) and checks that lancens may write in it. It
// returns ServiceUnavailable (17) in plain words when it cannot.
func makeDir(dir, what, flagName string) error {
	err := os.MkdirAll(dir, 0o755)
	if err == nil {
		var f *os.File
		if f, err = os.CreateTemp(dir, ".lancens-write-check-*"); err == nil {
			f.Close()
			err = os.Remove(f.Name())
		}
	}
	if err == nil {
		return nil
	}
	reason := err.Error()
	switch {
	case errors.Is(err, fs.ErrPermission):
		reason = "permission denied"
	case errors.Is(err, syscall.EROFS):
		reason = "the file system is read-only"
	case errors.Is(err, syscall.ENOSPC):
		reason = "the disk is full"
	}
	return &store.Error{Code: store.CodeServiceUnavailable, Cause: err, Message: fmt.Sprintf(
		"cannot write to the %s directory %s: %s. Run lancens as a user who may write there, or choose another directory with %s",
		what, dir, reason, flagName)}
}

// reloadOnHangup reads the TLS pair of certs again each time the process
// gets SIGHUP, logging the outcome; a pair that fails to load leaves the
// previous one in use. It returns the function that stops it.
func reloadOnHangup(certs *certReloader, logger *slog.Logger) func() {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case <-hup:
				if expires, err := certs.reload(); err != nil {
					logger.Error("reload TLS certificate: keeping the previous one", slog.Any("error", err))
				} else {
					logger.Info("reloaded TLS certificate", slog.String("cert", certs.certFile), slog.Time("expires", expires))
				}
			}
		}
	}()
	return func() {
		signal.Stop(hup)
		close(done)
	}
}

// convertAtStart converts the managed tables an earlier lancens kept in
// the SQLite store db into Lance datasets, before the server serves, their
// indexes built by e; a PostgreSQL catalog never held any. A table that
// does not convert is logged and stays as it was, and the engine answers
// InvalidTableState (19) for it; the server starts all the same. It
// returns the error that stopped the conversion before it could try every
// table (a database or warehouse failure, a signal).
func convertAtStart(ctx context.Context, cfg *serveConfig, db store.Backend, e *engine.Engine, wh *warehouse.Warehouse, logger *slog.Logger) error {
	sq, ok := db.(*sqlite.DB)
	if !ok {
		return nil
	}
	if _, err := convertManaged(ctx, sq, wh, e, logger); err != nil {
		return fmt.Errorf("converting the managed tables of %s into Lance datasets: %w", cfg.dbPath, err)
	}
	return nil
}

// isPostgresURL reports whether --db names a PostgreSQL database rather
// than a SQLite file.
func isPostgresURL(db string) bool {
	return strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://")
}

// displayDB returns --db for messages, with a URL's password hidden.
func displayDB(db string) string {
	if !isPostgresURL(db) {
		return db
	}
	u, err := url.Parse(db)
	if err != nil {
		return "a PostgreSQL database"
	}
	return u.Redacted()
}

// openStore opens the store --db names: a PostgreSQL catalog, which several
// replicas may share, or a SQLite file, which one server holds (it logs the
// tables whose locations clash, which older versions allowed). It returns
// the function that closes the store.
func openStore(ctx context.Context, cfg *serveConfig, jobsQueued *coord.Signal, logger *slog.Logger) (store.Backend, func(), error) {
	if isPostgresURL(cfg.dbPath) {
		db, err := postgres.Open(ctx, cfg.dbPath, postgres.Options{OnJobQueued: jobsQueued.Notify})
		if err != nil {
			return nil, nil, err
		}
		return db, func() { db.Close() }, nil
	}
	if err := makeDir(filepath.Dir(cfg.dbPath), "database", "--db"); err != nil {
		return nil, nil, err
	}
	db, err := sqlite.Open(ctx, cfg.dbPath, sqlite.Options{Synchronous: cfg.synchronous, CommitDurability: cfg.commitDurability,
		OnJobQueued: jobsQueued.Notify})
	if err != nil {
		return nil, nil, err
	}
	conflicts, err := db.LocationConflicts(ctx)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	for _, c := range conflicts {
		logger.Warn("two tables share files: their locations are the same or one lies inside the other; dropping either keeps the data, drop or re-register one of them",
			slog.String("table", strings.Join(c.Tables[0], "$")), slog.String("location", c.Locations[0]),
			slog.String("other_table", strings.Join(c.Tables[1], "$")), slog.String("other_location", c.Locations[1]))
	}
	return db, func() { db.Close() }, nil
}
