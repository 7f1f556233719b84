package main

import (
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/lancens/lancens/client"
)

// apiConfig is how the commands that work over the API (import, export)
// reach a server: its URL and an API key, which comes from the
// environment or a file, never from the command line (where ps shows it).
type apiConfig struct {
	url     string
	keyFile string
	key     string
}

// addAPIFlags adds --url and --api-key-file to fs.
func addAPIFlags(fs *flag.FlagSet, getenv func(string) string) *apiConfig {
	cfg := &apiConfig{key: getenv("LANCENS_API_KEY")}
	url := getenv("LANCENS_URL")
	if url == "" {
		url = "http://127.0.0.1:2333"
	}
	fs.StringVar(&cfg.url, "url", url, "base URL of the server: lancens or any server of the Lance Namespace REST API (env LANCENS_URL)")
	fs.StringVar(&cfg.keyFile, "api-key-file", "", "file holding the API key sent as x-api-key; default: the environment variable LANCENS_API_KEY")
	return cfg
}

// connect returns a client of the server cfg names, with its key. Returns
// an error for a bad URL or an unreadable key file.
func (cfg *apiConfig) connect() (*client.Client, error) {
	u, err := url.Parse(cfg.url)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--url %q: want the http(s) base URL of the server, such as http://127.0.0.1:2333", cfg.url)
	}
	key := cfg.key
	if cfg.keyFile != "" {
		b, err := os.ReadFile(cfg.keyFile)
		if err != nil {
			return nil, fmt.Errorf("--api-key-file: %w", err)
		}
		if key = strings.TrimSpace(string(b)); key == "" {
			return nil, fmt.Errorf("--api-key-file %s is empty", cfg.keyFile)
		}
	}
	var opts []client.Option
	if key != "" {
		opts = append(opts, client.WithAPIKey(key))
	}
	return client.New(strings.TrimSuffix(cfg.url, "/"), opts...)
}

// parseTableID reads a table identifier: its namespaces and name joined by
// "$", as the API's paths write them (prod$docs).
func parseTableID(s string) ([]string, error) {
	if s == "" {
		return nil, errors.New("--table is required: the table's namespaces and name joined by $, such as docs or 'prod$docs'")
	}
	id := strings.Split(s, "$")
	for _, name := range id {
		if name == "" {
			return nil, fmt.Errorf("--table %q has an empty name: join the namespaces and the table's name with one $", s)
		}
	}
	return id, nil
}
