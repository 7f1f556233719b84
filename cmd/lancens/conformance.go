package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/lancens/lancens/internal/conformance"
	"github.com/lancens/lancens/internal/contract"
	"github.com/lancens/lancens/store"
)

// kitConfig is the configuration of `lancens conformance`.
type kitConfig struct {
	url          string
	apiKey       string
	only         []string
	list         bool
	verbose      bool
	locationRoot string
	timeout      time.Duration
}

func parseKitFlags(args []string, getenv func(string) string, stderr io.Writer) (*kitConfig, error) {
	cfg := &kitConfig{}
	fs := flag.NewFlagSet("lancens conformance", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, `Usage: lancens conformance --url URL [flags]

Runs lancens' conformance suite and the contract checks of openapi.yaml
against any Lance Namespace REST server. Everything happens inside a new
top-level namespace lancens_conformance_<random>, dropped at the end; nothing
else on the server is touched. Capability gaps (HTTP 406, code 0) are
counted apart from failures; the exit status is non-zero when a check failed.

Flags:
`)
		fs.PrintDefaults()
	}
	fs.StringVar(&cfg.url, "url", "", "base URL of the server, e.g. http://localhost:2333 (required)")
	fs.StringVar(&cfg.apiKey, "api-key", getenv("LANCENS_API_KEY"), "API key sent as x-api-key (env LANCENS_API_KEY)")
	only := fs.String("only", "", "comma-separated groups, or Group/Case paths, to run (see --list)")
	fs.BoolVar(&cfg.list, "list", false, "list the groups and the operations the contract checks cover, and exit")
	fs.BoolVar(&cfg.verbose, "verbose", false, "list every case, and every request of failed cases")
	fs.StringVar(&cfg.locationRoot, "location-root", "",
		"URI under which the kit declares and registers its tables, such as s3://lancens-conformance, for a server that records locations and staged manifests without reading them (a lancens server must allow it: --external-root URI); "+
			"by default tables lie where the server puts them, and the kit writes the staged manifests of version commits into their locations when those are local paths (the kit on the server's machine)")
	fs.DurationVar(&cfg.timeout, "timeout", 10*time.Minute, "stop the run after this long")
	if err := fs.Parse(args); err != nil {
		return nil, errUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "unexpected argument %q\n", fs.Arg(0))
		return nil, errUsage
	}
	for _, p := range strings.Split(*only, ",") {
		if p = strings.TrimSpace(p); p != "" {
			cfg.only = append(cfg.only, p)
		}
	}
	if cfg.list {
		return cfg, nil
	}
	u, err := url.Parse(cfg.url)
	if cfg.url == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		fmt.Fprintln(stderr, "--url must be the http(s) base URL of the server")
		return nil, errUsage
	}
	cfg.url = strings.TrimSuffix(cfg.url, "/")
	return cfg, nil
}

// errChecksFailed is returned when the run found failures.
var errChecksFailed = errors.New("conformance checks failed")

// conformanceKit runs `lancens conformance`. It returns errChecksFailed
// (wrapped, with the count) when any check failed, and an error when the
// kit cannot set itself up on the server.
func conformanceKit(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := parseKitFlags(args, getenv, stderr)
	if err != nil {
		return err
	}
	if cfg.list {
		listKit(stdout)
		return nil
	}
	validator, err := contract.NewValidator()
	if err != nil {
		return err
	}
	tr := &contract.Transport{Client: &http.Client{Timeout: 2 * time.Minute}, APIKey: cfg.apiKey, Validator: validator}
	setup, err := conformance.NewHTTPTarget(cfg.url, keyDoer{tr})
	if err != nil {
		return err
	}
	root := "lancens_conformance_" + randomHex(4)
	if _, err := setup.CreateNamespace(ctx, []string{root}, store.ModeCreate, map[string]string{"created_by": "lancens conformance"}); err != nil {
		return fmt.Errorf("create the kit's namespace %s on %s: %w", root, cfg.url, err)
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if _, _, err := setup.DropNamespace(dctx, []string{root}, store.DropSkip, store.DropCascade); err != nil {
			fmt.Fprintf(stderr, "warning: could not drop the kit's namespace %s: %v\n", root, err)
		}
	}()
	fmt.Fprintf(stdout, "lancens conformance: %s, inside namespace %s\n\n", cfg.url, root)

	var cases atomic.Int64
	suite := conformance.Config{
		New: func(t conformance.T) store.Catalog {
			tg, err := conformance.NewHTTPTarget(cfg.url, tr.For(t))
			if err != nil {
				t.Fatalf("client: %v", err)
			}
			ns := []string{root, fmt.Sprintf("c%04d", cases.Add(1))}
			if _, err := tg.CreateNamespace(t.Context(), ns, store.ModeCreate, nil); err != nil {
				if store.ErrorCode(err) == store.CodeUnsupported {
					conformance.Gap(t, "create namespace: %v", err)
				}
				t.Fatalf("create the case's namespace: %v", err)
			}
			t.Cleanup(func() {
				dctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				_, _, _ = setup.DropNamespace(dctx, ns, store.DropSkip, store.DropCascade)
			})
			if cfg.locationRoot == "" {
				return conformance.ScopeLocatedByServer(tg, ns)
			}
			return conformance.Scope(tg, ns, cfg.locationRoot+"/"+strings.Join(ns, "/"))
		},
		Capabilities: conformance.Data(),
		// The groups of the store interfaces the API does not serve
		// (jobs, probes, locks, and those the HTTP target lacks) do not
		// run against a server.
		Groups: conformance.GroupsFor(conformance.Data()),
		Shared: true,
	}
	checks := contract.Config{URL: cfg.url, Transport: tr, Namespace: []string{root, "contract"}}
	if cfg.locationRoot != "" {
		checks.LocationRoot = cfg.locationRoot + "/" + root
	}

	rctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()
	start := time.Now()
	runner := conformance.NewRunner(conformance.RunnerOptions{Only: cfg.only, OnDone: func(r *conformance.Result) {
		conformance.WriteGroupLine(stdout, r)
	}})
	res := runner.Run(rctx, func(t conformance.T) {
		conformance.Run(t, suite)
		if _, err := setup.CreateNamespace(t.Context(), checks.Namespace, store.ModeCreate, nil); err != nil {
			t.Fatalf("create the contract checks' namespace: %v", err)
		}
		contract.Run(t, checks)
	})
	fmt.Fprintln(stdout)
	conformance.WriteReport(stdout, res, cfg.verbose)
	c := res.Count()
	fmt.Fprintf(stdout, "\n%s (%s)\n", c, time.Since(start).Round(time.Millisecond))
	if c.Failed > 0 || res.Status == conformance.Failed {
		return fmt.Errorf("%w: %d failed", errChecksFailed, c.Failed)
	}
	return nil
}

// listKit prints the groups the kit runs and the operations it checks.
func listKit(w io.Writer) {
	fmt.Fprintln(w, "Groups (--only takes their names, or Group/Case paths such as Tables/Rename):")
	for _, g := range conformance.Groups() {
		fmt.Fprintf(w, "  %-16s %s\n", g.Name, g.Doc)
	}
	fmt.Fprintf(w, "  %-16s %s\n", "Contract", "every operation of openapi.yaml: invalid requests answer 400 code 13, the valid one succeeds, every answer matches the spec")
	fmt.Fprintln(w, "\nOperations the contract checks cover (--only Contract/<operation>):")
	ops := contract.Operations()
	for i := 0; i < len(ops); i += 4 {
		fmt.Fprintf(w, "  %s\n", strings.Join(ops[i:min(i+4, len(ops))], ", "))
	}
}

// keyDoer sends the kit's own set-up requests with the API key and no
// checks.
type keyDoer struct{ tr *contract.Transport }

func (d keyDoer) Do(req *http.Request) (*http.Response, error) {
	if d.tr.APIKey != "" {
		req.Header.Set("x-api-key", d.tr.APIKey)
	}
	return d.tr.Client.Do(req)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
