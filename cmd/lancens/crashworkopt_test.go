package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancens/lancens/client"
)

// The managed workers' merge_insert and optimize writes, and the versions
// their checks read (an optimize removes versions).

// mergeInsert sends a merge_insert on id of a few rows of the table (new
// values) and a few new ones; one in three also deletes the rows the
// source does not match that a filter selects. It applies the merge to
// rows and returns the write's answer.
func (w *managedWorker) mergeInsert(ctx context.Context, c *crashConn, r *rand.Rand, rows map[int64]string) (*client.WriteResult, error) {
	val := fmt.Sprintf("merge %d", w.seq)
	src := map[int64]string{}
	ids := slices.Sorted(maps.Keys(rows))
	for range min(len(ids), r.IntN(9)) {
		src[ids[r.IntN(len(ids))]] = val
	}
	for range 1 + r.IntN(4) {
		src[w.nextID] = val
		w.nextID++
	}
	opts := client.MergeInsertOptions{On: []string{"id"}, WhenMatchedUpdateAll: true, WhenNotMatchedInsertAll: true}
	if r.IntN(3) == 0 {
		mod, rem := int64(7+r.IntN(10)), int64(r.IntN(7))
		opts.WhenNotMatchedBySourceDeleteFilter = fmt.Sprintf("id %% %d = %d", mod, rem)
		for id := range rows {
			if _, matched := src[id]; !matched && id%mod == rem {
				delete(rows, id)
			}
		}
	}
	maps.Copy(rows, src)
	return c.c.MergeInsert(ctx, w.id, managedSchema, []arrow.RecordBatch{managedRecord(src)}, opts)
}

// optimize sends an optimize of the worker's table that removes every
// version nothing keeps (older_than_seconds 0): its compaction makes a
// version with the same rows when there are fragments to rewrite, and its
// cleanup removes the versions older than the latest (the compaction's,
// when it made one) that no tag keeps, and their files. rows are the
// latest version's rows. The model forgets the versions the cleanup may
// remove, whatever the outcome (after the restart's check for an optimize
// without an answer). It reports whether the worker goes on: the optimize
// was acknowledged, and the version it left learnt.
func (w *managedWorker) optimize(ctx context.Context, t *testing.T, c *crashConn, srv *crashServer, rows map[int64]string) bool {
	w.forgetUntagged(w.latest)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url+"/v1/table/"+w.id[0]+"/optimize", bytes.NewReader([]byte(`{"older_than_seconds":0}`)))
	if err != nil {
		t.Error(err)
		return false
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.hc.Do(req)
	var did struct {
		VersionsRemoved  int `json:"versions_removed"`
		FragmentsRemoved int `json:"fragments_removed"`
	}
	if err == nil {
		body, rerr := io.ReadAll(resp.Body)
		resp.Body.Close()
		switch {
		case rerr != nil:
			err = rerr // cut off by the kill
		case resp.StatusCode != http.StatusOK:
			t.Errorf("optimize of %q was refused: %d %s", w.id, resp.StatusCode, body)
			return false
		default:
			if jerr := json.Unmarshal(body, &did); jerr != nil {
				t.Errorf("optimize of %q answered %s: %v", w.id, body, jerr)
			}
		}
	}
	switch checkOutcome(t, srv, "optimize", err) {
	case uncertain:
		w.pendingRows, w.optimized = rows, true
		return false
	case refused:
		return false
	}
	w.acked("optimize", 1)
	w.acked("versions removed by optimize", did.VersionsRemoved)
	w.acked("fragments compacted by optimize", did.FragmentsRemoved)
	d, err := c.c.DescribeTable(ctx, w.id, nil)
	switch {
	case err != nil && outcomeOf(err) == uncertain && srv.wasKilled():
		w.pendingRows, w.optimized, w.compacted = rows, true, true
		return false
	case err != nil || d.Version == nil:
		t.Errorf("describe %q after an optimize: %+v %v", w.id, d, err)
		return false
	case *d.Version != w.latest && *d.Version != w.latest+1:
		t.Errorf("optimize of %q made version %d after version %d", w.id, *d.Version, w.latest)
		return false
	}
	w.latest = *d.Version
	w.versions[w.latest] = rows
	w.forgetUntagged(w.latest)
	return true
}

// acked counts n acknowledged writes of a kind (n of a figure of what
// optimizes did).
func (w *managedWorker) acked(kind string, n int) {
	if w.newKinds == nil {
		w.newKinds = map[string]int{}
	}
	w.newKinds[kind] += n
	if !strings.Contains(kind, " by ") {
		w.newAcks += n
	}
}

// addKinds adds counts of writes by kind.
func (s *crashStats) addKinds(kinds map[string]int) {
	if len(kinds) == 0 {
		return
	}
	if s.kinds == nil {
		s.kinds = map[string]int{}
	}
	for k, n := range kinds {
		s.kinds[k] += n
	}
}

// kindsString describes counts of writes by kind.
func kindsString(kinds map[string]int) string {
	if len(kinds) == 0 {
		return ""
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(kinds)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, kinds[k]))
	}
	return "; managed tables' acknowledged writes: " + strings.Join(parts, ", ")
}

// forgetUntagged removes from the model the versions before v that no tag
// keeps: an optimize sent now may remove them.
func (w *managedWorker) forgetUntagged(v int64) {
	tagged := map[int64]bool{}
	for _, tv := range w.tags {
		tagged[tv] = true
	}
	for old := range w.versions {
		if old < v && !tagged[old] {
			delete(w.versions, old)
		}
	}
}

// versionsToCheck returns the versions a check after a restart reads:
// those made since the last check, and a few older ones and tagged ones,
// all the model still has (an optimize may have removed the others).
func (w *managedWorker) versionsToCheck(latest int64) []int64 {
	var out, older []int64
	for v := range w.versions {
		switch {
		case v > w.verified && v <= latest:
			out = append(out, v)
		case v <= w.verified:
			older = append(older, v)
		}
	}
	slices.Sort(out)
	for range min(3, len(older)) {
		out = append(out, older[rand.IntN(len(older))])
	}
	var tagged []int64
	for _, v := range w.tags {
		if _, ok := w.versions[v]; ok {
			tagged = append(tagged, v)
		}
	}
	for range min(3, len(tagged)) {
		out = append(out, tagged[rand.IntN(len(tagged))])
	}
	return out
}
