package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"math"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lancens/lancens/client"
	"github.com/lancens/lancens/internal/apitest"
	"github.com/lancens/lancens/server"
	"github.com/lancens/lancens/store"
)

// syncBuffer is a bytes.Buffer safe for one writer and one reader at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// logRecords parses a JSON log.
func logRecords(t *testing.T, log string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(log), "\n") {
		if line == "" {
			continue
		}
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q is not JSON: %v", line, err)
		}
		out = append(out, rec)
	}
	return out
}

// get sends a GET with the given headers and returns the status and body.
func get(t *testing.T, c *http.Client, url string, header http.Header) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header = header
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, body
}

// TestVersion checks `lancens version` and the version in the start-up log.
func TestVersion(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), []string{"version"}, func(string) string { return "" }, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "lancens ") || !strings.Contains(out.String(), "go1.") {
		t.Fatalf("version printed %q", out.String())
	}
	log := &syncBuffer{}
	_, stop := startServeLogging(t, log, "--log-format", "json")
	stop()
	for _, rec := range logRecords(t, log.String()) {
		if rec["msg"] == "listening" {
			if v, _ := rec["version"].(string); v == "" {
				t.Fatalf("the start-up log has no version: %v", rec)
			}
			return
		}
	}
	t.Fatalf("no start-up log line in\n%s", log)
}

// TestOperationalEndpoints checks, on a server started with --api-key, that
// the probes answer without credentials, that /metrics wants them and lists
// the request counter after a request, and that --metrics-addr serves the
// metrics on a listener of their own, without credentials.
func TestOperationalEndpoints(t *testing.T) {
	addr, _ := startServe(t, "--api-key", "k")
	base := "http://" + addr
	key := http.Header{"X-Api-Key": {"k"}}
	for _, path := range []string{"/healthz", "/readyz"} {
		if status, body := get(t, http.DefaultClient, base+path, nil); status != 200 {
			t.Fatalf("%s without credentials: %d %s", path, status, body)
		}
	}
	if status, body := get(t, http.DefaultClient, base+"/metrics", nil); status != 401 || apitest.ErrorCode(body) != int(store.CodeUnauthenticated) {
		t.Fatalf("/metrics without credentials: %d %s", status, body)
	}
	get(t, http.DefaultClient, base+"/v1/namespace/%24/list", key)
	status, body := get(t, http.DefaultClient, base+"/metrics", key)
	if status != 200 || !strings.Contains(string(body), `lancens_http_requests_total{code="200",method="GET",route="ListNamespaces"} 1`) {
		t.Fatalf("/metrics: %d\n%.3000s", status, body)
	}

	log := &syncBuffer{}
	addr, stop := startServeLogging(t, log, "--api-key", "k", "--metrics-addr", "127.0.0.1:0", "--log-format", "json")
	var metricsAddr string
	for _, rec := range logRecords(t, log.String()) {
		if rec["msg"] == "listening" {
			metricsAddr, _ = rec["metrics_addr"].(string)
		}
	}
	if metricsAddr == "" {
		t.Fatalf("no metrics_addr in the start-up log:\n%s", log)
	}
	get(t, http.DefaultClient, "http://"+addr+"/v1/namespace/%24/list", key)
	if status, body := get(t, http.DefaultClient, "http://"+metricsAddr+"/metrics", nil); status != 200 || !strings.Contains(string(body), "lancens_http_requests_total") {
		t.Fatalf("--metrics-addr /metrics: %d %.500s", status, body)
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		if status, body := get(t, http.DefaultClient, "http://"+metricsAddr+path, nil); status != 200 {
			t.Fatalf("--metrics-addr %s: %d %s", path, status, body)
		}
	}
	if status, _ := get(t, http.DefaultClient, "http://"+addr+"/metrics", key); status != http.StatusNotFound {
		t.Fatalf("/metrics on --addr with --metrics-addr: %d, want 404", status)
	}
	if _, err := stop(); err != nil {
		t.Fatal(err)
	}
}

// TestLimitAndListenerFlags checks the parsing of the body limits and the
// other flags of this file, with their environment variables.
func TestLimitAndListenerFlags(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		env     map[string]string
		wantErr bool
		check   func(*serveConfig) bool
	}{
		{"Defaults", nil, nil, false, func(c *serveConfig) bool {
			return c.maxJSONBody == server.DefaultMaxJSONBody && c.maxArrowBody == server.DefaultMaxArrowBody &&
				c.maxArrowDecodedBytes == server.DefaultMaxArrowDecodedBytes && c.maxArrowRows == server.DefaultMaxArrowRows &&
				c.metricsAddr == "" && len(c.corsOrigins) == 0 && c.tlsCert == "" &&
				c.decodeBudget >= 64<<20 && c.decodeBudget%(1<<20) == 0 && c.maxFilterBytes == server.DefaultMaxFilterBytes &&
				c.memoryLimit > c.decodeBudget
		}},
		{"MemoryFlags", []string{"--decode-budget", "512MiB", "--max-filter-bytes", "1KiB", "--memory-limit", "2GiB"}, nil, false,
			func(c *serveConfig) bool {
				return c.decodeBudget == 512<<20 && c.maxFilterBytes == 1024 && c.memoryLimit == 2<<30
			}},
		{"MemoryEnv", nil, map[string]string{"LANCENS_DECODE_BUDGET": "1GiB", "LANCENS_MAX_FILTER_BYTES": "300", "LANCENS_MEMORY_LIMIT": "none"}, false,
			func(c *serveConfig) bool {
				return c.decodeBudget == 1<<30 && c.maxFilterBytes == 300 && c.memoryLimit == math.MaxInt64
			}},
		{"GOMEMLIMITKept", nil, map[string]string{"GOMEMLIMIT": "3GiB"}, false, func(c *serveConfig) bool { return c.memoryLimit == 0 }},
		{"MemoryLimitBeatsGOMEMLIMIT", []string{"--memory-limit", "1GiB"}, map[string]string{"GOMEMLIMIT": "3GiB"}, false,
			func(c *serveConfig) bool { return c.memoryLimit == 1<<30 }},
		{"BadMemoryLimit", []string{"--memory-limit", "lots"}, nil, true, nil},
		{"ZeroDecodeBudget", []string{"--decode-budget", "0"}, nil, true, nil},
		{"Flags", []string{"--max-json-body", "1MiB", "--max-arrow-body", "3G", "--max-arrow-decoded-bytes", "4096", "--max-arrow-rows", "5",
			"--metrics-addr", "127.0.0.1:9090", "--cors-origin", "https://a.example", "--cors-origin", "*"}, nil, false,
			func(c *serveConfig) bool {
				return c.maxJSONBody == 1<<20 && c.maxArrowBody == 3<<30 && c.maxArrowDecodedBytes == 4096 && c.maxArrowRows == 5 &&
					c.metricsAddr == "127.0.0.1:9090" && strings.Join(c.corsOrigins, " ") == "https://a.example *"
			}},
		{"Env", nil, map[string]string{"LANCENS_MAX_JSON_BODY": "2kib", "LANCENS_MAX_ARROW_ROWS": "7", "LANCENS_CORS_ORIGINS": "http://x:8080, https://y",
			"LANCENS_TLS_CERT": "c.pem", "LANCENS_TLS_KEY": "k.pem", "LANCENS_METRICS_ADDR": ":9100"}, false,
			func(c *serveConfig) bool {
				return c.maxJSONBody == 2048 && c.maxArrowRows == 7 && len(c.corsOrigins) == 2 && c.tlsCert == "c.pem" && c.tlsKey == "k.pem" && c.metricsAddr == ":9100"
			}},
		{"FlagBeatsEnv", []string{"--max-arrow-body", "1GiB"}, map[string]string{"LANCENS_MAX_ARROW_BODY": "5GiB"}, false,
			func(c *serveConfig) bool { return c.maxArrowBody == 1<<30 }},
		{"ZeroBody", []string{"--max-json-body", "0"}, nil, true, nil},
		{"DecimalUnit", []string{"--max-json-body", "32MB"}, nil, true, nil},
		{"NegativeBody", []string{"--max-arrow-body", "-1"}, nil, true, nil},
		{"Overflow", []string{"--max-arrow-body", "9999999999TiB"}, nil, true, nil},
		{"BadEnvBody", nil, map[string]string{"LANCENS_MAX_ARROW_DECODED_BYTES": "lots"}, true, nil},
		{"ZeroRows", []string{"--max-arrow-rows", "0"}, nil, true, nil},
		{"CertWithoutKey", []string{"--tls-cert", "c.pem"}, nil, true, nil},
		{"KeyWithoutCert", nil, map[string]string{"LANCENS_TLS_KEY": "k.pem"}, true, nil},
		{"OriginWithPath", []string{"--cors-origin", "https://a.example/app"}, nil, true, nil},
		{"OriginWithoutScheme", []string{"--cors-origin", "a.example"}, nil, true, nil},
		{"AddrWithoutPort", []string{"--addr", "localhost"}, nil, true, nil},
		{"AddrBadPort", []string{"--addr", ":http"}, nil, true, nil},
		{"AddrPortTooLarge", []string{"--addr", ":70000"}, nil, true, nil},
		{"MetricsAddrBad", []string{"--metrics-addr", "9090"}, nil, true, nil},
		{"AllowedHosts", []string{"--allowed-host", "lancens.internal", "--addr", "db.example:2333"}, map[string]string{"LANCENS_ALLOWED_HOSTS": "a.example, b.example"}, false,
			func(c *serveConfig) bool {
				return strings.Join(listenHosts(c), " ") == "a.example b.example lancens.internal db.example"
			}},
		{"ConnectionAndRateDefaults", nil, nil, false, func(c *serveConfig) bool {
			return c.maxConnections == defaultMaxConnections && c.minBodyRate == server.DefaultMinBodyRate
		}},
		{"ConnectionAndRate", []string{"--max-connections", "10", "--min-body-rate", "0"}, map[string]string{"LANCENS_MIN_BODY_RATE": "64KiB"}, false,
			func(c *serveConfig) bool {
				return c.maxConnections == 10 && c.minBodyRate == 0 && bodyRate(c.minBodyRate) < 0
			}},
		{"RateEnv", nil, map[string]string{"LANCENS_MIN_BODY_RATE": "64KiB", "LANCENS_MAX_CONNECTIONS": "5"}, false,
			func(c *serveConfig) bool { return c.minBodyRate == 64<<10 && c.maxConnections == 5 }},
		{"ZeroConnections", []string{"--max-connections", "0"}, nil, true, nil},
		{"BadRate", []string{"--min-body-rate", "fast"}, nil, true, nil},
		{"AllowedHostWithPort", []string{"--allowed-host", "lancens.internal:2333"}, nil, true, nil},
		{"AllowedHostURL", []string{"--allowed-host", "http://lancens.internal"}, nil, true, nil},
		{"AllowedHostEmpty", []string{"--allowed-host", ""}, nil, true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := parseServeFlags(tc.args, func(k string) string { return tc.env[k] }, io.Discard)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want error: %v", err, tc.wantErr)
			}
			if err == nil && !tc.check(cfg) {
				t.Fatalf("parsed %+v", cfg)
			}
		})
	}
}

// TestLargeJSONBody sends a 64 MiB JSON body to a server with the default
// limits, with and without a Content-Length: both answer 413 with code 13,
// and nothing is created.
func TestLargeJSONBody(t *testing.T) {
	addr, _ := startServe(t)
	body := append([]byte(`{"properties":{"k":"`), bytes.Repeat([]byte("x"), 64<<20)...)
	body = append(body, `"}}`...)
	for _, tc := range []struct {
		name  string
		chunk bool
	}{{"ContentLength", false}, {"Chunked", true}} {
		t.Run(tc.name, func(t *testing.T) {
			var rd io.Reader = bytes.NewReader(body)
			if tc.chunk {
				rd = io.MultiReader(rd) // hides the length: sent chunked
			}
			req, err := http.NewRequest("POST", "http://"+addr+"/v1/namespace/big/create", rd)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			out, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != http.StatusRequestEntityTooLarge || apitest.ErrorCode(out) != int(store.CodeInvalidInput) {
				t.Fatalf("64 MiB body: %d %s, want 413 code 13", res.StatusCode, out)
			}
		})
	}
	req, _ := http.NewRequest("POST", "http://"+addr+"/v1/namespace/big/exists", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNotFound {
		t.Fatalf("after the refused bodies the namespace exists: %d", res.StatusCode)
	}
}

// TestStartupChecks checks the safe start-up behaviour: a bad or busy
// --addr stops serve before the database is created, without logging
// errors of the job runner; a server on an address other machines can
// reach without API keys warns how to set them, and no other does.
func TestStartupChecks(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, tc := range []struct{ name, addr string }{
		{"BadAddr", "localhost:port"},
		{"BusyAddr", busy.Addr().String()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			db := filepath.Join(dir, "data", "lancens.db")
			log := &syncBuffer{}
			err := run(context.Background(), []string{"serve", "--addr", tc.addr, "--db", db, "--warehouse", filepath.Join(dir, "wh"), "--log-format", "json"},
				func(string) string { return "" }, io.Discard, log)
			if err == nil {
				t.Fatal("serve started")
			}
			if _, err := os.Stat(filepath.Dir(db)); !os.IsNotExist(err) {
				t.Fatalf("the database directory was created before the address was checked: %v", err)
			}
			for _, rec := range logRecords(t, log.String()) {
				if rec["level"] == "ERROR" {
					t.Fatalf("a start-up failure logged an error: %v", rec)
				}
			}
		})
	}

	warned := func(args ...string) bool {
		log := &syncBuffer{}
		_, stop := startServeLogging(t, log, append(args, "--log-format", "json")...)
		stop()
		for _, rec := range logRecords(t, log.String()) {
			if msg, _ := rec["msg"].(string); rec["level"] == "WARN" && strings.Contains(msg, "--api-key") && strings.Contains(msg, "LANCENS_API_KEYS") {
				return true
			}
		}
		return false
	}
	if !warned("--addr", "0.0.0.0:0") {
		t.Error("no warning on every interface without API keys")
	}
	if warned("--addr", "0.0.0.0:0", "--api-key", "k") {
		t.Error("a warning on every interface with an API key")
	}
	if warned() {
		t.Error("a warning on loopback without API keys")
	}
}

// TestServeUnwritableDirectories starts serve with a database directory or
// a warehouse it cannot create or write to: it refuses with
// ServiceUnavailable (17), saying so. As root, the server runs as nobody
// (see TestServeReadOnly).
func TestServeUnwritableDirectories(t *testing.T) {
	const nobody = 65534
	for _, tc := range []struct{ name, db, wh string }{
		{"DatabaseDirectoryUncreatable", "locked/db/lancens.db", "wh"},
		{"WarehouseUncreatable", "db/lancens.db", "locked/wh"},
		{"WarehouseUnwritable", "db/lancens.db", "locked"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			locked := filepath.Join(base, "locked")
			for _, d := range []string{base, locked, filepath.Join(base, "db")} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
				if os.Geteuid() == 0 {
					os.Chown(d, nobody, nobody)
				}
			}
			if os.Geteuid() == 0 {
				os.Chown(locked, 0, 0)
			}
			if err := os.Chmod(locked, 0o555); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.Chmod(locked, 0o755) })
			args := []string{"serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(base, tc.db), "--warehouse", filepath.Join(base, tc.wh)}
			var code int
			if os.Geteuid() == 0 {
				code = serveAsNobody(t, base, args, nobody)
			} else {
				err := run(context.Background(), args, func(string) string { return "" }, io.Discard, io.Discard)
				t.Logf("serve: %v", err)
				code = int(store.ErrorCode(err))
			}
			if code != int(store.CodeServiceUnavailable) {
				t.Fatalf("serve with an unwritable directory ended with code %d, want %d", code, store.CodeServiceUnavailable)
			}
		})
	}
}

// selfSigned writes a new self-signed certificate for 127.0.0.1 and its key
// to certFile and keyFile and returns the certificate.
func selfSigned(t *testing.T, certFile, keyFile string, serial int64) *x509.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "lancens test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

// servedSerial returns the serial number of the certificate addr presents.
func servedSerial(t *testing.T, addr string) int64 {
	t.Helper()
	conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0].SerialNumber.Int64()
}

// TestTLS serves HTTPS with a self-signed pair made in the test, checks that
// a client trusting it is served and a plain-HTTP client is not, then
// replaces the pair and sends SIGHUP: new connections get the new
// certificate. A broken pair on the next SIGHUP leaves the last good one.
func TestTLS(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	first := selfSigned(t, certFile, keyFile, 1)
	log := &syncBuffer{}
	addr, stop := startServeLogging(t, log, "--tls-cert", certFile, "--tls-key", keyFile, "--api-key", "k")
	pool := x509.NewCertPool()
	pool.AddCert(first)
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	if status, body := get(t, c, "https://"+addr+"/healthz", nil); status != 200 {
		t.Fatalf("https /healthz: %d %s", status, body)
	}
	if status, body := get(t, c, "https://"+addr+"/v1/namespace/%24/list", http.Header{"X-Api-Key": {"k"}}); status != 200 {
		t.Fatalf("https list: %d %s", status, body)
	}
	if res, err := http.Get("http://" + addr + "/healthz"); err == nil {
		res.Body.Close()
		if res.StatusCode == 200 {
			t.Fatal("plain HTTP served on a TLS listener")
		}
	}

	selfSigned(t, certFile, keyFile, 2)
	waitSerial := func(want int64) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for servedSerial(t, addr) != want {
			if time.Now().After(deadline) {
				t.Fatalf("still serving certificate %d, want %d; log:\n%s", servedSerial(t, addr), want, log)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	if got := servedSerial(t, addr); got != 1 {
		t.Fatalf("serving certificate %d before SIGHUP, want 1", got)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitSerial(2)

	if err := os.WriteFile(keyFile, []byte("not a key"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(log.String(), "keeping the previous one") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if got := servedSerial(t, addr); got != 2 {
		t.Fatalf("after a broken pair: serving certificate %d, want 2", got)
	}
	if _, err := stop(); err != nil {
		t.Fatal(err)
	}

	// A pair that does not load stops serve before it starts.
	err := run(context.Background(), []string{"serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(dir, "x.db"), "--warehouse", filepath.Join(dir, "wh"),
		"--tls-cert", certFile, "--tls-key", keyFile}, func(string) string { return "" }, io.Discard, io.Discard)
	if err == nil {
		t.Fatal("served with a broken key")
	}
	if _, err := os.Stat(filepath.Join(dir, "x.db")); !os.IsNotExist(err) {
		t.Fatalf("the database was created before the TLS pair was checked: %v", err)
	}
}

// limitRow is a row of the tables TestLimitFlagsReachServer writes.
type limitRow struct {
	ID   int64  `arrow:"id"`
	Text string `arrow:"text"`
}

// TestLimitFlagsReachServer starts serve with small body and Arrow limits
// and checks that each one is enforced: a request over it answers code 13
// (413 for a body over its size), one within it succeeds, and a refused
// insert adds no row.
func TestLimitFlagsReachServer(t *testing.T) {
	ctx := context.Background()
	rows := func(n, textBytes int) client.Data {
		out := make([]limitRow, n)
		for i := range out {
			out[i] = limitRow{int64(i), strings.Repeat("x", textBytes)}
		}
		return client.Structs(out)
	}
	for _, tc := range []struct {
		name       string
		args       []string
		fits       int // rows of textBytes that fit
		over       int // rows of textBytes that do not
		textBytes  int
		wantStatus int
	}{
		{"ArrowBody", []string{"--max-arrow-body", "64KiB"}, 10, 100, 1000, http.StatusRequestEntityTooLarge},
		{"ArrowRows", []string{"--max-arrow-rows", "100"}, 100, 101, 1, http.StatusBadRequest},
		{"ArrowDecodedBytes", []string{"--max-arrow-decoded-bytes", "32KiB"}, 10, 40, 1000, http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, _ := startServe(t, tc.args...)
			c, err := client.New("http://" + addr)
			if err != nil {
				t.Fatal(err)
			}
			tbl := c.Table("t")
			if _, err := tbl.Create(ctx, rows(tc.fits, tc.textBytes), nil); err != nil {
				t.Fatalf("within the limit: %v", err)
			}
			_, err = tbl.Add(ctx, rows(tc.over, tc.textBytes))
			var ce *client.Error
			if !errors.As(err, &ce) || ce.Code() != store.CodeInvalidInput || ce.StatusCode != tc.wantStatus {
				t.Fatalf("over the limit: %v, want %d code 13", err, tc.wantStatus)
			}
			n, err := tbl.CountRows(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			if n != int64(tc.fits) {
				t.Fatalf("%d rows after a refused insert", n)
			}
		})
	}

	addr, _ := startServe(t, "--max-json-body", "1KiB")
	for _, tc := range []struct {
		name string
		size int
		want int
	}{{"JSONBodyFits", 900, http.StatusOK}, {"JSONBodyOver", 2048, http.StatusRequestEntityTooLarge}} {
		t.Run(tc.name, func(t *testing.T) {
			body := `{"properties":{"k":"` + strings.Repeat("x", tc.size) + `"}}`
			res, err := http.Post("http://"+addr+"/v1/namespace/"+tc.name+"/create", "application/json", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			out, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != tc.want || (tc.want != http.StatusOK && apitest.ErrorCode(out) != int(store.CodeInvalidInput)) {
				t.Fatalf("%d-byte JSON body: %d %s, want %d", len(body), res.StatusCode, out, tc.want)
			}
		})
	}
}
