package main

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// kitLocationRoot is a location root for the kit's --location-root mode.
const kitLocationRoot = "s3://lancens-conformance"

// startKitServer runs `lancens serve` in-process with API key key (none
// when empty) and the given flags, and returns its URL; the server stops
// when the test ends.
func startKitServer(t *testing.T, key string, flags ...string) string {
	t.Helper()
	args := append([]string{"--sync", "NORMAL"}, flags...)
	if key != "" {
		args = append(args, "--api-key", key)
	}
	addr, _ := startServe(t, args...)
	return "http://" + addr
}

// summary reads the last line of a kit run: "N passed, M failed, K
// unsupported".
var summary = regexp.MustCompile(`(?m)^(\d+) passed, (\d+) failed, (\d+) unsupported.*$`)

func counts(t *testing.T, out string) (passed, failed, unsupported int) {
	t.Helper()
	m := summary.FindAllStringSubmatch(out, -1)
	if len(m) == 0 {
		t.Fatalf("no summary line in the output:\n%s", out)
	}
	last := m[len(m)-1]
	passed, _ = strconv.Atoi(last[1])
	failed, _ = strconv.Atoi(last[2])
	unsupported, _ = strconv.Atoi(last[3])
	return passed, failed, unsupported
}

// TestConformanceKit runs `lancens conformance --url` against a lancens
// started with its defaults (tables in its local warehouse, no keys): every
// check passes, with no gap (every operation of the spec, materialized
// views included), and the kit leaves nothing behind.
func TestConformanceKit(t *testing.T) {
	u := startKitServer(t, "")
	var out bytes.Buffer
	err := run(t.Context(), []string{"conformance", "--url", u}, func(string) string { return "" }, &out, io.Discard)
	if err != nil {
		t.Fatalf("conformance run: %v\n%s", err, out.String())
	}
	passed, failed, unsupported := counts(t, out.String())
	// Every group of the suite and every operation of the spec ran.
	if failed != 0 || passed < 500 || unsupported != 0 {
		t.Fatalf("%d passed, %d failed, %d unsupported; want no failures, hundreds of passes and no gaps\n%s",
			passed, failed, unsupported, out.String())
	}
	for _, g := range []string{"Namespaces", "Data", "VectorIndexes", "FullTextSearch", "Contract"} {
		if !regexp.MustCompile(`(?m)^\s*` + g + `\s+\d+\s+0\s+`).MatchString(out.String()) {
			t.Errorf("no summary row for group %s:\n%s", g, out.String())
		}
	}
	req, _ := http.NewRequest(http.MethodGet, u+"/v1/namespace/%24/list", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || strings.Contains(string(body), "lancens_conformance_") {
		t.Fatalf("after the run the root lists %d %s; want the kit's namespace gone", res.StatusCode, body)
	}
}

// TestConformanceKitLocationRoot runs the kit's groups that place tables
// with --location-root, against a lancens with an API key that accepts
// that root (--external-root): the server records the locations and
// staged manifests without reading them, and every check passes.
func TestConformanceKitLocationRoot(t *testing.T) {
	u := startKitServer(t, "secret", "--external-root", kitLocationRoot)
	var out bytes.Buffer
	err := run(t.Context(), []string{"conformance", "--url", u, "--api-key", "secret", "--location-root", kitLocationRoot,
		"--only", "Tables,Versions,Batches,Tags,Branches,Transactions,Contract/RegisterTable,Contract/CreateTableVersion,Contract/BatchCommitTables"},
		func(string) string { return "" }, &out, io.Discard)
	if err != nil {
		t.Fatalf("conformance run: %v\n%s", err, out.String())
	}
	if passed, failed, unsupported := counts(t, out.String()); failed != 0 || passed < 60 || unsupported != 0 {
		t.Fatalf("%d passed, %d failed, %d unsupported\n%s", passed, failed, unsupported, out.String())
	}
}

// TestConformanceKitFindsFailures puts a proxy that breaks two answers in
// front of lancens: the kit reports both, with the operation and what it
// expected, and exits with an error.
func TestConformanceKitFindsFailures(t *testing.T) {
	u := startKitServer(t, "k")
	target, _ := url.Parse(u)
	proxy := httputil.NewSingleHostReverseProxy(target)
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasSuffix(r.URL.Path, "/describe") && strings.HasPrefix(r.URL.Path, "/v1/namespace/"):
			// An answer that violates the spec: properties must be strings.
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"properties": {"owner": 5}}`))
		case strings.HasSuffix(r.URL.Path, "/tags/version"):
			// Invalid requests accepted.
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"version": 1}`))
		default:
			proxy.ServeHTTP(w, r)
		}
	}))
	defer broken.Close()
	var out bytes.Buffer
	err := run(t.Context(), []string{"conformance", "--url", broken.URL, "--api-key", "k", "--only", "Contract/DescribeNamespace,Contract/GetTableTagVersion"},
		func(string) string { return "" }, &out, io.Discard)
	if !errors.Is(err, errChecksFailed) {
		t.Fatalf("run returned %v, want errChecksFailed\n%s", err, out.String())
	}
	_, failed, _ := counts(t, out.String())
	text := out.String()
	if failed < 3 || !strings.Contains(text, "FAIL Contract/DescribeNamespace/Valid") || !strings.Contains(text, "violates openapi.yaml") ||
		!strings.Contains(text, "FAIL Contract/GetTableTagVersion/Invalid/MissingRequired/tag") || !strings.Contains(text, "want 400 code 13") {
		t.Fatalf("the report does not name the broken answers:\n%s", text)
	}
}

func TestConformanceKitUsage(t *testing.T) {
	for _, args := range [][]string{
		{"conformance"},
		{"conformance", "--url", "localhost:2333"},
		{"conformance", "--url", "http://x", "extra"},
		{"conformance", "--bogus"},
	} {
		if err := run(t.Context(), args, func(string) string { return "" }, io.Discard, io.Discard); !errors.Is(err, errUsage) {
			t.Errorf("%q: %v, want a usage error", args, err)
		}
	}
	var out bytes.Buffer
	if err := run(t.Context(), []string{"conformance", "--list"}, func(string) string { return "" }, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Namespaces", "FullTextSearch", "Contract", "MergeInsertIntoTable"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("--list does not mention %s:\n%s", want, out.String())
		}
	}
}
