package conformance

import (
	"encoding/json"
	"errors"
	"slices"

	"github.com/lancens/lancens/store"
)

// datasetIndexesTarget is a target that keeps the records of the indexes of
// Lance datasets, with the job queue their builds go through.
type datasetIndexesTarget interface {
	store.Catalog
	store.Jobs
	store.DatasetIndexes
}

// claimBuild claims the queued JobBuildIndex of transaction txID, finishing
// as succeeded the other build jobs it claims first (left by earlier cases
// in a store the cases share).
func claimBuild(t T, tg datasetIndexesTarget, txID string) *store.Job {
	t.Helper()
	for {
		job := must(tg.ClaimJob(ctx(t), store.JobBuildIndex))(t)
		if job == nil {
			t.Fatalf("the build of transaction %s was not there to claim", txID)
		}
		if job.TransactionID == txID {
			return job
		}
		noErr(t, tg.FinishJob(ctx(t), job.TransactionID, nil))
	}
}

func (s *suite) datasetIndexes(t T) {
	setup := func(t T) (datasetIndexesTarget, []string, *store.Table) {
		tg := implementing[datasetIndexesTarget](t, s.target(t), "DatasetIndexes")
		id := []string{"t"}
		table := must3(tg.DeclareTable(ctx(t), id, store.TableDeclaration{Location: remote("indexes/t.lance")}))(t)
		return tg, id, table
	}
	building := func(name, uuid string) store.DatasetIndex {
		return store.DatasetIndex{UUID: uuid, Name: name, Type: store.IndexIVFPQ, Status: store.IndexBuilding, Definition: `{"column":"v"}`}
	}
	names := func(t T, tg datasetIndexesTarget, id []string) []string {
		t.Helper()
		var out []string
		for _, ix := range must(tg.ListDatasetIndexes(ctx(t), id))(t) {
			out = append(out, ix.Name+":"+ix.Status)
		}
		return out
	}

	Subtest(t, "Lifecycle", func(t T) {
		tg, id, table := setup(t)
		uuid := "6b0f6c2e-0000-4000-8000-000000000001"
		txID, replaced, err := tg.CreateDatasetIndex(ctx(t), id, building("v_idx", uuid), false, map[string]string{"index": "v_idx"})
		noErr(t, err)
		if replaced != nil {
			t.Fatalf("a new index replaced %+v", replaced)
		}
		if tx := status(t, tg, txID); tx.Status != store.TxQueued || tx.Properties["index"] != "v_idx" {
			t.Fatalf("the build is %+v, want Queued with the given properties", tx)
		}
		job := claimBuild(t, tg, txID)
		var payload store.BuildIndex
		if err := json.Unmarshal(job.Payload, &payload); err != nil || payload != (store.BuildIndex{TableUUID: table.UUID, IndexUUID: uuid}) {
			t.Fatalf("build payload %s (%v), want table %s and index %s", job.Payload, err, table.UUID, uuid)
		}
		_, _, err = tg.CreateDatasetIndex(ctx(t), id, building("v_idx", "6b0f6c2e-0000-4000-8000-000000000002"), false, nil)
		wantCode(t, err, store.CodeTableIndexAlreadyExists)

		gotID, ix, err := tg.FindDatasetIndex(ctx(t), uuid)
		noErr(t, err)
		if !slices.Equal(gotID, id) || ix.Name != "v_idx" || ix.Status != store.IndexBuilding || ix.BuiltVersion != nil || ix.Build != "" ||
			ix.Definition != `{"column":"v"}` || ix.Type != store.IndexIVFPQ {
			t.Fatalf("found %v %+v", gotID, ix)
		}
		noErr(t, tg.FinishDatasetIndex(ctx(t), uuid, 3, `{"files":["a"]}`))
		noErr(t, tg.FinishJob(ctx(t), txID, nil))
		ix = &must(tg.ListDatasetIndexes(ctx(t), id))(t)[0]
		if ix.Status != store.IndexSucceeded || ix.BuiltVersion == nil || *ix.BuiltVersion != 3 || ix.Build != `{"files":["a"]}` {
			t.Fatalf("built index %+v, want SUCCEEDED at version 3 with its build", ix)
		}

		// A rebuild keeps the version the index exists from.
		txID = must(tg.RebuildDatasetIndex(ctx(t), id, uuid, nil))(t)
		if got := names(t, tg, id); !slices.Equal(got, []string{"v_idx:BUILDING"}) {
			t.Fatalf("indexes while rebuilding %q", got)
		}
		claimBuild(t, tg, txID)
		noErr(t, tg.FinishDatasetIndex(ctx(t), uuid, 5, `{"files":["b"]}`))
		noErr(t, tg.FinishJob(ctx(t), txID, nil))
		ix = &must(tg.ListDatasetIndexes(ctx(t), id))(t)[0]
		if ix.Status != store.IndexSucceeded || *ix.BuiltVersion != 3 || ix.Build != `{"files":["b"]}` {
			t.Fatalf("rebuilt index %+v, want SUCCEEDED from version 3 with the new build", ix)
		}

		dropTx, dropped, err := tg.DropDatasetIndex(ctx(t), id, "v_idx")
		noErr(t, err)
		if dropped.UUID != uuid || status(t, tg, dropTx).Status != store.TxSucceeded {
			t.Fatalf("dropped %+v", dropped)
		}
		if got := names(t, tg, id); len(got) != 0 {
			t.Fatalf("indexes after the drop %q", got)
		}
		wantCode(t, tg.FinishDatasetIndex(ctx(t), uuid, 6, `{}`), store.CodeTableIndexNotFound)
		_, _, err = tg.FindDatasetIndex(ctx(t), uuid)
		wantCode(t, err, store.CodeTableIndexNotFound)
		_, _, err = tg.DropDatasetIndex(ctx(t), id, "v_idx")
		wantCode(t, err, store.CodeTableIndexNotFound)
		_, err = tg.RebuildDatasetIndex(ctx(t), id, uuid, nil)
		wantCode(t, err, store.CodeTableIndexNotFound)
	})

	// A failed build marks its index FAILED as the job ends; an index
	// whose build failed, or any when asked, is replaced by a new one.
	Subtest(t, "FailureAndReplace", func(t T) {
		tg, id, _ := setup(t)
		first := "6b0f6c2e-0000-4000-8000-000000000011"
		txID, _, err := tg.CreateDatasetIndex(ctx(t), id, building("v_idx", first), false, nil)
		noErr(t, err)
		claimBuild(t, tg, txID)
		noErr(t, tg.FinishJob(ctx(t), txID, errors.New("no vectors")))
		ix := must(tg.ListDatasetIndexes(ctx(t), id))(t)[0]
		if ix.Status != store.IndexFailed || ix.Error != "no vectors" {
			t.Fatalf("index after a failed build %+v, want FAILED with the job's error", ix)
		}
		second := "6b0f6c2e-0000-4000-8000-000000000012"
		_, replaced, err := tg.CreateDatasetIndex(ctx(t), id, building("v_idx", second), false, nil)
		noErr(t, err)
		if replaced == nil || replaced.UUID != first {
			t.Fatalf("replaced %+v, want the failed index", replaced)
		}
		// A synchronous build records a succeeded index and no job.
		built := int64(2)
		third := store.DatasetIndex{UUID: "6b0f6c2e-0000-4000-8000-000000000013", Name: "v_idx", Type: store.IndexBTree,
			Status: store.IndexSucceeded, BuiltVersion: &built, Definition: `{}`, Build: `{"files":[]}`}
		txID, replaced, err = tg.CreateDatasetIndex(ctx(t), id, third, true, nil)
		noErr(t, err)
		if replaced == nil || replaced.UUID != second || status(t, tg, txID).Status != store.TxSucceeded {
			t.Fatalf("replacing: replaced %+v, transaction %+v", replaced, status(t, tg, txID))
		}
		ix = must(tg.ListDatasetIndexes(ctx(t), id))(t)[0]
		if ix.UUID != third.UUID || ix.Status != store.IndexSucceeded || *ix.BuiltVersion != 2 || ix.Type != store.IndexBTree {
			t.Fatalf("index after the replacement %+v", ix)
		}
		// The job of the replaced build fails without touching the new index.
		wantCode(t, tg.FinishDatasetIndex(ctx(t), second, 3, `{}`), store.CodeTableIndexNotFound)
	})

	Subtest(t, "GoWithTheirTable", func(t T) {
		tg, id, _ := setup(t)
		for _, name := range []string{"b", "a"} {
			_, _, err := tg.CreateDatasetIndex(ctx(t), id, building(name, "6b0f6c2e-0000-4000-8000-00000000002"+name), false, nil)
			noErr(t, err)
		}
		if got := names(t, tg, id); !slices.Equal(got, []string{"a:BUILDING", "b:BUILDING"}) {
			t.Fatalf("indexes %q, want a and b by name", got)
		}
		must3(tg.DropTable(ctx(t), id))(t)
		_, err := tg.ListDatasetIndexes(ctx(t), id)
		wantCode(t, err, store.CodeTableNotFound)
		must3(tg.DeclareTable(ctx(t), id, store.TableDeclaration{Location: remote("indexes/t2.lance")}))(t)
		if got := names(t, tg, id); len(got) != 0 {
			t.Fatalf("a new table of the old name has indexes %q", got)
		}
		_, _, err = tg.CreateDatasetIndex(ctx(t), []string{"missing"}, building("x", "6b0f6c2e-0000-4000-8000-000000000031"), false, nil)
		wantCode(t, err, store.CodeTableNotFound)
	})
}
