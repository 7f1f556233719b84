package conformance

import (
	"slices"

	"github.com/lancens/lancens/store"
)

// versioned declares table "t" and commits versions 1..n on main.
func versioned(t T, tg store.Catalog, n int64) []string {
	t.Helper()
	declare(t, tg, "t")
	for v := int64(1); v <= n; v++ {
		must3(tg.CommitVersion(ctx(t), []string{"t"}, commit(v, "t")))(t)
	}
	return []string{"t"}
}

func (s *suite) tags(t T) {
	Subtest(t, "Lifecycle", func(t T) {
		tg := s.target(t)
		id := versioned(t, tg, 3)
		for _, tc := range []struct {
			name, tag string
			version   int64
			want      store.Code // -1: success
		}{
			{"Create", "v1", 1, -1},
			{"CreateSecond", "rel", 3, -1},
			{"Exists", "v1", 2, store.CodeTableTagAlreadyExists},
			{"MissingVersion", "later", 9, store.CodeTableVersionNotFound},
			{"EmptyName", "", 1, store.CodeInvalidInput},
		} {
			Subtest(t, tc.name, func(t T) {
				txID, err := tg.CreateTag(ctx(t), id, tc.tag, "", tc.version)
				if tc.want >= 0 {
					wantCode(t, err, tc.want)
				} else if err != nil || txID == "" {
					t.Fatalf("create tag: %q %v", txID, err)
				}
			})
		}
		if g := must(tg.GetTag(ctx(t), id, "v1"))(t); g.Version != 1 || g.Branch != "" {
			t.Fatalf("get v1 = %+v", g)
		}
		must(tg.UpdateTag(ctx(t), id, "v1", "", 2))(t)
		if g := must(tg.GetTag(ctx(t), id, "v1"))(t); g.Version != 2 {
			t.Fatalf("updated v1 = %+v", g)
		}
		_, err := tg.UpdateTag(ctx(t), id, "v1", "", 42)
		wantCode(t, err, store.CodeTableVersionNotFound)
		_, err = tg.UpdateTag(ctx(t), id, "nope", "", 1)
		wantCode(t, err, store.CodeTableTagNotFound)
		_, err = tg.GetTag(ctx(t), id, "nope")
		wantCode(t, err, store.CodeTableTagNotFound)

		tags := must3(tg.ListTags(ctx(t), id, store.Page{}))(t)
		if len(tags) != 2 || tags[0].Name != "rel" || tags[0].Version != 3 || tags[1].Name != "v1" || tags[1].Version != 2 {
			t.Fatalf("tags %+v", tags)
		}
		if tags[0].ManifestSize != *commit(3, "t").ManifestSize {
			t.Fatalf("tag manifest size %d, want the version's", tags[0].ManifestSize)
		}
		must(tg.DeleteTag(ctx(t), id, "v1"))(t)
		_, err = tg.DeleteTag(ctx(t), id, "v1")
		wantCode(t, err, store.CodeTableTagNotFound)
		_, _, err = tg.ListTags(ctx(t), []string{"nope"}, store.Page{})
		wantCode(t, err, store.CodeTableNotFound)
	})

	Subtest(t, "Pages", func(t T) {
		tg := s.target(t)
		id := versioned(t, tg, 1)
		want := []string{"a", "b", "c", "d", "e"}
		for _, name := range want {
			must(tg.CreateTag(ctx(t), id, name, "", 1))(t)
		}
		var got []string
		token := ""
		for {
			tags, next, err := tg.ListTags(ctx(t), id, store.Page{Token: token, Limit: 2})
			if err != nil {
				failUnexpected(t, err)
			}
			for _, g := range tags {
				got = append(got, g.Name)
			}
			if next == "" {
				break
			}
			token = next
		}
		if !slices.Equal(got, want) {
			t.Fatalf("paged tags %q", got)
		}
	})
}

func (s *suite) branches(t T) {
	Subtest(t, "Lifecycle", func(t T) {
		tg := s.target(t)
		id := versioned(t, tg, 3)
		two := int64(2)
		must(tg.CreateBranch(ctx(t), id, "dev", "", &two))(t)
		must(tg.CreateBranch(ctx(t), id, "exp", "", nil))(t)

		for _, tc := range []struct {
			name, branch, from string
			fromVersion        *int64
			want               store.Code
		}{
			{"Exists", "dev", "", nil, store.CodeTableBranchAlreadyExists},
			{"Main", "main", "", nil, store.CodeTableBranchAlreadyExists},
			{"MissingSource", "x", "nope", nil, store.CodeInvalidInput},
			{"MissingVersion", "x", "", ptr(int64(9)), store.CodeInvalidInput},
			{"ZeroVersion", "x", "", ptr(int64(0)), store.CodeInvalidInput},
			{"DotDot", "a..b", "", nil, store.CodeInvalidInput},
		} {
			Subtest(t, tc.name, func(t T) {
				_, err := tg.CreateBranch(ctx(t), id, tc.branch, tc.from, tc.fromVersion)
				wantCode(t, err, tc.want)
			})
		}

		// A branch's chain starts at its fork version, then goes on by one.
		_, _, err := tg.CommitVersion(ctx(t), id, withBranch(commit(3, "t-dev"), "dev"))
		wantCode(t, err, store.CodeConcurrentModification)
		must3(tg.CommitVersion(ctx(t), id, withBranch(commit(2, "t-dev"), "dev")))(t)
		must3(tg.CommitVersion(ctx(t), id, withBranch(commit(3, "t-dev"), "dev")))(t)
		dev := must3(tg.ListVersions(ctx(t), id, "dev", false, store.Page{}))(t)
		if got := versionNumbers(dev); !slices.Equal(got, []int64{2, 3}) {
			t.Fatalf("dev versions %v", got)
		}
		main := must3(tg.ListVersions(ctx(t), id, "", false, store.Page{}))(t)
		if got := versionNumbers(main); !slices.Equal(got, []int64{1, 2, 3}) {
			t.Fatalf("main versions %v after branch commits", got)
		}
		three := int64(3)
		if v := must(tg.DescribeVersion(ctx(t), id, "dev", &three))(t); v.ManifestPath != commit(3, "t-dev").StagedPath {
			t.Fatalf("dev v3 is %q", v.ManifestPath)
		}
		// Branch from a branch; tags can point into branches.
		must(tg.CreateBranch(ctx(t), id, "dev2", "dev", nil))(t)
		must(tg.CreateTag(ctx(t), id, "on-dev", "dev", 3))(t)
		if g := must(tg.GetTag(ctx(t), id, "on-dev"))(t); g.Branch != "dev" || g.Version != 3 {
			t.Fatalf("tag on dev = %+v", g)
		}
		_, err = tg.CreateTag(ctx(t), id, "bad", "nope", 1)
		wantCode(t, err, store.CodeTableBranchNotFound)

		branches := must3(tg.ListBranches(ctx(t), id, store.Page{}))(t)
		var names []string
		for _, b := range branches {
			names = append(names, b.Name)
		}
		if !slices.Equal(names, []string{"dev", "dev2", "exp"}) {
			t.Fatalf("branches %q", names)
		}
		if b := branches[0]; b.ParentBranch != "" || b.ParentVersion != 2 || b.CreatedAt.IsZero() {
			t.Fatalf("dev = %+v", b)
		}
		if b := branches[1]; b.ParentBranch != "dev" || b.ParentVersion != 3 {
			t.Fatalf("dev2 = %+v", b)
		}
		if b := branches[2]; b.ParentVersion != 3 {
			t.Fatalf("exp forked at %d, want main's latest 3", b.ParentVersion)
		}

		_, err = tg.DeleteBranch(ctx(t), id, "dev")
		wantCode(t, err, store.CodeInvalidInput) // dev2 forks from it
		must(tg.DeleteBranch(ctx(t), id, "dev2"))(t)
		must(tg.DeleteBranch(ctx(t), id, "dev"))(t)
		_, err = tg.DeleteBranch(ctx(t), id, "dev")
		wantCode(t, err, store.CodeTableBranchNotFound)
		_, err = tg.GetTag(ctx(t), id, "on-dev")
		wantCode(t, err, store.CodeTableTagNotFound)
		_, _, err = tg.ListVersions(ctx(t), id, "dev", false, store.Page{})
		wantCode(t, err, store.CodeTableBranchNotFound)
	})
}

func withBranch(c store.VersionCommit, b string) store.VersionCommit {
	c.Branch = b
	return c
}

func ptr[T any](v T) *T { return &v }

func (s *suite) transactions(t T) {
	tg := s.target(t)
	declare(t, tg, "t")
	_, txID, err := tg.CommitVersion(ctx(t), []string{"t"}, commit(1, "t"))
	if err != nil {
		failUnexpected(t, err)
	}
	tx := must(tg.DescribeTransaction(ctx(t), []string{txID}))(t)
	if tx.Status != store.TxSucceeded || tx.Properties["version"] != "1" {
		t.Fatalf("commit transaction %+v", tx)
	}
	// A table identifier and a version name the transaction of that commit.
	byVersion := must(tg.DescribeTransaction(ctx(t), []string{"t", "1"}))(t)
	if byVersion.Properties["version"] != "1" {
		t.Fatalf("transaction by version %+v", byVersion)
	}
	for _, id := range [][]string{{"no-such-transaction"}, {"t", "99"}, {"nope", "1"}} {
		_, err := tg.DescribeTransaction(ctx(t), id)
		wantCode(t, err, store.CodeTransactionNotFound)
	}

	running := store.TxRunning
	set := func(key, value string, mode store.PropertyMode) store.TransactionAction {
		return store.TransactionAction{SetProperty: &store.PropertyChange{Key: key, Value: value, Mode: mode}}
	}
	unset := func(key string, mode store.PropertyMode) store.TransactionAction {
		return store.TransactionAction{Unset: &store.PropertyChange{Key: key, Mode: mode}}
	}
	got := must(tg.AlterTransaction(ctx(t), []string{txID}, []store.TransactionAction{
		{SetStatus: &running}, set("note", "hello", store.PropertyOverwrite), set("note", "ignored", store.PropertySkip),
	}))(t)
	if got.Status != store.TxRunning || got.Properties["note"] != "hello" {
		t.Fatalf("after alter: %+v", got)
	}
	for _, tc := range []struct {
		name   string
		action store.TransactionAction
		want   store.Code
	}{
		{"SetFailOnExisting", set("note", "x", store.PropertyFail), store.CodeConcurrentModification},
		{"UnsetFailOnMissing", unset("absent", store.PropertyFail), store.CodeInvalidInput},
	} {
		Subtest(t, tc.name, func(t T) {
			// The good first action must not apply when the second fails.
			_, err := tg.AlterTransaction(ctx(t), []string{txID}, []store.TransactionAction{set("partial", "1", store.PropertyOverwrite), tc.action})
			wantCode(t, err, tc.want)
			if p := must(tg.DescribeTransaction(ctx(t), []string{txID}))(t).Properties; p["partial"] != "" {
				t.Fatalf("a failed alteration applied part of its actions")
			}
		})
	}
	got = must(tg.AlterTransaction(ctx(t), []string{txID}, []store.TransactionAction{unset("note", store.PropertySkip), unset("absent", store.PropertySkip)}))(t)
	if _, ok := got.Properties["note"]; ok {
		t.Fatalf("unset left the property")
	}
	_, err = tg.AlterTransaction(ctx(t), []string{"no-such-transaction"}, []store.TransactionAction{{SetStatus: &running}})
	wantCode(t, err, store.CodeTransactionNotFound)
}
