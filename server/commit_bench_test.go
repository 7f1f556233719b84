package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lancens/lancens/coord"
	"github.com/lancens/lancens/internal/cputime"
	"github.com/lancens/lancens/internal/testkit/apitest"
	"github.com/lancens/lancens/lance/manifestname"
	"github.com/lancens/lancens/server"
	"github.com/lancens/lancens/store"
	"github.com/lancens/lancens/store/sqlite"
	"github.com/lancens/lancens/warehouse"
)

// BenchmarkCreateTableVersion times the commit of a LanceDB SDK add in
// namespace mode: POST /v1/table/{id}/version/create with the body and
// headers the SDK sends, served in-process (no network) by a server built
// as `lancens serve --commit-durability process` builds it (SQLite
// catalog in b.TempDir(), a text logger writing nowhere). The manifests
// are staged (the client's work) before the timer starts. Its peer, in
// the same run, is the commit alone (coord.Committer.Commit): the ratio
// request/commit is what the HTTP layer (routing, middleware, validation,
// JSON) costs on top of the commit. Besides the time, each reports the CPU
// time of the process per operation (cpu-ns/op).
func BenchmarkCreateTableVersion(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	d := store.DurabilityProcess
	db, err := sqlite.Open(ctx, filepath.Join(dir, "lancens.db"), sqlite.Options{CommitDurability: d})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	wh, err := warehouse.Open(filepath.Join(dir, "warehouse"))
	if err != nil {
		b.Fatal(err)
	}
	wh.SetCommitDurability(d)
	st, commits := apitest.WithEngine(b, db, wh)
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	services := coord.NewServices(coord.ServicesConfig{Store: st, Committer: commits, Warehouse: wh, Logger: logger})
	srv, err := server.New(server.Config{Store: st, Warehouse: wh, Services: services, Logger: logger})
	if err != nil {
		b.Fatal(err)
	}
	serve := func(path string, body []byte) []byte {
		req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:2333"+path, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "*/*")
		req.Header.Set("Accept-Encoding", "gzip")
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("POST %s: status %d: %s", path, rec.Code, rec.Body)
		}
		return rec.Body.Bytes()
	}
	tables := 0
	// declare declares a new table and returns its name and location.
	declare := func(prefix string) (string, string) {
		tables++
		name := fmt.Sprintf("%s%d", prefix, tables)
		var out struct {
			Location string `json:"location"`
		}
		if err := json.Unmarshal(serve("/v1/table/"+name+"/declare?delimiter=%24", []byte(`{"id":["`+name+`"]}`)), &out); err != nil {
			b.Fatal(err)
		}
		return name, out.Location
	}
	// stage writes the manifests of versions 1..n as the SDK stages them
	// and returns the paths it would commit.
	stage := func(location string, n int) []string {
		vdir := filepath.Join(location, "_versions")
		if err := os.MkdirAll(vdir, 0o755); err != nil {
			b.Fatal(err)
		}
		out := make([]string, n)
		for i := range out {
			p := filepath.Join(vdir, fmt.Sprintf("%s-%08x-0000-4000-8000-000000000000", manifestname.V2.FileName(int64(i+1)), i))
			if err := os.WriteFile(p, bytes.Repeat([]byte("m"), 550), 0o644); err != nil {
				b.Fatal(err)
			}
			out[i] = warehouse.ObjectPath(p)
		}
		return out
	}

	b.Run("request", func(b *testing.B) {
		name, location := declare("req")
		staged := stage(location, b.N)
		path := "/v1/table/" + name + "/version/create?delimiter=%24"
		bodies := make([][]byte, b.N)
		for i := range bodies {
			bodies[i] = fmt.Appendf(nil, `{"id":[%q],"version":%d,"manifest_path":%q,"manifest_size":550,"e_tag":"\"990172-66198a2b91e69-227\"","naming_scheme":"V2"}`,
				name, i+1, staged[i])
		}
		b.ReportAllocs()
		cpu := cputime.Process()
		b.ResetTimer()
		for i := range b.N {
			serve(path, bodies[i])
		}
		b.StopTimer()
		reportCPU(b, cpu)
	})
	b.Run("commit", func(b *testing.B) {
		name, location := declare("commit")
		staged := stage(location, b.N)
		id := []string{name}
		b.ReportAllocs()
		cpu := cputime.Process()
		b.ResetTimer()
		for i := range b.N {
			size := int64(550)
			c := store.VersionCommit{Version: int64(i + 1), StagedPath: staged[i], ManifestSize: &size}
			if _, _, err := commits.Commit(ctx, id, c, manifestname.V2); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		reportCPU(b, cpu)
	})
}

// reportCPU reports the CPU time of the process per operation since it
// stood at start (cpu-ns/op), which a busy machine stretches less than
// the time.
func reportCPU(b *testing.B, start time.Duration) {
	if start >= 0 {
		b.ReportMetric(float64(cputime.Process()-start)/float64(b.N), "cpu-ns/op")
	}
}
