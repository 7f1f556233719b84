package server_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/lancens/lancens/internal/apitest"
	"github.com/lancens/lancens/internal/arrowtest"
	"github.com/lancens/lancens/server"
)

// procStatus returns a memory figure of this process from /proc (VmRSS,
// VmHWM) in bytes, or -1 where /proc is not available.
func procStatus(key string) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), key+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				return -1
			}
			return kb << 10
		}
	}
	return -1
}

// arrowTarget is a route that reads an Arrow body.
type arrowTarget struct {
	name, path string
	header     http.Header
}

func arrowTargets(table string) []arrowTarget {
	h := http.Header{"Content-Type": {"application/vnd.apache.arrow.stream"}}
	sdk := h.Clone()
	sdk.Set("User-Agent", "LanceDB-Node-Client/0.39.0")
	sdk.Set("X-Lancedb-Database", "db")
	return []arrowTarget{
		{"create", "/v1/table/fresh/create", h},
		{"insert", "/v1/table/" + table + "/insert", h},
		{"merge_insert", "/v1/table/" + table + "/merge_insert?on=id&when_matched_update_all=true&when_not_matched_insert_all=true", h},
		{"remote_insert", "/v1/table/" + table + "/insert/", sdk},
	}
}

// TestCraftedArrowBodies sends every crafted body class of issue 9 (sizes
// declared far beyond the bytes sent, decompression bombs, shared or deep
// schemas, corrupt offsets, invalid UTF-8) to every route that reads
// Arrow: each must answer 400 code 13 and change nothing, and the server's
// memory must stay bounded. Before arrowin, several of these bodies ended
// the process with a fatal out-of-memory.
func TestCraftedArrowBodies(t *testing.T) {
	s := apitest.Start(t, apitest.Options{})
	ctx := t.Context()
	table := []string{"t"}
	if _, err := s.Client.CreateTable(ctx, table, arrowtest.HostileSchema,
		[]arrow.RecordBatch{arrowtest.Record(t, arrowtest.HostileSchema, arrowtest.HostileRows)}, nil); err != nil {
		t.Fatal(err)
	}
	bodies := arrowtest.HostileBodies(t)
	runtime.GC()
	rssBefore := procStatus("VmRSS")
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) // restart VmHWM from the current RSS
	var most uint64
	for _, b := range bodies {
		for _, target := range arrowTargets("t") {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			status, out, _ := s.Do(t, http.MethodPost, target.path, target.header, b.Body)
			runtime.ReadMemStats(&after)
			if status != http.StatusBadRequest || apitest.ErrorCode(out) != 13 {
				t.Errorf("%s to %s: got %d %s, want 400 code 13", b.Name, target.name, status, out)
			}
			// Refusing a body costs a small multiple of what it sent (and the
			// server's own fixed costs), never what it declares.
			alloc := after.TotalAlloc - before.TotalAlloc
			most = max(most, alloc)
			if limit := uint64(8*len(b.Body) + 32<<20); alloc > limit {
				t.Errorf("%s to %s: %d bytes allocated (limit %d)", b.Name, target.name, alloc, limit)
			}
		}
	}
	if hwm := procStatus("VmHWM"); rssBefore > 0 && hwm > 0 {
		t.Logf("RSS before %d MiB, peak after %d MiB; at most %d KiB allocated per request",
			rssBefore>>20, hwm>>20, most>>10)
		if hwm-rssBefore > 256<<20 {
			t.Errorf("peak RSS grew by %d MiB, more than 256 MiB", (hwm-rssBefore)>>20)
		}
	}
	assertUnchanged(t, s, table, 1, 3)
	if ok, _ := s.Client.TableExists(ctx, []string{"fresh"}, nil); ok {
		t.Fatal("a refused create left a table")
	}
}

// assertUnchanged checks table's latest version and row count.
func assertUnchanged(t *testing.T, s *apitest.Server, table []string, version, rows int64) {
	t.Helper()
	d, err := s.Client.DescribeTable(t.Context(), table, nil)
	if err != nil {
		t.Fatal(err)
	}
	n, err := s.Client.CountRows(t.Context(), table, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if d.Version == nil || *d.Version != version || n != rows {
		t.Fatalf("table %v is at version %v with %d rows, want version %d with %d rows", table, d.Version, n, version, rows)
	}
}

// TestArrowBodyByteFlips sends 400 valid bodies (plain, LZ4, ZSTD) with 1
// to 4 random bytes changed: each answers 200 (the change left valid data)
// or a 4xx ErrorResponse, never a 5xx, and a refused write changes
// nothing. Before arrowin, 6 of 400 such bodies ended the process.
func TestArrowBodyByteFlips(t *testing.T) {
	s := apitest.Start(t, apitest.Options{})
	ctx := t.Context()
	table := []string{"t"}
	if _, err := s.Client.CreateTable(ctx, table, arrowtest.HostileSchema,
		[]arrow.RecordBatch{arrowtest.Record(t, arrowtest.HostileSchema, arrowtest.HostileRows)}, nil); err != nil {
		t.Fatal(err)
	}
	templates := arrowtest.HostileTemplates(t)
	names := []string{"plain", "lz4", "zstd"}
	targets := arrowTargets("t")
	rng := rand.New(rand.NewPCG(9, 400))
	version, rows := int64(1), int64(3)
	refused := 0
	for i := range 400 {
		body := arrowtest.Flip(templates[names[i%3]], rng)
		target := targets[i%len(targets)]
		if target.name == "create" {
			target.path = fmt.Sprintf("/v1/table/fresh%d/create", i)
		}
		status, out, _ := s.Do(t, http.MethodPost, target.path, target.header, body)
		switch {
		case status >= 500:
			t.Fatalf("flip %d to %s: %d %s", i, target.name, status, out)
		case status != http.StatusOK:
			refused++
			if target.name == "create" {
				if ok, _ := s.Client.TableExists(ctx, []string{fmt.Sprintf("fresh%d", i)}, nil); ok {
					t.Fatalf("flip %d: a refused create left a table", i)
				}
			}
		case target.name != "create":
			var res struct{ Version int64 }
			if err := json.Unmarshal(out, &res); err != nil {
				t.Fatal(err)
			}
			version = res.Version
			rows, _ = s.Client.CountRows(ctx, table, "", nil)
		}
		if target.name != "create" && (status != http.StatusOK || i%25 == 0) {
			assertUnchanged(t, s, table, version, rows)
		}
	}
	t.Logf("%d of 400 flipped bodies refused", refused)
	if refused == 0 {
		t.Fatal("no flipped body was refused: the flips test nothing")
	}
}

// TestArrowBodyTooLarge checks the 413 answers: a body that declares more
// bytes than MaxArrowBody is refused before any is read, as is a JSON
// body over MaxJSONBody, and one found to be larger while reading. Each
// message names the serve flag that sets the limit.
func TestArrowBodyTooLarge(t *testing.T) {
	s := apitest.Start(t, apitest.Options{})
	addr := strings.TrimPrefix(s.URL, "http://")
	namesFlag := func(t *testing.T, body []byte, flag string) {
		t.Helper()
		if !bytes.Contains(body, []byte(flag)) {
			t.Errorf("the message does not name %s: %s", flag, body)
		}
	}
	for _, tc := range []struct {
		name, path, contentType, flag string
		length                        int64
	}{
		{"arrow", "/v1/table/t/create", "application/vnd.apache.arrow.stream", "--max-arrow-body", 2 << 30},
		{"json", "/v1/namespace/n/create", "application/json", "--max-json-body", 33 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body, err := declaredPOST(addr, tc.path, tc.contentType, tc.length)
			if err != nil {
				t.Fatal(err)
			}
			if status != http.StatusRequestEntityTooLarge || apitest.ErrorCode(body) != 13 {
				t.Fatalf("got %d %s, want 413 code 13", status, body)
			}
			namesFlag(t, body, tc.flag)
		})
	}
	t.Run("json_chunked", func(t *testing.T) {
		big := bytes.Repeat([]byte(" "), 33<<20)
		req, err := http.NewRequest(http.MethodPost, s.URL+"/v1/namespace/n/create", bytes.NewReader(big))
		if err != nil {
			t.Fatal(err)
		}
		req.ContentLength = -1 // chunked: the size shows only while reading
		req.Header.Set("Content-Type", "application/json")
		res, err := s.HTTP.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		out := new(bytes.Buffer)
		_, _ = out.ReadFrom(res.Body)
		if res.StatusCode != http.StatusRequestEntityTooLarge || apitest.ErrorCode(out.Bytes()) != 13 {
			t.Fatalf("got %d %s, want 413 code 13", res.StatusCode, out)
		}
		namesFlag(t, out.Bytes(), "--max-json-body")
	})
	if ok, _ := s.Client.NamespaceExists(t.Context(), []string{"n"}); ok {
		t.Fatal("a refused create left a namespace")
	}
	// An Arrow body sent without a Content-Length shows its size only in
	// the stream: one over MaxArrowBody is as much a 413.
	t.Run("arrow_chunked", func(t *testing.T) {
		small := apitest.Start(t, apitest.Options{Tune: func(c *server.Config) { c.MaxArrowBody = 1 << 10 }})
		rows := make([]string, 200)
		for i := range rows {
			rows[i] = fmt.Sprintf(`{"id":%d,"name":"row %d"}`, i, i)
		}
		body := arrowtest.Stream(t, arrowtest.HostileSchema,
			[]arrow.RecordBatch{arrowtest.Record(t, arrowtest.HostileSchema, "["+strings.Join(rows, ",")+"]")})
		req, err := http.NewRequest(http.MethodPost, small.URL+"/v1/table/t/create", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.ContentLength = -1
		req.Header.Set("Content-Type", "application/vnd.apache.arrow.stream")
		res, err := small.HTTP.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		out := new(bytes.Buffer)
		_, _ = out.ReadFrom(res.Body)
		if res.StatusCode != http.StatusRequestEntityTooLarge || apitest.ErrorCode(out.Bytes()) != 13 {
			t.Fatalf("%d-byte Arrow body over a 1 KiB limit: %d %s, want 413 code 13", len(body), res.StatusCode, out)
		}
		namesFlag(t, out.Bytes(), "--max-arrow-body")
		if ok, _ := small.Client.TableExists(t.Context(), []string{"t"}, nil); ok {
			t.Fatal("a refused create left a table")
		}
	})
}

// declaredPOST sends only the headers of a POST whose Content-Length is
// length and returns the answer.
func declaredPOST(addr, path, contentType string, length int64) (int, []byte, error) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return 0, nil, err
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n", path, contentType, length)
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	out := new(bytes.Buffer)
	_, err = out.ReadFrom(res.Body)
	return res.StatusCode, out.Bytes(), err
}

// TestZstdBodyFromArrowWriter inserts what arrow-go's own writer makes with
// ipc.WithZstd(): 5,000 zero vectors, a 472-byte body of 640 KB. Before
// arrowin's unzstd grew its room on every kind of "out of room" the
// decoder reports, it answered 400 "output bigger than max block size".
func TestZstdBodyFromArrowWriter(t *testing.T) {
	s := apitest.Start(t, apitest.Options{})
	one := arrowtest.ZeroVectors(1, 32)
	table := []string{"vectors"}
	if _, err := s.Client.CreateTable(t.Context(), table, one.Schema(), []arrow.RecordBatch{one}, nil); err != nil {
		t.Fatal(err)
	}
	rec := arrowtest.ZeroVectors(5_000, 32)
	body := arrowtest.Stream(t, rec.Schema(), []arrow.RecordBatch{rec}, ipc.WithZstd())
	h := http.Header{"Content-Type": {"application/vnd.apache.arrow.stream"}}
	status, out, _ := s.Do(t, http.MethodPost, "/v1/table/vectors/insert", h, body)
	if status != http.StatusOK {
		t.Fatalf("a %d-byte ZSTD body of 5,000 vectors: %d %s", len(body), status, out)
	}
	assertUnchanged(t, s, table, 2, 5_001)
}
