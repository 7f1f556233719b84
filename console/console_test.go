package console

import (
	"io/fs"
	"net/http/httptest"
	"path"
	"regexp"
	"strings"
	"testing"
)

func TestHandler(t *testing.T) {
	h := Handler()
	for _, tc := range []struct {
		name, method, path string
		status             int
		contentType        string // prefix
		bodyHas            string
	}{
		{"Index", "GET", "/console/", 200, "text/html", `<script type="module" src="app.js">`},
		{"IndexHead", "HEAD", "/console/", 200, "text/html", ""},
		{"IndexByName", "GET", "/console/index.html", 301, "", ""}, // the file server sends it to the directory
		{"App", "GET", "/console/app.js", 200, "text/javascript", "function route"},
		{"ArrowReader", "GET", "/console/arrow.js", 200, "text/javascript", "export function readArrowStream"},
		{"PCA", "GET", "/console/pca.js", 200, "text/javascript", "export function pca2"},
		{"Style", "GET", "/console/style.css", 200, "text/css", ":root"},
		{"BarePath", "GET", "/console", 301, "", ""},
		{"Missing", "GET", "/console/nope.js", 404, "", ""},
		{"Post", "POST", "/console/", 405, "", ""},
		{"Delete", "DELETE", "/console/app.js", 405, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(tc.method, tc.path, nil))
			if rec.Code != tc.status {
				t.Fatalf("%s %s: got %d, want %d", tc.method, tc.path, rec.Code, tc.status)
			}
			if got := rec.Header().Get("Content-Type"); !strings.HasPrefix(got, tc.contentType) {
				t.Errorf("Content-Type %q, want %q…", got, tc.contentType)
			}
			if !strings.Contains(rec.Body.String(), tc.bodyHas) {
				t.Errorf("body lacks %q", tc.bodyHas)
			}
			if tc.status == 200 {
				if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "connect-src 'self'") {
					t.Errorf("Content-Security-Policy %q does not keep the page to its origin", csp)
				}
				if rec.Header().Get("X-Content-Type-Options") != "nosniff" {
					t.Error("no X-Content-Type-Options: nosniff")
				}
			}
		})
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/console", nil))
	if loc := rec.Header().Get("Location"); loc != Path {
		t.Errorf("bare path redirects to %q, want %q", loc, Path)
	}
}

func TestServes(t *testing.T) {
	for path, want := range map[string]bool{
		"/console": true, "/console/": true, "/console/app.js": true,
		"/consoles": false, "/v1/console/": false, "/": false, "/v1/namespace/console/list": false,
	} {
		if got := Serves(path); got != want {
			t.Errorf("Serves(%q) = %v, want %v", path, got, want)
		}
	}
}

// The console must work without network access: every file it loads is
// embedded, and nothing names another origin.
var (
	absoluteURL  = regexp.MustCompile(`(?i)\b(?:https?:|wss?:|ftp:)//[^\s"'` + "`" + `)]*|["'(]//[a-z0-9]`)
	importPath   = regexp.MustCompile(`(?m)^\s*(?:import|export)\b[^;]*?\bfrom\s+"([^"]+)"|\bimport\s*\(\s*"([^"]+)"`)
	htmlResource = regexp.MustCompile(`\b(?:src|href)="([^"]*)"`)
)

// svgNamespace is a name, not an address: createElementNS needs it and
// nothing fetches it.
const svgNamespace = "http://www.w3.org/2000/svg"

func TestNoNetwork(t *testing.T) {
	files := Files()
	exists := func(name string) bool {
		_, err := fs.Stat(files, name)
		return err == nil
	}
	var modules int
	err := fs.WalkDir(files, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(files, name)
		if err != nil {
			return err
		}
		text := strings.ReplaceAll(string(b), svgNamespace, "")
		if m := absoluteURL.FindString(text); m != "" {
			t.Errorf("%s names another origin: %q", name, m)
		}
		switch path.Ext(name) {
		case ".js":
			modules++
			for _, m := range importPath.FindAllStringSubmatch(text, -1) {
				spec := m[1] + m[2]
				if !strings.HasPrefix(spec, "./") || !exists(path.Join(path.Dir(name), spec)) {
					t.Errorf("%s imports %q, which is not an embedded file", name, spec)
				}
			}
		case ".html":
			for _, m := range htmlResource.FindAllStringSubmatch(text, -1) {
				ref := m[1]
				if strings.HasPrefix(ref, "#") || strings.HasPrefix(ref, "data:") {
					continue
				}
				if !exists(path.Join(path.Dir(name), ref)) {
					t.Errorf("%s loads %q, which is not an embedded file", name, ref)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if modules < 5 || !exists("index.html") {
		t.Fatalf("embedded files are missing: %d modules", modules)
	}
}

func TestNoNetworkCatchesOtherOrigins(t *testing.T) {
	for _, bad := range []string{
		`import x from "https://cdn.example.com/lib.js";`,
		`<script src="//cdn.example.com/x.js">`,
		`fetch("http://example.com/api")`,
	} {
		if absoluteURL.FindString(bad) == "" {
			t.Errorf("the check misses %q", bad)
		}
	}
	if m := importPath.FindStringSubmatch(`import { a } from "https://x/y.js";`); m == nil || m[1] != "https://x/y.js" {
		t.Errorf("the import check misses a remote module: %q", m)
	}
}
